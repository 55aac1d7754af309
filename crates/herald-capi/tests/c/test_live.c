/* The C API against a live server (its URL in argv[1]): callbacks while other threads log,
 * polling, the threshold, request/reply from inside a callback, information objects,
 * acknowledged flushes, monitor data, and closing while subscribed. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

#define THREADS 4
#define PER_THREAD 2000

static herald_client *client;

static void sleep_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

/* Waits at most `seconds` for `*value` to reach `want`. */
static int wait_for(volatile long *value, long want, int seconds) {
  int i;
  for (i = 0; i < seconds * 100; i++) {
    if (__atomic_load_n(value, __ATOMIC_SEQ_CST) >= want) return 1;
    sleep_ms(10);
  }
  fprintf(stderr, "waited %d s: %ld of %ld\n", seconds, *value, want);
  return 0;
}

/* --- callbacks while other threads log ---------------------------------------------- */

struct tally {
  long records;
  long from_this_file; /* with file, line and routine of the HERALD_LOG call */
  long gaps;
};

static void count(const herald_event *event, void *user_data) {
  struct tally *tally = (struct tally *)user_data;
  herald_record_view view;
  long i = -1, thread = -1;
  char want[64];
  if (event->type == HERALD_EVENT_GAP) {
    __atomic_add_fetch(&tally->gaps, 1, __ATOMIC_SEQ_CST);
    return;
  }
  if (event->type != HERALD_EVENT_RECORD || herald_record_read(event->record, &view) != 0)
    return;
  if (strstr(view.file, "test_live.c") != NULL && view.line > 0 &&
      strcmp(view.routine, "log_from_a_thread") == 0 && view.priority == HERALD_WARNING &&
      view.host[0] != '\0' && sscanf(view.text, "reading %ld of thread %ld", &i, &thread) == 2 &&
      snprintf(want, sizeof want, "reading %ld of thread %ld", i, thread) > 0 &&
      strcmp(view.text, want) == 0)
    __atomic_add_fetch(&tally->from_this_file, 1, __ATOMIC_SEQ_CST);
  __atomic_add_fetch(&tally->records, 1, __ATOMIC_SEQ_CST);
}

static void *log_from_a_thread(void *arg) {
  long thread = (long)arg, i;
  char subject[32];
  snprintf(subject, sizeof subject, "live.logs.t%ld", thread);
  for (i = 0; i < PER_THREAD; i++) {
    HERALD_LOG(client, HERALD_WARNING, subject, "reading %ld of thread %ld", i, thread);
    if (i % 256 == 255) sleep_ms(1); /* stay within the logger's buffer: no drops */
  }
  return NULL;
}

static void callbacks_while_threads_log(void) {
  struct tally tally = {0, 0, 0};
  herald_subscription *sub = NULL;
  pthread_t threads[THREADS];
  long t;
  uint64_t dropped = 1;
  CHECK(herald_subscribe(client, "live.logs.*", NULL, ">=WARNING", count, &tally, &sub));
  for (t = 0; t < THREADS; t++) pthread_create(&threads[t], NULL, log_from_a_thread, (void *)t);
  for (t = 0; t < THREADS; t++) pthread_join(threads[t], NULL);
  CHECK(herald_flush(client, HERALD_ACK_RECEIVED, 10000));
  EXPECT(wait_for(&tally.records, THREADS * PER_THREAD, 20));
  CHECK(herald_unsubscribe(sub));
  CHECK(herald_log_dropped(client, &dropped));
  EXPECT(dropped == 0);
  CHECK(herald_abandoned(client, &dropped));
  EXPECT(dropped == 0); /* nothing given up while the connection runs */
  EXPECT(tally.records == THREADS * PER_THREAD);
  EXPECT(tally.from_this_file == THREADS * PER_THREAD);
  EXPECT(tally.gaps == 0);
}

/* --- polling and the threshold ------------------------------------------------------ */

static int evaluated = 0;

static int evaluate(void) { return ++evaluated; }

