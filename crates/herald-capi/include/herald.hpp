/*
 * herald.hpp: C++17 classes over the C API of the Herald client (herald.h). Header-only:
 * include it and link libherald (pkg-config `herald`, or CMake `Herald::herald`).
 *
 *   herald::Client client = herald::Client::connect("herald://127.0.0.1:7400", "pump-ctl");
 *   HERALD_LOG_STREAM(client, HERALD_WARNING, "PUMP.P1") << "pressure " << bar << " bar";
 *   client.publish(herald::Record(HERALD_KIND_MESSAGE, "PUMP.P1.state")
 *                      .type("PumpState").field("running", true).field("rpm", 1450));
 *   herald::Subscription s = client.subscribe("PUMP.*", nullptr, ">=WARNING",
 *       [](const herald::Event& e) { if (e.is_record()) std::cout << e.record().text(); });
 *
 * ERRORS. Every call that can fail takes, as its last argument, an optional
 * `herald::Status* status`:
 *   - left out (nullptr), a failure throws herald::Error, a std::runtime_error whose code()
 *     is the HERALD_E_* status and whose what() is herald_last_error()'s message;
 *   - given, the outcome (success or failure) is stored in *status and nothing is thrown:
 *       herald::Status status;
 *       client.flush(HERALD_ACK_RECEIVED, std::chrono::seconds(2), &status);
 *       if (!status.ok()) std::cerr << status.name() << ": " << status.message() << "\n";
 * (std::filesystem's error_code& overloads do the same with two declarations; a defaulted
 * pointer gives every call both forms from one, so that neither can be forgotten.)
 * Expected outcomes are no failures in either form: Subscription::poll() returns std::nullopt
 * when no event came in time, Client::get_info() std::nullopt when there is no such object,
 * and Client::try_publish() false when the send buffer is full.
 * Record's builder methods, given a status that already holds a failure, do nothing: a chain
 * `record.type("T", &status).field("x", 1, &status)` keeps its first failure.
 * Both forms may still throw std::bad_alloc, as any C++ code that allocates.
 *
 * LIFETIMES. Client, Record and Subscription own their C handle (move-only, freed by the
 * destructor). A RecordView or FieldView points into a record: it is valid until that record
 * is changed or destroyed; an Event passed to a callback (and the views taken from it) until
 * the callback returns. Record::copy_of() keeps a delivered record longer.
 *
 * THREADS. A Client may be used from any thread at once. A Record is used by one thread at a
 * time. A subscription's callback runs on a thread of the subscription's own, one event at a
 * time; the Subscription's destructor waits until it has returned, so it must not be run
 * from that callback. An exception escaping a callback calls std::terminate (as one escaping
 * a std::thread does): it cannot travel through the C library.
 */

#ifndef HERALD_HPP
#define HERALD_HPP

#if __cplusplus < 201703L && !(defined(_MSVC_LANG) && _MSVC_LANG >= 201703L)
#error "herald.hpp needs C++17 or later (-std=c++17); C programs include herald.h"
#endif

#include "herald.h"

#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace herald {

// ---------------------------------------------------------------------------------------
// Status and Error
// ---------------------------------------------------------------------------------------

/// The outcome of a call: HERALD_OK, or a HERALD_E_* code and the library's message.
class Status {
 public:
  Status() = default;
  Status(int code, std::string message) : code_(code), message_(std::move(message)) {}

  /// The status of a C call that just returned `code`, with this thread's last error.
  static Status from_call(int code) {
    return code == HERALD_OK ? Status() : Status(code, herald_last_error());
  }

  bool ok() const noexcept { return code_ == HERALD_OK; }
  int code() const noexcept { return code_; }
  /// "HERALD_E_TIMEOUT" and so on (a static string).
  const char *name() const noexcept { return herald_status_name(code_); }
  const std::string &message() const noexcept { return message_; }

 private:
  int code_ = HERALD_OK;
  std::string message_;
};

/// A failed call, thrown when no Status was given: code() is its HERALD_E_* status.
class Error : public std::runtime_error {
 public:
  explicit Error(const Status &status)
      : std::runtime_error(status.message()), code_(status.code()) {}

  int code() const noexcept { return code_; }
  const char *name() const noexcept { return herald_status_name(code_); }

 private:
  int code_;
};

namespace detail {

/// Reports the C status `code` as the caller asked: stored in `*status`, or thrown when
/// `status` is nullptr. Returns true on success.
inline bool report(int code, Status *status) {
  Status outcome = Status::from_call(code);
  const bool succeeded = outcome.ok();
  if (status != nullptr) {
    *status = std::move(outcome);
  } else if (!succeeded) {
    throw Error(outcome);
  }
  return succeeded;
}

/// A duration as the C API's int milliseconds; a negative one stays negative, so that the
/// library names it in its HERALD_E_INVALID message.
inline int milliseconds_arg(std::chrono::milliseconds timeout) noexcept {
  if (timeout.count() > INT_MAX) return INT_MAX;
  if (timeout.count() < INT_MIN) return INT_MIN;
  return static_cast<int>(timeout.count());
}

/// A C string from the library as a view; NULL becomes empty.
inline std::string_view view_of(const char *text) noexcept {
  return text == nullptr ? std::string_view() : std::string_view(text);
}

}  // namespace detail

