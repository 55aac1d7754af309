// info_watcher.cpp: information objects from C++, the state of things that other programs
// watch. It declares a type, creates an object of it, watches every object of that type
// (first their current values, then each change), changes its object a few times and
// deletes it, printing every change as the server reports it.
//
// Build (after `scripts/install-capi.sh PREFIX`), with the CMakeLists.txt beside it:
//   cmake -S examples/cpp -B build -DCMAKE_PREFIX_PATH=PREFIX && cmake --build build
// Run, with a server up (`herald serve`):
//   ./info_watcher [URL] [OBJECT] [CHANGES] [TIMEOUT_S]
//   defaults:      herald://127.0.0.1:7400 demo.valve2 3 10
// While it runs, `herald ls` and `herald get OBJECT` show the object; `herald set` changes
// to any DemoValve show up here too. It exits 0 once it has seen the snapshot of OBJECT,
// each of its CHANGES updates and its deletion, 1 if TIMEOUT_S seconds pass first or
// anything fails.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>

#include "herald.hpp"

namespace {

using Clock = std::chrono::steady_clock;

constexpr const char *kDefaultUrl = "herald://127.0.0.1:7400";
constexpr const char *kDefaultObject = "demo.valve2";
constexpr int kDefaultChanges = 3;
constexpr long kDefaultTimeoutSeconds = 10;

// The type: its attributes are `name:type`. Declaring it again with the same attributes is
// fine, so every program that sets such objects may declare it at start.
constexpr const char *kTypeName = "DemoValve";
constexpr const char *kTypeAttributes = "position:double, open:bool, operator:string";

// Creates the object, or updates it (`mode`), with the valve at `position`.
void set_valve(const herald::Client &client, const std::string &name, int mode,
               double position) {
  // An object is a record of kind info: subject its name, type its type (needed to create
  // it), fields its attributes.
  herald::Record object(HERALD_KIND_INFO, name);
  object.type(kTypeName)
      .field("position", position)
      .field("open", position > 0.0)
      .field("operator", "info_watcher.cpp");
  // The object as the server now has it, with its new version.
  const herald::Record after = client.set_info(object, mode);
  std::cout << "set     " << name << " to position " << position << ": version "
            << after.view().id() << '\n';
}

// One line per delivered object: why (snapshot, created, updated, deleted), name, version,
// attributes.
void print_object(const herald::RecordView &object) {
  std::cout << "watched " << object.text() << ' ' << object.subject() << " (" << object.type()
            << ") version " << object.id();
  for (std::size_t i = 0; i < object.field_count(); ++i)
    std::cout << ' ' << object.field_at(i).name() << '=' << object.field_at(i);
  std::cout << std::endl;
}

// Polls `subscription`, printing every event, until the one that reports `why` (snapshot,
// updated, deleted …) about object `name`; throws at `deadline`.
void wait_for(herald::Subscription &subscription, const std::string &name,
              const std::string &why, Clock::time_point deadline) {
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) throw std::runtime_error("no `" + why + "` of " + name + " in time");
    // std::nullopt when no event came in time: the deadline check above then says so.
    const std::optional<herald::Event> event = subscription.poll(left);
    if (!event) continue;
    if (!event->is_record()) {
      // A gap or a failover: changes may have been missed; a real program would read the
      // objects again (Client::list_info).
      std::cout << "changes may be missing (event type " << event->type() << ")\n";
      continue;
    }
    const herald::RecordView object = event->record();
    print_object(object);
    if (object.subject() == name && object.text() == why) return;
  }
}

}  // namespace

int main(int argc, char **argv) {
  const std::string url = argc > 1 ? argv[1] : kDefaultUrl;
  const std::string name = argc > 2 ? argv[2] : kDefaultObject;
  const int changes = argc > 3 ? std::atoi(argv[3]) : kDefaultChanges;
  const std::chrono::seconds timeout(argc > 4 ? std::strtol(argv[4], nullptr, 10)
                                              : kDefaultTimeoutSeconds);
  const Clock::time_point deadline = Clock::now() + timeout;
  try {
    herald::Client client = herald::Client::connect(url, "demo-info-watcher-cpp");
    client.declare_info_type(kTypeName, nullptr, kTypeAttributes);
    set_valve(client, name, HERALD_INFO_UPSERT, 0.0);

    // Every object of the type (nullptr name regex: any name), polled. The snapshot comes
    // first, then changes, none lost or repeated in between.
    herald::Subscription subscription = client.subscribe_info_polling(nullptr, kTypeName);
    wait_for(subscription, name, "snapshot", deadline);
    for (int change = 1; change <= changes; ++change) {
      set_valve(client, name, HERALD_INFO_UPDATE, static_cast<double>(change) / changes);
      wait_for(subscription, name, "updated", deadline);
    }
    // Read back, as a program that does not watch would.
    if (const std::optional<herald::Record> object = client.get_info(name)) {
      std::cout << "get     " << name << ": version " << object->view().id() << '\n';
    }
    client.remove_info(name);
    wait_for(subscription, name, "deleted", deadline);

    subscription.unsubscribe();
    client.close();
    std::cout << "info_watcher: saw the snapshot, " << changes << " updates and the deletion\n";
    return 0;
  } catch (const herald::Error &error) {
    std::cerr << "info_watcher: " << error.name() << ": " << error.what() << "\n";
  } catch (const std::runtime_error &error) {
    std::cerr << "info_watcher: " << error.what() << "\n";
  }
  return 1;
}