static void polling_and_threshold(void) {
  herald_subscription *sub = NULL;
  herald_event *event = NULL;
  herald_record_view view;
  CHECK(herald_subscribe(client, "live.poll", "Reading", NULL, NULL, NULL, &sub));
  EXPECT_STATUS(herald_poll(sub, 0, &event), HERALD_E_TIMEOUT);
  EXPECT_STATUS(herald_poll(sub, 50, &event), HERALD_E_TIMEOUT);
  CHECK(herald_publish_message(client, "live.poll", "Other", "filtered out by type"));
  CHECK(herald_publish_message(client, "live.poll", "Reading", "42.5"));
  CHECK(herald_poll(sub, 5000, &event));
  EXPECT(event->type == HERALD_EVENT_RECORD);
  CHECK(herald_record_read(event->record, &view));
  EXPECT(view.kind == HERALD_KIND_MESSAGE && strcmp(view.text, "42.5") == 0);
  EXPECT(strcmp(view.type, "Reading") == 0 && view.seq > 0 && view.received > 0);
  herald_event_free(event);

  /* Below the threshold nothing is evaluated or sent. */
  CHECK(herald_set_threshold(client, HERALD_ERROR));
  EXPECT(herald_threshold(client) == HERALD_ERROR);
  EXPECT(herald_log_enabled(client, HERALD_WARNING) == 0);
  EXPECT(herald_log_enabled(client, HERALD_ERROR) == 1);
  HERALD_LOG(client, HERALD_WARNING, "live.poll", "%d", evaluate());
  EXPECT(evaluated == 0);
  HERALD_LOG(client, HERALD_ERROR, "live.poll", "%d", evaluate());
  EXPECT(evaluated == 1);
  CHECK(herald_set_threshold(client, HERALD_INFO));
  EXPECT_STATUS(herald_set_threshold(client, 0), HERALD_E_INVALID);
  EXPECT_STATUS(herald_poll(sub, -1, &event), HERALD_E_INVALID);
  CHECK(herald_unsubscribe(sub));
}

/* --- a queue group ------------------------------------------------------------------ */

/* Two polling members of one group share the records: each record reaches one of them. */
static void queue_group(void) {
  herald_subscription *first = NULL, *second = NULL;
  herald_event *event = NULL;
  char text[32];
  int got[2] = {0, 0};
  CHECK(herald_subscribe_group(client, "live.group", NULL, NULL, "workers", NULL, NULL, &first));
  CHECK(herald_subscribe_group(client, "live.group", NULL, NULL, "workers", NULL, NULL, &second));
  for (int i = 0; i < 100; i++) {
    snprintf(text, sizeof text, "job %d", i);
    CHECK(herald_publish_message(client, "live.group", "Job", text));
  }
  CHECK(herald_flush(client, HERALD_ACK_RECEIVED, 10000));
  herald_subscription *members[2] = {first, second};
  for (int m = 0; m < 2; m++) {
    while (herald_poll(members[m], 500, &event) == 0) {
      EXPECT(event->type == HERALD_EVENT_RECORD);
      got[m]++;
      herald_event_free(event);
    }
  }
  EXPECT(got[0] + got[1] == 100);
  EXPECT(got[0] > 0 && got[1] > 0);
  EXPECT_STATUS(herald_subscribe_group(client, "live.group", NULL, NULL, "", NULL, NULL, &first),
                HERALD_E_INVALID);
  EXPECT(strstr(herald_last_error(), "a queue group needs a name") != NULL);
  EXPECT_STATUS(herald_subscribe_group(client, "live.group", NULL, NULL, NULL, NULL, NULL, &first),
                HERALD_E_INVALID);
  EXPECT(strstr(herald_last_error(), "group is NULL") != NULL);
  CHECK(herald_unsubscribe(members[0]));
  CHECK(herald_unsubscribe(members[1]));
}

/* A call site is checked once, the first time, and keeps what it checked; a bad one is
 * refused, names what is wrong, and stays unchecked. */