/// A string argument passed on to C as it is, without a copy: a `const char *`, a
/// std::string, or nullptr for none (a filter dimension left open, no base type …).
/// Meant for parameters only: it keeps a pointer, not the text.
class CStringArg {
 public:
  CStringArg(std::nullptr_t) noexcept {}
  CStringArg(const char *text) noexcept : text_(text) {}
  CStringArg(const std::string &text) noexcept : text_(text.c_str()) {}

  const char *c_str() const noexcept { return text_; }

 private:
  const char *text_ = nullptr;
};

// ---------------------------------------------------------------------------------------
// Reading records: FieldView, RecordView
// ---------------------------------------------------------------------------------------

/// One typed value of a record (or an item of an array or map field); see herald_field.
class FieldView {
 public:
  explicit FieldView(const herald_field *field) noexcept : field_(field) {}

  /// The name; empty for an array's items.
  std::string_view name() const noexcept { return detail::view_of(field_->name); }
  /// HERALD_BOOL … HERALD_UINT.
  int type() const noexcept { return field_->type; }
  bool as_bool() const noexcept { return field_->i != 0; }
  std::int64_t as_int() const noexcept { return field_->i; }
  /// A HERALD_UINT field (above INT64_MAX), or a HERALD_INT one that is not negative.
  std::uint64_t as_uint() const noexcept { return static_cast<std::uint64_t>(field_->i); }
  double as_float() const noexcept { return field_->f; }
  /// A time field: ns since the Unix epoch, UTC.
  std::int64_t as_time_ns() const noexcept { return field_->i; }
  /// A string field (UTF-8) or a bytes field, with its length (it may hold NULs).
  std::string_view as_string() const noexcept {
    return field_->s == nullptr ? std::string_view() : std::string_view(field_->s, field_->len);
  }
  /// The items of an array or map field.
  std::size_t item_count() const noexcept { return field_->count; }
  FieldView item(std::size_t index) const noexcept { return FieldView(field_->items + index); }

  const herald_field &raw() const noexcept { return *field_; }

 private:
  const herald_field *field_;
};

/// Writes the value of `field` for people: `true`, `42`, `1.5`, `"text"`, `<3 bytes>`,
/// `@1700000000000000000ns`, `[1, 2]`, `{a=1, b="x"}`.
inline std::ostream &operator<<(std::ostream &out, const FieldView &field) {
  switch (field.type()) {
    case HERALD_BOOL: return out << (field.as_bool() ? "true" : "false");
    case HERALD_INT: return out << field.as_int();
    case HERALD_UINT: return out << field.as_uint();
    case HERALD_FLOAT: return out << field.as_float();
    case HERALD_STR: return out << '"' << field.as_string() << '"';
    case HERALD_BYTES: return out << '<' << field.as_string().size() << " bytes>";
    case HERALD_TIME: return out << '@' << field.as_time_ns() << "ns";
    case HERALD_ARRAY:
    case HERALD_MAP: {
      const bool is_map = field.type() == HERALD_MAP;
      out << (is_map ? '{' : '[');
      for (std::size_t i = 0; i < field.item_count(); ++i) {
        if (i > 0) out << ", ";
        if (is_map) out << field.item(i).name() << '=';
        out << field.item(i);
      }
      return out << (is_map ? '}' : ']');
    }
    default: return out << "<field type " << field.type() << '>';
  }
}

/// A record read as plain data (herald_record_read): valid until the record it was taken
/// from is changed or destroyed. Strings are empty when absent.
class RecordView {
 public:
  /// Reads `record`; a NULL record gives an empty view.
  explicit RecordView(const herald_record *record) noexcept : record_(record), view_() {
    if (record_ != nullptr && herald_record_read(record_, &view_) != HERALD_OK) record_ = nullptr;
  }

  /// HERALD_KIND_LOG, HERALD_KIND_MESSAGE or HERALD_KIND_INFO.
  int kind() const noexcept { return view_.kind; }
  /// What it is about; for an information object its name.
  std::string_view subject() const noexcept { return detail::view_of(view_.subject); }
  std::string_view type() const noexcept { return detail::view_of(view_.type); }
  /// The producer's time, ns since the Unix epoch.
  std::int64_t time_ns() const noexcept { return view_.time; }
  int priority() const noexcept { return view_.priority; }
  std::string_view text() const noexcept {
    if (view_.text == nullptr) return std::string_view();
    return std::string_view(view_.text, view_.text_len);
  }
  std::string_view host() const noexcept { return detail::view_of(view_.host); }
  std::string_view process() const noexcept { return detail::view_of(view_.process); }
  std::string_view thread() const noexcept { return detail::view_of(view_.thread); }
  std::string_view file() const noexcept { return detail::view_of(view_.file); }
  std::uint64_t line() const noexcept { return view_.line; }
  std::string_view routine() const noexcept { return detail::view_of(view_.routine); }
  std::string_view context() const noexcept { return detail::view_of(view_.context); }
  std::string_view stack_id() const noexcept { return detail::view_of(view_.stack_id); }
  std::uint64_t stack_level() const noexcept { return view_.stack_level; }
  std::string_view log_id() const noexcept { return detail::view_of(view_.log_id); }
  std::string_view uri() const noexcept { return detail::view_of(view_.uri); }
  std::vector<std::string_view> audience() const {
    return std::vector<std::string_view>(view_.audience, view_.audience + view_.audience_count);
  }
  std::size_t field_count() const noexcept { return view_.field_count; }
  FieldView field_at(std::size_t index) const noexcept { return FieldView(view_.fields + index); }
  /// The first field called `name`, if there is one.
  std::optional<FieldView> field(CStringArg name) const noexcept {
    const herald_field *found = nullptr;
    if (herald_record_field(record_, name.c_str(), &found) != HERALD_OK) return std::nullopt;
    return FieldView(found);
  }
  /// The subject a reply goes to: only a request has one.
  std::optional<std::string_view> reply_to() const noexcept {
    if (view_.reply_to == nullptr) return std::nullopt;
    return std::string_view(view_.reply_to);
  }
  /// The correlation id of a request or reply; for an information object its version.
  std::uint64_t id() const noexcept { return view_.id; }
  /// The server's sequence number and receive time (ns) of a delivered record, else 0.
  std::uint64_t seq() const noexcept { return view_.seq; }
  std::int64_t received_ns() const noexcept { return view_.received; }

