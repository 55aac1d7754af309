// logger.cpp: logs to Herald from C++. HERALD_LOG_STREAM at a few priorities, one record
// with typed fields, then a wait until the server has received all of it.
//
// Build (after `scripts/install-capi.sh PREFIX`), with the CMakeLists.txt beside it:
//   cmake -S examples/cpp -B build -DCMAKE_PREFIX_PATH=PREFIX && cmake --build build
// or by hand:
//   g++ -std=c++17 logger.cpp $(pkg-config --cflags --libs herald) -o logger
// Run, with a server up (`herald serve`) and something watching (`herald tail`, or
// examples/cpp/subscriber.cpp with the same subject):
//   ./logger [URL] [SUBJECT]          defaults: herald://127.0.0.1:7400 DEMO.LOGGER
//
// It sends 4 records on SUBJECT (INFO, WARNING, ERROR, NOTICE; the DEBUG one is below the
// logger's threshold) and exits 0 once the server has acknowledged them, non-zero on any
// failure.
// First, before any standard header: herald.h and herald.hpp stand on their own in C++ (the
// examples' build checks it).
#include "herald.hpp"

#include <chrono>
#include <cstdint>
#include <iostream>
#include <string>

namespace {

constexpr const char *kDefaultUrl = "herald://127.0.0.1:7400";
constexpr const char *kDefaultSubject = "DEMO.LOGGER";
// How long to wait for the server's acknowledgement.
constexpr std::chrono::seconds kFlushTimeout(5);

// Reads an ADC; it stands for work we would rather not do when nobody wants the result.
int read_adc() { return 5120; }

// The record a calibration routine would log: text for people, fields for programs
// (viewers filter and plot them).
herald::Record calibration_record(const std::string &subject) {
  herald::Record record(HERALD_KIND_LOG, subject);
  record.priority(HERALD_NOTICE)
      .text("calibration of sensor PT-101 done")
      .local_origin()  // host, process and thread, as HERALD_LOG_STREAM's records have them
      .source(__FILE__, __LINE__, __func__)
      .field("sensor", "PT-101")
      .field("converged", true)
      .field("iterations", 17)
      .field("residual", 0.0042)
      .time_field("started", std::chrono::system_clock::now());
  return record;
}

}  // namespace

int main(int argc, char **argv) {
  const std::string url = argc > 1 ? argv[1] : kDefaultUrl;
  const std::string subject = argc > 2 ? argv[2] : kDefaultSubject;
  try {
    // The name shows in the server's monitor (`herald monitor`). The destructor closes the
    // client, sending what is still buffered.
    herald::Client client = herald::Client::connect(url, "demo-logger-cpp");

    // A log line never blocks: the record goes to the logger's buffer and a library thread
    // sends it. Below the threshold (INFO unless changed) nothing after `<<` is evaluated:
    // read_adc() is not called.
    HERALD_LOG_STREAM(client, HERALD_DEBUG, subject) << "raw ADC value " << read_adc();
    HERALD_LOG_STREAM(client, HERALD_INFO, subject) << "pump P1 started at " << 1450 << " rpm";
    HERALD_LOG_STREAM(client, HERALD_WARNING, subject)
        << "pressure " << 3.4 << " bar above limit " << 3.2 << " bar";
    HERALD_LOG_STREAM(client, HERALD_ERROR, subject)
        << "valve V7 did not close within " << 500 << " ms";

    // A record built field by field, for what should be machine-readable.
    client.publish(calibration_record(subject));

    // Wait until the server has everything: what was logged and what was published.
    client.flush(HERALD_ACK_RECEIVED, kFlushTimeout);
    // The logger drops records rather than block when its buffer is full: a check must
    // notice that.
    if (const std::uint64_t dropped = client.log_dropped(); dropped > 0) {
      std::cerr << "logger: " << dropped << " log records were dropped\n";
      return 1;
    }
    client.close();  // explicitly, to hear of a failure; the destructor would stay silent
    std::cout << "logger: 4 records sent on " << subject << "\n";
    return 0;
  } catch (const herald::Error &error) {
    std::cerr << "logger: " << error.name() << ": " << error.what() << "\n";
    return 1;
  }
}