static void call_sites(void) {
  static herald_log_site good = {.file = __FILE__, .routine = __func__, .line = __LINE__};
  static herald_log_site bad = {.file = "\xff\xfe.c", .routine = "f", .line = 1};
  herald_subscription *sub = NULL;
  herald_event *event = NULL;
  herald_record_view view;
  void *checked;
  CHECK(herald_subscribe(client, "live.site", NULL, NULL, NULL, NULL, &sub));
  EXPECT(good.checked == NULL);
  CHECK(herald_log_site_at(client, HERALD_WARNING, "live.site", &good, "first", 5));
  checked = good.checked;
  EXPECT(checked != NULL);
  CHECK(herald_logf_site(client, HERALD_WARNING, "live.site", &good, "second %d", 2));
  EXPECT(good.checked == checked);
  EXPECT_STATUS(herald_log_site_at(client, HERALD_WARNING, "live.site", &bad, "t", 1),
                HERALD_E_INVALID);
  EXPECT(strstr(herald_last_error(), "file is not UTF-8") != NULL);
  EXPECT(bad.checked == NULL);
  EXPECT_STATUS(herald_log_site_at(client, HERALD_WARNING, "live.site", NULL, "t", 1),
                HERALD_E_INVALID);
  EXPECT(strstr(herald_last_error(), "site is NULL") != NULL);
  CHECK(herald_flush(client, HERALD_ACK_RECEIVED, 5000));
  CHECK(herald_poll(sub, 5000, &event));
  CHECK(herald_record_read(event->record, &view));
  EXPECT(strcmp(view.text, "first") == 0 && view.line == good.line);
  EXPECT(strcmp(view.file, __FILE__) == 0 && strcmp(view.routine, "call_sites") == 0);
  herald_event_free(event);
  CHECK(herald_poll(sub, 5000, &event));
  CHECK(herald_record_read(event->record, &view));
  EXPECT(strcmp(view.text, "second 2") == 0);
  herald_event_free(event);
  /* A text longer than the formatter's stack buffer is formatted again on the heap, whole. */
  {
    char long_text[701];
    memset(long_text, 'z', sizeof long_text - 1);
    long_text[sizeof long_text - 1] = '\0';
    CHECK(herald_logf_site(client, HERALD_WARNING, "live.site", &good, "<%s>", long_text));
    CHECK(herald_flush(client, HERALD_ACK_RECEIVED, 5000));
    CHECK(herald_poll(sub, 5000, &event));
    CHECK(herald_record_read(event->record, &view));
    EXPECT(strlen(view.text) == 702 && view.text[0] == '<' && view.text[701] == '>');
    herald_event_free(event);
  }
  /* A text that is not UTF-8 is not refused: the record comes with U+FFFD in its place. */
  CHECK(herald_log_site_at(client, HERALD_WARNING, "live.site", &good, "bad \xff byte", 10));
  CHECK(herald_flush(client, HERALD_ACK_RECEIVED, 5000));
  CHECK(herald_poll(sub, 5000, &event));
  CHECK(herald_record_read(event->record, &view));
  EXPECT(strcmp(view.text, "bad \xef\xbf\xbd byte") == 0);
  herald_event_free(event);
  /* A site whose format is a literal: the call captures its arguments and the logger's
   * thread makes the text, as printf would (a string that is not UTF-8 gets U+FFFD). */
  {
    static herald_log_site literal = {.file = __FILE__, .routine = __func__, .line = __LINE__,
                                      .deferrable = 1};
    static const char format[] = "%s=%d %.2f [%-4x] %s";
    CHECK(herald_logf_site(client, HERALD_WARNING, "live.site", &literal, format, "azimuth", -7,
                           12.345, 0xbeu, "\xff"));
    EXPECT(herald_log_site_plan(&literal, format) != NULL);
    EXPECT(herald_log_site_plan(&good, format) == NULL); /* not deferrable */
    CHECK(herald_flush(client, HERALD_ACK_RECEIVED, 5000));
    CHECK(herald_poll(sub, 5000, &event));
    CHECK(herald_record_read(event->record, &view));
    EXPECT(strcmp(view.text, "azimuth=-7 12.35 [be  ] \xef\xbf\xbd") == 0);
    EXPECT(view.line == literal.line && strcmp(view.routine, "call_sites") == 0);
    herald_event_free(event);
  }
  CHECK(herald_unsubscribe(sub));
}

/* --- request and reply, answered from inside a callback ----------------------------- */

static void answer(const herald_event *event, void *user_data) {
  herald_record *reply = NULL;
  herald_record_view view;
  (void)user_data;
  if (event->type != HERALD_EVENT_RECORD) return;
  CHECK(herald_record_read(event->record, &view));
  CHECK(herald_record_new(HERALD_KIND_MESSAGE, "ignored.by.reply", &reply));
  CHECK(herald_record_set_text(reply, view.text));
  CHECK(herald_record_add_int(reply, "answered", 1));
  CHECK(herald_reply(client, event->record, reply));
  CHECK(herald_flush(client, HERALD_ACK_RECEIVED, 5000)); /* a call that waits, in a callback */
  herald_record_free(reply);
}

static void request_and_reply(void) {
  herald_subscription *responder = NULL;
  herald_record *request = NULL, *reply = NULL;
  herald_record_view view;
  const herald_field *answered = NULL;
  CHECK(herald_subscribe(client, "live.echo", NULL, NULL, answer, NULL, &responder));
  CHECK(herald_record_new(HERALD_KIND_MESSAGE, "live.echo", &request));
  CHECK(herald_record_set_text(request, "ping"));
  CHECK(herald_request(client, request, 5000, &reply));
  CHECK(herald_record_read(reply, &view));
  EXPECT(strcmp(view.text, "ping") == 0);
  CHECK(herald_record_field(reply, "answered", &answered));
  EXPECT(answered->type == HERALD_INT && answered->i == 1);
  EXPECT_STATUS(herald_reply(client, reply, request), HERALD_E_INVALID); /* not a request */
  herald_record_free(reply);
  CHECK(herald_unsubscribe(responder));
  CHECK(herald_record_set_subject(request, "live.nobody"));
  EXPECT_STATUS(herald_request(client, request, 200, &reply), HERALD_E_TIMEOUT);
  herald_record_free(request);
}