  /// The record read (NULL for an empty view): for Client::reply and the C API.
  const herald_record *handle() const noexcept { return record_; }
  const herald_record_view &raw() const noexcept { return view_; }

 private:
  const herald_record *record_;
  herald_record_view view_;
};

// ---------------------------------------------------------------------------------------
// Building records: Record
// ---------------------------------------------------------------------------------------

/// A record this program owns: built to publish, send as a request or set as an
/// information object, or returned by the library (a reply, an object, monitor data).
/// Move-only; an empty Record (default, moved from, or failed to make) has no handle.
class Record {
 public:
  Record() noexcept = default;
  /// Takes ownership of `record` (from the C API).
  explicit Record(herald_record *record) noexcept : record_(record) {}
  /// A record of `kind` (HERALD_KIND_*) about `subject`, priority INFO, stamped now.
  Record(int kind, CStringArg subject, Status *status = nullptr) {
    detail::report(herald_record_new(kind, subject.c_str(), &record_), status);
  }
  Record(Record &&other) noexcept : record_(std::exchange(other.record_, nullptr)) {}
  Record &operator=(Record &&other) noexcept {
    if (this != &other) reset(std::exchange(other.record_, nullptr));
    return *this;
  }
  Record(const Record &) = delete;
  Record &operator=(const Record &) = delete;
  ~Record() { herald_record_free(record_); }

  /// A copy of `view`'s record (through its wire encoding) that outlives it: to keep a
  /// record delivered to a callback. The server's seq and receive time are not copied.
  static Record copy_of(const RecordView &view, Status *status = nullptr) {
    const std::uint8_t *bytes = nullptr;
    std::size_t length = 0;
    herald_record *copy = nullptr;
    if (detail::report(herald_record_encode(view.handle(), &bytes, &length), status)) {
      detail::report(herald_record_decode(bytes, length, &copy), status);
    }
    return Record(copy);
  }

  // Builder methods: each changes the record and returns it, to chain.
  Record &subject(CStringArg value, Status *status = nullptr) {
    return change(status, [&] { return herald_record_set_subject(record_, value.c_str()); });
  }
  /// The message type, log type or information type name.
  Record &type(CStringArg value, Status *status = nullptr) {
    return change(status, [&] { return herald_record_set_type(record_, value.c_str()); });
  }
  Record &text(std::string_view value, Status *status = nullptr) {
    return change(status,
                  [&] { return herald_record_set_text_len(record_, value.data(), value.size()); });
  }
  /// HERALD_TRACE … HERALD_EMERGENCY.
  Record &priority(int value, Status *status = nullptr) {
    return change(status, [&] { return herald_record_set_priority(record_, value); });
  }
  /// The producer's time, ns since the Unix epoch.
  Record &time(std::int64_t ns, Status *status = nullptr) {
    return change(status, [&] { return herald_record_set_time(record_, ns); });
  }
  Record &time(std::chrono::system_clock::time_point when, Status *status = nullptr) {
    return time(nanoseconds_since_epoch(when), status);
  }
  /// Where in the program it comes from (line 0: unknown; nullptr keeps file or routine).
  Record &source(CStringArg file, std::uint64_t line, CStringArg routine,
                 Status *status = nullptr) {
    return change(status, [&] {
      return herald_record_set_source(record_, file.c_str(), line, routine.c_str());
    });
  }
  /// The chain of errors it belongs to, and its level in that chain.
  Record &stack(CStringArg stack_id, std::uint64_t level, Status *status = nullptr) {
    return change(status,
                  [&] { return herald_record_set_stack(record_, stack_id.c_str(), level); });
  }
  /// Free context of the origin (component, container …).
  Record &context(CStringArg value, Status *status = nullptr) {
    return change(status, [&] { return herald_record_set_context(record_, value.c_str()); });
  }
  Record &host(CStringArg value, Status *status = nullptr) {
    return change(status, [&] { return herald_record_set_host(record_, value.c_str()); });
  }
  Record &process(CStringArg value, Status *status = nullptr) {
    return change(status, [&] { return herald_record_set_process(record_, value.c_str()); });
  }
  Record &thread(CStringArg value, Status *status = nullptr) {
    return change(status, [&] { return herald_record_set_thread(record_, value.c_str()); });
  }
  /// This program's host, process and thread, as the logger sets them.
  Record &local_origin(Status *status = nullptr) {
    return change(status, [&] { return herald_record_set_local_origin(record_); });
  }
  /// An identifier of the log statement.
  Record &log_id(CStringArg value, Status *status = nullptr) {
    return change(status, [&] { return herald_record_set_log_id(record_, value.c_str()); });
  }
  /// A URI for more information.
  Record &uri(CStringArg value, Status *status = nullptr) {
    return change(status, [&] { return herald_record_set_uri(record_, value.c_str()); });
  }
  /// Adds an audience (a record with none is for everyone).
  Record &audience(CStringArg value, Status *status = nullptr) {
    return change(status, [&] { return herald_record_add_audience(record_, value.c_str()); });
  }
  /// The subject a reply goes to (Client::request sets it itself).
  Record &reply_to(CStringArg subject, Status *status = nullptr) {
    return change(status, [&] { return herald_record_set_reply_to(record_, subject.c_str()); });
  }
  /// The correlation id of a request or reply (Client::request and reply set it themselves).
  Record &id(std::uint64_t value, Status *status = nullptr) {
    return change(status, [&] { return herald_record_set_id(record_, value); });
  }
  Record &clear_fields(Status *status = nullptr) {
    return change(status, [&] { return herald_record_clear_fields(record_); });
  }

