// subscriber.cpp: prints the records Herald delivers on a subject, and every notice of
// records lost on the way; a lambda receives them on a thread of the library's.
//
// Build (after `scripts/install-capi.sh PREFIX`), with the CMakeLists.txt beside it:
//   cmake -S examples/cpp -B build -DCMAKE_PREFIX_PATH=PREFIX && cmake --build build
// Run, with a server up (`herald serve`):
//   ./subscriber [URL] [SUBJECT] [COUNT] [TIMEOUT_S] [PRIORITIES] [GROUP]
//   defaults:    herald://127.0.0.1:7400 'DEMO.*' 4 10 (every priority) (no group)
// SUBJECT is a glob (`*` any run of characters, `?` one); PRIORITIES e.g. '>=WARNING'; with
// GROUP it joins that queue group: several subscribers with one group share the records.
// It prints "subscribed" once the server has the subscription, then each record. It exits 0
// after COUNT records, 1 if TIMEOUT_S seconds pass first or anything fails. With COUNT 0 it
// prints until the timeout and exits 0. As a CI check: start it, wait for "subscribed", run
// examples/cpp/logger.cpp on a subject it matches, and expect exit 0.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>

#include "herald.hpp"

namespace {

constexpr const char *kDefaultUrl = "herald://127.0.0.1:7400";
constexpr const char *kDefaultSubject = "DEMO.*";
constexpr unsigned long kDefaultCount = 4;
constexpr long kDefaultTimeoutSeconds = 10;

const char *priority_name(int priority) {
  static const char *const names[HERALD_PRIORITY_SLOTS] = {
      "?", "TRACE", "DELOUSE", "DEBUG", "INFO", "NOTICE", "WARNING", "?", "ERROR",
      "CRITICAL", "ALERT", "EMERGENCY"};
  return priority > 0 && priority < HERALD_PRIORITY_SLOTS ? names[priority] : "?";
}

// `ns` since the Unix epoch as an ISO 8601 UTC time to the millisecond.
std::string format_time(std::int64_t ns) {
  const std::time_t seconds = static_cast<std::time_t>(ns / 1000000000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);  // POSIX; std::gmtime is not safe on the callback's thread
  std::ostringstream text;
  text << std::put_time(&utc, "%Y-%m-%dT%H:%M:%S") << '.' << std::setfill('0') << std::setw(3)
       << ns % 1000000000 / 1000000 << 'Z';
  return text.str();
}

// One line per record: time, priority, subject, text, source, fields.
void print_record(const herald::RecordView &record) {
  std::cout << format_time(record.time_ns()) << ' ' << std::left << std::setw(8)
            << priority_name(record.priority()) << ' ' << record.subject();
  if (!record.type().empty()) std::cout << " [" << record.type() << ']';
  std::cout << ' ' << record.text();
  if (!record.file().empty())
    std::cout << " (" << record.file() << ':' << record.line() << ' ' << record.routine() << ')';
  for (std::size_t i = 0; i < record.field_count(); ++i) {
    const herald::FieldView field = record.field_at(i);
    std::cout << (i == 0 ? " {" : ", ") << field.name() << '=';
    if (field.type() == HERALD_TIME) {
      std::cout << format_time(field.as_time_ns());
    } else {
      std::cout << field;  // herald.hpp prints any field's value
    }
  }
  std::cout << (record.field_count() > 0 ? "}\n" : "\n");
}

// A gap: records lost before they reached us (a full queue on the server, a cluster route,
// or this client's buffer). Herald always says so instead of skipping silently.
void print_gap(const herald::Event &event) {
  std::cout << "GAP: " << event.lost() << " records lost";
  for (int priority = HERALD_TRACE; priority <= HERALD_EMERGENCY; ++priority) {
    if (event.lost_at(priority) > 0)
      std::cout << ' ' << priority_name(priority) << '=' << event.lost_at(priority);
  }
  if (const auto member = event.member()) std::cout << " on the route from " << *member;
  std::cout << '\n';
}

// What the callback (on the subscription's thread) shares with main.
class Progress {
 public:
  explicit Progress(unsigned long wanted) : wanted_(wanted) {}

  void count_record() {
    std::lock_guard<std::mutex> guard(lock_);
    ++records_;
    changed_.notify_one();
  }

  // Waits until the wanted records came (with none wanted: until the timeout); returns how
  // many came.
  unsigned long wait(std::chrono::seconds timeout) {
    std::unique_lock<std::mutex> guard(lock_);
    changed_.wait_for(guard, timeout, [this] { return wanted_ > 0 && records_ >= wanted_; });
    return records_;
  }

 private:
  std::mutex lock_;
  std::condition_variable changed_;
  unsigned long records_ = 0;
  const unsigned long wanted_;
};

}  // namespace

int main(int argc, char **argv) {
  const std::string url = argc > 1 ? argv[1] : kDefaultUrl;
  const std::string subject = argc > 2 ? argv[2] : kDefaultSubject;
  const unsigned long wanted = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : kDefaultCount;
  const std::chrono::seconds timeout(argc > 4 ? std::strtol(argv[4], nullptr, 10)
                                              : kDefaultTimeoutSeconds);
  // nullptr leaves a filter dimension open: every priority.
  const char *priorities = argc > 5 ? argv[5] : nullptr;
  // A queue group to join: running several subscribers with one group shares the records.
  const char *group = argc > 6 ? argv[6] : nullptr;
  try {
    herald::Client client = herald::Client::connect(url, "demo-subscriber-cpp");
    Progress progress(wanted);

    // The lambda runs on the subscription's own thread, one event at a time. The event and
    // the views taken from it are valid until it returns (herald::Record::copy_of keeps a
    // record longer). It may call the client, even methods that wait. Declared after
    // `progress`, the subscription ends first: its destructor waits for the callback.
    auto on_event = [&progress](const herald::Event &event) {
      if (event.is_record()) {
        print_record(event.record());
      } else if (event.is_gap()) {
        print_gap(event);
      } else if (event.is_interrupted()) {
        std::cout << "INTERRUPTED: lost " << event.server_lost() << ", resumed on "
                  << event.server_resumed() << " after " << event.down().count()
                  << " ms (records meanwhile are lost)\n";
      }
      std::cout.flush();
      if (event.is_record()) progress.count_record();
    };
    herald::Subscription subscription =
        group != nullptr ? client.subscribe_group(subject, nullptr, priorities, group, on_event)
                         : client.subscribe(subject, nullptr, priorities, on_event);
    // subscribe returns once the server has the subscription: say so, for scripts.
    std::cout << "subscribed to " << subject << std::endl;

    const unsigned long seen = progress.wait(timeout);
    subscription.unsubscribe();
    client.close();
    if (wanted > 0 && seen < wanted) {
      std::cerr << "subscriber: " << seen << " of " << wanted << " records within "
                << timeout.count() << " s\n";
      return 1;
    }
    std::cout << "subscriber: " << seen << " records\n";
    return 0;
  } catch (const herald::Error &error) {
    std::cerr << "subscriber: " << error.name() << ": " << error.what() << "\n";
    return 1;
  }
}