/* --- information objects ------------------------------------------------------------ */

static int count_object(const herald_record *object, void *user_data) {
  (void)object;
  ++*(int *)user_data;
  return 0;
}

static void information_objects(void) {
  herald_record *object = NULL, *after = NULL, *read = NULL;
  herald_subscription *watch = NULL;
  herald_event *event = NULL;
  herald_record_view view;
  const herald_field *state = NULL;
  int listed = 0;
  CHECK(herald_info_declare(client, "LiveRun", NULL, "run: s64, state: string"));
  CHECK(herald_record_new(HERALD_KIND_INFO, "Live.Run1", &object));
  CHECK(herald_record_set_type(object, "LiveRun"));
  CHECK(herald_record_add_int(object, "run", 1));
  CHECK(herald_record_add_str(object, "state", "idle"));
  CHECK(herald_info_set(client, object, HERALD_INFO_UPSERT, &after));
  CHECK(herald_record_read(after, &view));
  EXPECT(view.id >= 1 && strcmp(view.subject, "Live.Run1") == 0);
  herald_record_free(after);

  CHECK(herald_info_subscribe(client, "Live\\..*", NULL, NULL, NULL, &watch));
  CHECK(herald_poll(watch, 5000, &event));
  CHECK(herald_record_read(event->record, &view));
  EXPECT(view.kind == HERALD_KIND_INFO && strcmp(view.text, "snapshot") == 0);
  herald_event_free(event);

  CHECK(herald_record_clear_fields(object));
  CHECK(herald_record_add_str(object, "state", "running"));
  CHECK(herald_info_set(client, object, HERALD_INFO_UPDATE, NULL));
  CHECK(herald_poll(watch, 5000, &event));
  CHECK(herald_record_read(event->record, &view));
  EXPECT(strcmp(view.text, "updated") == 0);
  herald_event_free(event);

  CHECK(herald_info_get(client, "Live.Run1", &read));
  CHECK(herald_record_field(read, "state", &state));
  EXPECT(state->type == HERALD_STR && strcmp(state->s, "running") == 0);
  herald_record_free(read);
  CHECK(herald_info_list(client, "Live\\..*", NULL, count_object, &listed));
  EXPECT(listed == 1);
  EXPECT_STATUS(herald_info_get(client, "Live.Nothing", &read), HERALD_E_NOT_FOUND);
  EXPECT_STATUS(herald_info_set(client, object, 9, NULL), HERALD_E_INVALID);
  CHECK(herald_info_delete(client, "Live.Run1"));
  EXPECT_STATUS(herald_info_delete(client, "Live.Run1"), HERALD_E_SERVER);
  CHECK(herald_unsubscribe(watch));
  herald_record_free(object);
}

/* --- acknowledgements and monitor data ---------------------------------------------- */

static void acknowledged_and_monitored(void) {
  herald_record *record = NULL, *monitor = NULL;
  const herald_field *records_in = NULL;
  char server[64];
  CHECK(herald_record_new(HERALD_KIND_LOG, "live.stored", &record));
  CHECK(herald_record_set_text(record, "kept"));
  CHECK(herald_publish_sync(client, record, HERALD_ACK_STORED, 10000));
  CHECK(herald_publish(client, record));
  CHECK(herald_flush(client, HERALD_ACK_STORED, 10000));
  EXPECT_STATUS(herald_flush(client, 5, 100), HERALD_E_INVALID);
  herald_record_free(record);
  CHECK(herald_monitor(client, &monitor));
  CHECK(herald_record_field(monitor, "records_in", &records_in));
  EXPECT(records_in->type == HERALD_INT && records_in->i > 0);
  herald_record_free(monitor);
  CHECK(herald_server(client, server, sizeof server));
  EXPECT(strstr(server, "127.0.0.1") != NULL);
  EXPECT_STATUS(herald_server(client, server, 3), HERALD_E_INVALID);
}

/* --- unsubscribe from inside a callback, close while subscribed ---------------------- */

static herald_subscription *self_ending;
static long self_ending_calls = 0;

static void end_myself(const herald_event *event, void *user_data) {
  (void)event;
  (void)user_data;
  if (__atomic_add_fetch(&self_ending_calls, 1, __ATOMIC_SEQ_CST) == 1)
    CHECK(herald_unsubscribe(self_ending));
}