  // Fields. `field` picks the type from the value: bool, any integer or enum (unsigned
  // ones as uint64, signed ones and enums as int64), float or double, a string. Bytes and
  // times have their own names, since their values would look like strings and integers.
  Record &field(CStringArg name, bool value, Status *status = nullptr) {
    return change(status,
                  [&] { return herald_record_add_bool(record_, name.c_str(), value ? 1 : 0); });
  }
  template <typename Integer,
            std::enable_if_t<(std::is_integral_v<Integer> && !std::is_same_v<Integer, bool>) ||
                                 std::is_enum_v<Integer>,
                             int> = 0>
  Record &field(CStringArg name, Integer value, Status *status = nullptr) {
    return change(status, [&] {
      if constexpr (std::is_integral_v<Integer> && std::is_unsigned_v<Integer>) {
        return herald_record_add_uint(record_, name.c_str(), static_cast<std::uint64_t>(value));
      } else {
        return herald_record_add_int(record_, name.c_str(), static_cast<std::int64_t>(value));
      }
    });
  }
  template <typename Floating, std::enable_if_t<std::is_floating_point_v<Floating>, int> = 0>
  Record &field(CStringArg name, Floating value, Status *status = nullptr) {
    return change(status, [&] {
      return herald_record_add_float(record_, name.c_str(), static_cast<double>(value));
    });
  }
  Record &field(CStringArg name, const char *value, Status *status = nullptr) {
    return change(status, [&] { return herald_record_add_str(record_, name.c_str(), value); });
  }
  Record &field(CStringArg name, const std::string &value, Status *status = nullptr) {
    return field(name, value.c_str(), status);
  }
  Record &field(CStringArg name, std::string_view value, Status *status = nullptr) {
    return field(name, std::string(value), status);  // the C API wants it NUL-terminated
  }
  /// Refused: any other pointer would silently become a bool field.
  template <typename Pointee,
            std::enable_if_t<!std::is_same_v<std::remove_cv_t<Pointee>, char>, int> = 0>
  Record &field(CStringArg name, Pointee *value, Status *status = nullptr) = delete;
  Record &bytes_field(CStringArg name, const void *data, std::size_t length,
                      Status *status = nullptr) {
    return change(status, [&] {
      return herald_record_add_bytes(record_, name.c_str(),
                                     static_cast<const std::uint8_t *>(data), length);
    });
  }
  /// A time field, ns since the Unix epoch.
  Record &time_field(CStringArg name, std::int64_t ns, Status *status = nullptr) {
    return change(status, [&] { return herald_record_add_time(record_, name.c_str(), ns); });
  }
  Record &time_field(CStringArg name, std::chrono::system_clock::time_point when,
                     Status *status = nullptr) {
    return time_field(name, nanoseconds_since_epoch(when), status);
  }

  /// A field of any type, arrays and maps included: `value` is a tree of herald_field as
  /// herald_record_read gives them (a FieldView's raw(), to copy a field from another record).
  Record &value_field(CStringArg name, const herald_field &value, Status *status = nullptr) {
    return change(status,
                  [&] { return herald_record_add_value(record_, name.c_str(), &value); });
  }

  /// The record as plain data, valid until it is changed or destroyed.
  RecordView view() const noexcept { return RecordView(record_); }

  bool valid() const noexcept { return record_ != nullptr; }
  explicit operator bool() const noexcept { return valid(); }
  herald_record *handle() const noexcept { return record_; }
  /// Gives up ownership: the caller frees the handle with herald_record_free.
  herald_record *release() noexcept { return std::exchange(record_, nullptr); }