static void close_while_subscribed(const char *url) {
  struct tally tally = {0, 0, 0};
  herald_subscription *open_sub = NULL, *polled = NULL;
  herald_event *event = NULL;
  int i;
  CHECK(herald_subscribe(client, "live.end", NULL, NULL, end_myself, NULL, &self_ending));
  for (i = 0; i < 10; i++) CHECK(herald_publish_message(client, "live.end", NULL, "x"));
  CHECK(herald_flush(client, HERALD_ACK_RECEIVED, 5000));
  sleep_ms(300);
  EXPECT(self_ending_calls == 1);

  CHECK(herald_subscribe(client, "live.close", NULL, NULL, count, &tally, &open_sub));
  CHECK(herald_subscribe(client, "live.close", NULL, NULL, NULL, NULL, &polled));
  CHECK(herald_publish_message(client, "live.close", NULL, "before close"));
  CHECK(herald_flush(client, HERALD_ACK_RECEIVED, 5000));
  EXPECT(wait_for(&tally.records, 1, 5));
  CHECK(herald_close(client));
  client = NULL;
  CHECK(herald_poll(polled, 1000, &event)); /* taken before the close: still there */
  herald_event_free(event);
  EXPECT_STATUS(herald_poll(polled, 1000, &event), HERALD_E_CLOSED);
  EXPECT_STATUS(herald_poll(polled, 0, &event), HERALD_E_CLOSED);
  CHECK(herald_unsubscribe(open_sub));
  CHECK(herald_unsubscribe(polled));
  CHECK(herald_connect(url, "c-test-live", &client));
}

/* --- the logger's disk buffer -------------------------------------------------------- */

/* A logger with a disk buffer has a connection of its own; what it logs arrives, the
 * directory is one producer's (a second client on it is refused, naming the holder), and
 * a close that delivered everything leaves no segment behind. */
static void disk_buffer(const char *url) {
  char dir[] = "/tmp/herald-c-disk-XXXXXX";
  herald_options options;
  herald_client *buffered = NULL, *second = NULL;
  herald_subscription *sub = NULL;
  herald_event *event = NULL;
  herald_record_view view;
  int i, got = 0;
  char path[256];
  EXPECT(mkdtemp(dir) != NULL);
  herald_options_init(&options);
  options.name = "c-disk";
  options.log_buffer_dir = dir;
  options.log_buffer_quota = 1 << 20;
  CHECK(herald_subscribe(client, "live.disk", NULL, NULL, NULL, NULL, &sub));
  CHECK(herald_connect_with(url, &options, &buffered));
  EXPECT_STATUS(herald_connect_with(url, &options, &second), HERALD_E_INVALID);
  EXPECT(strstr(herald_last_error(), "pid=") != NULL);
  for (i = 0; i < 100; i++) HERALD_LOG(buffered, HERALD_NOTICE, "live.disk", "disk %d", i);
  CHECK(herald_close(buffered));
  while (got < 100 && herald_poll(sub, 5000, &event) == 0) {
    if (event->type == HERALD_EVENT_RECORD && herald_record_read(event->record, &view) == 0) {
      char want[32];
      snprintf(want, sizeof want, "disk %d", got);
      EXPECT(strcmp(view.text, want) == 0);
      got++;
    }
    herald_event_free(event);
  }
  EXPECT(got == 100);
  CHECK(herald_unsubscribe(sub));
  /* Everything was acknowledged: the segments are gone; the lock and state stay. */
  snprintf(path, sizeof path, "%s/state", dir);
  EXPECT(access(path, F_OK) == 0);
  {
    DIR *listing = opendir(dir);
    struct dirent *file;
    int segments = 0;
    EXPECT(listing != NULL);
    while (listing != NULL && (file = readdir(listing)) != NULL)
      if (strstr(file->d_name, ".seg") != NULL) segments++;
    if (listing != NULL) closedir(listing);
    EXPECT(segments == 0);
  }
  snprintf(path, sizeof path, "rm -rf '%s'", dir);
  EXPECT(system(path) == 0);
}

int main(int argc, char **argv) {
  const char *url = argc > 1 ? argv[1] : "herald://127.0.0.1:7400";
  CHECK(herald_connect(url, "c-test-live", &client));
  callbacks_while_threads_log();
  polling_and_threshold();
  queue_group();
  call_sites();
  request_and_reply();
  information_objects();
  acknowledged_and_monitored();
  close_while_subscribed(url);
  disk_buffer(url);
  CHECK(herald_close(client));
  return check_result("test_live");
}