 private:
  void reset(herald_record *record) noexcept { herald_record_free(std::exchange(record_, record)); }

  /// Runs one C setter, unless `status` already holds a failure (see ERRORS above).
  template <typename Setter>
  Record &change(Status *status, Setter setter) {
    if (status == nullptr || status->ok()) detail::report(setter(), status);
    return *this;
  }

  static std::int64_t nanoseconds_since_epoch(std::chrono::system_clock::time_point when) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(when.time_since_epoch()).count();
  }

  herald_record *record_ = nullptr;
};

// ---------------------------------------------------------------------------------------
// Subscriptions: Event, Subscription
// ---------------------------------------------------------------------------------------

/// One event of a subscription: a record, a gap notice (records lost) or the notice of a
/// failover (the connection was lost; what was published meanwhile was not delivered).
class Event {
 public:
  /// An event the library still owns (one passed to a C callback).
  static Event borrow(const herald_event *event) noexcept { return Event(event, nullptr); }
  /// Takes ownership of an event from herald_poll.
  static Event adopt(herald_event *event) noexcept { return Event(event, event); }

  /// HERALD_EVENT_RECORD, HERALD_EVENT_GAP or HERALD_EVENT_INTERRUPTED.
  int type() const noexcept { return event_->type; }
  bool is_record() const noexcept { return type() == HERALD_EVENT_RECORD; }
  bool is_gap() const noexcept { return type() == HERALD_EVENT_GAP; }
  bool is_interrupted() const noexcept { return type() == HERALD_EVENT_INTERRUPTED; }

  /// The record (an empty view unless is_record()), valid as long as the event.
  RecordView record() const noexcept { return RecordView(event_->record); }

  /// A gap: how many records were lost, in all and at one priority (HERALD_WARNING …).
  std::uint64_t lost() const noexcept { return event_->lost; }
  std::uint64_t lost_at(int priority) const noexcept {
    if (priority < 0 || priority >= HERALD_PRIORITY_SLOTS) return 0;
    return event_->lost_by_priority[priority];
  }
  /// A gap: the cluster member whose route lost them; none for losses on the server the
  /// client is connected to, or in the client.
  std::optional<std::string_view> member() const noexcept {
    if (event_->member == nullptr) return std::nullopt;
    return std::string_view(event_->member);
  }

  /// An interruption: the server whose connection was lost, the one the subscription was
  /// made again on, and how long it went unserved.
  std::string_view server_lost() const noexcept { return detail::view_of(event_->server_lost); }
  std::string_view server_resumed() const noexcept {
    return detail::view_of(event_->server_resumed);
  }
  std::chrono::milliseconds down() const noexcept {
    return std::chrono::milliseconds(static_cast<std::chrono::milliseconds::rep>(event_->down_ms));
  }

  const herald_event &raw() const noexcept { return *event_; }

 private:
  struct Free {
    void operator()(herald_event *event) const noexcept { herald_event_free(event); }
  };

  Event(const herald_event *event, herald_event *owned) noexcept : owned_(owned), event_(event) {}

  std::unique_ptr<herald_event, Free> owned_;
  const herald_event *event_;
};

/// What a subscription's callback is: called with each event on the subscription's thread.
using EventHandler = std::function<void(const Event &)>;

namespace detail {

/// The C callback of every subscription made with an EventHandler: `user_data` is the
/// handler, which the Subscription keeps alive. noexcept: an exception must not unwind
/// into the C library, so it ends the program as it would on a std::thread.
inline void deliver_event(const herald_event *event, void *user_data) noexcept {
  (*static_cast<EventHandler *>(user_data))(Event::borrow(event));
}

}  // namespace detail

/// A subscription: with a callback, or polled. Move-only; the destructor ends it (see
/// THREADS above).
class Subscription {
 public:
  Subscription() noexcept = default;
  /// Takes ownership of `subscription` and of the handler its callback calls (if any).
  Subscription(herald_subscription *subscription, std::unique_ptr<EventHandler> handler) noexcept
      : subscription_(subscription), handler_(std::move(handler)) {}
  Subscription(Subscription &&other) noexcept
      : subscription_(std::exchange(other.subscription_, nullptr)),
        handler_(std::move(other.handler_)) {}
  Subscription &operator=(Subscription &&other) noexcept {
    if (this != &other) {
      end();
      subscription_ = std::exchange(other.subscription_, nullptr);
      handler_ = std::move(other.handler_);
    }
    return *this;
  }
  Subscription(const Subscription &) = delete;
  Subscription &operator=(const Subscription &) = delete;
  ~Subscription() { end(); }

  /// Waits at most `timeout` (0: not at all) for the next event of a polling subscription;
  /// std::nullopt when none came. HERALD_E_CLOSED once the connection is closed and every
  /// event was taken.
  std::optional<Event> poll(std::chrono::milliseconds timeout, Status *status = nullptr) {
    herald_event *event = nullptr;
    const int code = herald_poll(subscription_, detail::milliseconds_arg(timeout), &event);
    if (code == HERALD_E_TIMEOUT) {
      if (status != nullptr) *status = Status();
      return std::nullopt;
    }
    if (!detail::report(code, status)) return std::nullopt;
    return Event::adopt(event);
  }

  /// Ends the subscription now: when this returns, its callback is not running and will
  /// not be called again.
  void unsubscribe(Status *status = nullptr) {
    const int code = herald_unsubscribe(std::exchange(subscription_, nullptr));
    handler_.reset();  // only now: the callback may have been running until the call returned
    detail::report(code, status);
  }

  bool valid() const noexcept { return subscription_ != nullptr; }
  explicit operator bool() const noexcept { return valid(); }
  herald_subscription *handle() const noexcept { return subscription_; }

 private:
  void end() noexcept {
    (void)herald_unsubscribe(std::exchange(subscription_, nullptr));
    handler_.reset();
  }

  herald_subscription *subscription_ = nullptr;
  // On the heap, so that its address (the C callback's user_data) survives moves.
  std::unique_ptr<EventHandler> handler_;
};

// ---------------------------------------------------------------------------------------
// Client
// ---------------------------------------------------------------------------------------

/// A connection to Herald (failing over to the other servers of its URL) and its logger.
/// Move-only; the destructor closes it, sending what is still buffered (at most 5 s).
/// Every method may be called from any thread.
class Client {
 public:
  Client() noexcept = default;
  /// Takes ownership of `client` (from herald_connect).
  explicit Client(herald_client *client) noexcept : client_(client) {}
  Client(Client &&other) noexcept : client_(std::exchange(other.client_, nullptr)) {}
  Client &operator=(Client &&other) noexcept {
    if (this != &other) {
      (void)herald_close(client_);
      client_ = std::exchange(other.client_, nullptr);
    }
    return *this;
  }
  Client(const Client &) = delete;
  Client &operator=(const Client &) = delete;
  ~Client() { (void)herald_close(client_); }

  /// Connects to the first server of `url` that answers (`herald://host:port`, several
  /// separated by commas for failover) under `name` (shown by the server's monitor; nullptr
  /// for the URL's `?name=` or none). On failure the Client returned is empty.
  static Client connect(CStringArg url, CStringArg name = nullptr, Status *status = nullptr) {
    herald_client *client = nullptr;
    detail::report(herald_connect(url.c_str(), name.c_str(), &client), status);
    return Client(client);
  }

  /// Sends what is still buffered (at most 5 s) and closes; the Client is empty after,
  /// whatever the outcome, which is the flush's.
  void close(Status *status = nullptr) {
    detail::report(herald_close(std::exchange(client_, nullptr)), status);
  }

  /// Waits at most `timeout` until the server has acknowledged at `ack_level`
  /// (HERALD_ACK_RECEIVED or HERALD_ACK_STORED) all published and logged so far.
  void flush(int ack_level, std::chrono::milliseconds timeout, Status *status = nullptr) const {
    detail::report(herald_flush(client_, ack_level, detail::milliseconds_arg(timeout)), status);
  }

  // --- The logger (see also HERALD_LOG_STREAM below) ---

  /// The lowest priority the logger sends; lower ones cost a comparison.
  int threshold() const noexcept { return herald_threshold(client_); }
  void set_threshold(int priority, Status *status = nullptr) const {
    detail::report(herald_set_threshold(client_, priority), status);
  }
  /// True if a record at `priority` would be sent.
  bool log_enabled(int priority) const noexcept {
    return herald_log_enabled(client_, priority) != 0;
  }
  /// Logs `text` at `priority` on `subject` (nullptr: the client's name). Never blocks.
  void log(int priority, CStringArg subject, std::string_view text,
           Status *status = nullptr) const {
    detail::report(herald_log_at(client_, priority, subject.c_str(), nullptr, 0, nullptr,
                                 text.data(), text.size()),
                   status);
  }
  /// How many of the logger's records were lost so far.
  std::uint64_t log_dropped(Status *status = nullptr) const {
    std::uint64_t dropped = 0;
    detail::report(herald_log_dropped(client_, &dropped), status);
    return dropped;
  }

  // --- Publishing ---

  /// Queues `record` for sending, waiting while the send buffer is full.
  void publish(const Record &record, Status *status = nullptr) const {
    detail::report(herald_publish(client_, record.handle()), status);
  }
  /// As publish, but never waits: false when the send buffer is full.
  bool try_publish(const Record &record, Status *status = nullptr) const {
    const int code = herald_try_publish(client_, record.handle());
    if (code == HERALD_E_FULL) {
      if (status != nullptr) *status = Status();
      return false;
    }
    return detail::report(code, status);
  }
  /// Publishes a message on `subject` of `type` (nullptr: none) with `text`, stamped now.
  void publish_message(CStringArg subject, CStringArg type, CStringArg text,
                       Status *status = nullptr) const {
    detail::report(herald_publish_message(client_, subject.c_str(), type.c_str(), text.c_str()),
                   status);
  }
  /// Sends `record` and waits at most `timeout` until the server acknowledges it at
  /// `ack_level` (HERALD_ACK_STORED: durably archived).
  void publish_sync(const Record &record, int ack_level, std::chrono::milliseconds timeout,
                    Status *status = nullptr) const {
    detail::report(herald_publish_sync(client_, record.handle(), ack_level,
                                       detail::milliseconds_arg(timeout)),
                   status);
  }
  /// Sends `request` and waits at most `timeout` for the first reply (HERALD_E_TIMEOUT if
  /// none came).
  Record request(const Record &request, std::chrono::milliseconds timeout,
                 Status *status = nullptr) const {
    herald_record *reply = nullptr;
    detail::report(herald_request(client_, request.handle(), detail::milliseconds_arg(timeout),
                                  &reply),
                   status);
    return Record(reply);
  }
  /// Publishes `reply` to the sender of `request` (a delivered record with a reply_to).
  void reply(const RecordView &request, const Record &reply, Status *status = nullptr) const {
    detail::report(herald_reply(client_, request.handle(), reply.handle()), status);
  }

  // --- Subscribing ---

  /// Subscribes to the records whose subject matches the glob `subject` (`*` any run of
  /// characters, `?` one), whose type matches the glob `type` and whose priority is in
  /// `priorities` (`>=WARNING`, `ERROR,ALERT`); nullptr leaves a dimension open.
  /// `handler` is called with each event on the subscription's own thread.
  Subscription subscribe(CStringArg subject, CStringArg type, CStringArg priorities,
                         EventHandler handler, Status *status = nullptr) const {
    auto owned = std::make_unique<EventHandler>(std::move(handler));
    herald_subscription *made = nullptr;
    detail::report(herald_subscribe(client_, subject.c_str(), type.c_str(), priorities.c_str(),
                                    &detail::deliver_event, owned.get(), &made),
                   status);
    return made == nullptr ? Subscription() : Subscription(made, std::move(owned));
  }
  /// As subscribe, as a member of queue group `group`: each record the group's members
  /// match goes to one of them (the shortest queue), so several programs share the work;
  /// subscribers outside the group get their own copy (docs/protocol.md, Queue groups).
  Subscription subscribe_group(CStringArg subject, CStringArg type, CStringArg priorities,
                               CStringArg group, EventHandler handler,
                               Status *status = nullptr) const {
    auto owned = std::make_unique<EventHandler>(std::move(handler));
    herald_subscription *made = nullptr;
    detail::report(herald_subscribe_group(client_, subject.c_str(), type.c_str(),
                                          priorities.c_str(), group.c_str(),
                                          &detail::deliver_event, owned.get(), &made),
                   status);
    return made == nullptr ? Subscription() : Subscription(made, std::move(owned));
  }
  /// As subscribe, for events taken with Subscription::poll.
  Subscription subscribe_polling(CStringArg subject, CStringArg type, CStringArg priorities,
                                 Status *status = nullptr) const {
    herald_subscription *made = nullptr;
    detail::report(herald_subscribe(client_, subject.c_str(), type.c_str(), priorities.c_str(),
                                    nullptr, nullptr, &made),
                   status);
    return Subscription(made, nullptr);
  }

  // --- Information objects ---

  /// Declares type `name` (base type `base`, nullptr for none) with the attributes
  /// `"name:type, name:type"` (bool, s8 … u64, float, double, string, time, bytes,
  /// array<T> or another type). Declaring it again is fine.
  void declare_info_type(CStringArg name, CStringArg base, CStringArg attributes,
                         Status *status = nullptr) const {
    detail::report(herald_info_declare(client_, name.c_str(), base.c_str(), attributes.c_str()),
                   status);
  }
  /// Creates or changes the object `object` describes (subject: its name; type: its type,
  /// needed to create; fields: the attributes to set) as `mode` says (HERALD_INFO_CREATE,
  /// HERALD_INFO_UPDATE, HERALD_INFO_UPSERT). Returns the object after the change.
  Record set_info(const Record &object, int mode = HERALD_INFO_UPSERT,
                  Status *status = nullptr) const {
    herald_record *after = nullptr;
    detail::report(herald_info_set(client_, object.handle(), mode, &after), status);
    return Record(after);
  }
  /// The object called `name`; std::nullopt when there is none.
  std::optional<Record> get_info(CStringArg name, Status *status = nullptr) const {
    herald_record *object = nullptr;
    const int code = herald_info_get(client_, name.c_str(), &object);
    if (code == HERALD_E_NOT_FOUND) {
      if (status != nullptr) *status = Status();
      return std::nullopt;
    }
    if (!detail::report(code, status)) return std::nullopt;
    return Record(object);
  }
  /// Deletes the object called `name` (HERALD_E_SERVER if there is none).
  void remove_info(CStringArg name, Status *status = nullptr) const {
    detail::report(herald_info_delete(client_, name.c_str()), status);
  }
  /// The objects whose whole name matches the regular expression `name_regex` and whose
  /// type matches `types` (`T`, `T+` with subtypes, `!T`; nullptr: any), by name.
  std::vector<Record> list_info(CStringArg name_regex, CStringArg types,
                                Status *status = nullptr) const {
    ListState state;
    const int code = herald_info_list(client_, name_regex.c_str(), types.c_str(),
                                      &Client::collect_object, &state);
    if (state.failure) std::rethrow_exception(state.failure);
    detail::report(code, status);
    return std::move(state.objects);
  }
  /// Subscribes to the objects list_info would find: first each one's value (record text
  /// `snapshot`), then every change (`created`, `updated`, `deleted`), none lost or
  /// repeated between the two. Callback and polling as subscribe.
  Subscription subscribe_info(CStringArg name_regex, CStringArg types, EventHandler handler,
                              Status *status = nullptr) const {
    auto owned = std::make_unique<EventHandler>(std::move(handler));
    herald_subscription *made = nullptr;
    detail::report(herald_info_subscribe(client_, name_regex.c_str(), types.c_str(),
                                         &detail::deliver_event, owned.get(), &made),
                   status);
    return made == nullptr ? Subscription() : Subscription(made, std::move(owned));
  }
  Subscription subscribe_info_polling(CStringArg name_regex, CStringArg types,
                                      Status *status = nullptr) const {
    herald_subscription *made = nullptr;
    detail::report(herald_info_subscribe(client_, name_regex.c_str(), types.c_str(), nullptr,
                                         nullptr, &made),
                   status);
    return Subscription(made, nullptr);
  }

  // --- The server ---

  /// The server's monitor data: a record whose fields are its counters.
  Record monitor(Status *status = nullptr) const {
    herald_record *data = nullptr;
    detail::report(herald_monitor(client_, &data), status);
    return Record(data);
  }
  /// The `host:port` of the server connected to (it changes on failover).
  std::string server(Status *status = nullptr) const {
    char address[512] = {};  // a host name is at most 253 bytes
    if (!detail::report(herald_server(client_, address, sizeof address), status)) return {};
    return address;
  }

  bool valid() const noexcept { return client_ != nullptr; }
  explicit operator bool() const noexcept { return valid(); }
  herald_client *handle() const noexcept { return client_; }

 private:
  /// What list_info's C callback collects into; an exception waits here until the C call
  /// has returned, since it must not unwind through the library.
  struct ListState {
    std::vector<Record> objects;
    std::exception_ptr failure;
  };

  static int collect_object(const herald_record *object, void *user_data) noexcept {
    auto &state = *static_cast<ListState *>(user_data);
    try {
      state.objects.push_back(Record::copy_of(RecordView(object)));
      return 0;
    } catch (...) {
      state.failure = std::current_exception();
      return 1;
    }
  }

  herald_client *client_ = nullptr;
};

// ---------------------------------------------------------------------------------------
// HERALD_LOG_STREAM
// ---------------------------------------------------------------------------------------

namespace detail {

/// Decides once whether a HERALD_LOG_STREAM statement logs, evaluating its client and
/// priority once; its loop runs the statement's body at most once.
class LogGate {
 public:
  LogGate(const Client &client, int priority) noexcept : LogGate(client.handle(), priority) {}
  LogGate(const herald_client *client, int priority) noexcept
      : client_(client), priority_(priority), open_(herald_log_enabled(client, priority) != 0) {}

  bool open() const noexcept { return open_; }
  void close() noexcept { open_ = false; }
  const herald_client *client() const noexcept { return client_; }
  int priority() const noexcept { return priority_; }

 private:
  const herald_client *client_;
  int priority_;
  bool open_;
};

/// One line of a HERALD_LOG_STREAM statement: collects what is streamed into it and logs
/// it when the statement ends. `file` and `routine` are __FILE__ and __func__, which live as
/// long as the program, as herald_log_at requires.
class LogLine {
 public:
  LogLine(const LogGate &gate, CStringArg subject, const char *file, int line,
          const char *routine)
      : gate_(gate), subject_(subject.c_str()), file_(file), line_(line), routine_(routine) {}
  LogLine(const LogLine &) = delete;
  LogLine &operator=(const LogLine &) = delete;
  ~LogLine() {
    try {
      const std::string text = text_.str();
      (void)herald_log_at(gate_.client(), gate_.priority(), subject_, file_,
                          static_cast<std::uint32_t>(line_), routine_, text.data(), text.size());
    } catch (...) {
      // Out of memory while copying the text: the line is lost, as the logger drops a
      // record it has no room for; a destructor must not throw.
    }
  }

  std::ostream &stream() noexcept { return text_; }

 private:
  const LogGate &gate_;
  const char *subject_;
  const char *file_;
  int line_;
  const char *routine_;
  std::ostringstream text_;
};

}  // namespace detail
}  // namespace herald

/*
 * HERALD_LOG_STREAM(client, priority, subject) << "x=" << x;
 * Logs what is streamed at `priority` (HERALD_WARNING …) on `subject` (nullptr: the client's
 * name) through the client's logger (a herald::Client or a herald_client *), from __FILE__,
 * __LINE__ and __func__. Never blocks, never throws. `client` and `priority` are evaluated
 * once; below the threshold nothing else is (not `subject`, not the streamed values) and
 * nothing is formatted — so, as with HERALD_LOG, such lines do not reach the logger's flight
 * recorder. A `for` that runs at most once makes it a single statement, safe in an unbraced
 * if/else.
 */
#define HERALD_LOG_STREAM(client, priority, subject)                                       \
  for (::herald::detail::LogGate herald_log_gate_((client), (priority));                  \
       herald_log_gate_.open(); herald_log_gate_.close())                                 \
  ::herald::detail::LogLine(herald_log_gate_, (subject), __FILE__, __LINE__, __func__).stream()

#endif /* HERALD_HPP */
