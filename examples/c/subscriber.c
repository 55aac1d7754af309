/*
 * subscriber.c: prints the records Herald delivers on a subject, and every notice of
 * records lost on the way; a callback receives them on a thread of the library's.
 *
 * Build (after `scripts/install-capi.sh PREFIX`):
 *   export PKG_CONFIG_PATH=PREFIX/lib/pkgconfig
 *   cc -std=c99 -Wall -Wextra -pedantic subscriber.c $(pkg-config --cflags --libs herald) \
 *      -o subscriber
 * Run, with a server up (`herald serve`):
 *   ./subscriber [URL] [SUBJECT] [COUNT] [TIMEOUT_S] [PRIORITIES]
 *   defaults:    herald://127.0.0.1:7400 'DEMO.*' 4 10 (every priority)
 * SUBJECT is a glob (`*` any run of characters, `?` one); PRIORITIES e.g. '>=WARNING'.
 * It prints "subscribed" once the server has the subscription, then each record. It exits 0
 * after COUNT records, 1 if TIMEOUT_S seconds pass first or anything fails. With COUNT 0 it
 * prints until the timeout and exits 0. As a CI check: start it, wait for "subscribed", run
 * examples/c/logger.c on a subject it matches, and expect exit 0.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, gmtime_r */

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "herald.h"

#define DEFAULT_URL "herald://127.0.0.1:7400"
#define DEFAULT_SUBJECT "DEMO.*"
#define DEFAULT_COUNT 4
#define DEFAULT_TIMEOUT_S 10

/* What the callback (on the subscription's thread) shares with main: guarded by `lock`. */
struct progress {
  pthread_mutex_t lock;
  pthread_cond_t changed;
  unsigned long records;
  unsigned long wanted; /* 0: no limit */
};

static const char *priority_name(int priority) {
  static const char *const names[HERALD_PRIORITY_SLOTS] = {
      "?", "TRACE", "DELOUSE", "DEBUG", "INFO", "NOTICE", "WARNING", "?", "ERROR",
      "CRITICAL", "ALERT", "EMERGENCY"};
  return priority > 0 && priority < HERALD_PRIORITY_SLOTS ? names[priority] : "?";
}

/* Writes `ns` since the Unix epoch as an ISO 8601 UTC time to the millisecond. */
static void print_time(int64_t ns) {
  time_t seconds = (time_t)(ns / 1000000000);
  struct tm utc;
  char text[32];
  gmtime_r(&seconds, &utc);
  strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  printf("%s.%03dZ", text, (int)(ns % 1000000000 / 1000000));
}

/* Writes a field's value; arrays and maps with their items. */
static void print_value(const herald_field *field) {
  size_t i;
  switch (field->type) {
    case HERALD_BOOL: printf("%s", field->i ? "true" : "false"); break;
    case HERALD_INT: printf("%lld", (long long)field->i); break;
    case HERALD_UINT: printf("%llu", (unsigned long long)(uint64_t)field->i); break;
    case HERALD_FLOAT: printf("%g", field->f); break;
    case HERALD_STR: printf("\"%s\"", field->s); break;
    case HERALD_BYTES: printf("<%zu bytes>", field->len); break;
    case HERALD_TIME: print_time(field->i); break;
    case HERALD_ARRAY:
    case HERALD_MAP:
      printf(field->type == HERALD_MAP ? "{" : "[");
      for (i = 0; i < field->count; i++) {
        if (i > 0) printf(", ");
        if (field->items[i].name != NULL) printf("%s=", field->items[i].name);
        print_value(&field->items[i]);
      }
      printf(field->type == HERALD_MAP ? "}" : "]");
      break;
    default: printf("<type %d>", field->type);
  }
}

/* One line per record: time, priority, subject, text, source, fields. */
static void print_record(const herald_record *record) {
  herald_record_view view;
  size_t i;
  if (herald_record_read(record, &view) != HERALD_OK) {
    fprintf(stderr, "subscriber: cannot read a record: %s\n", herald_last_error());
    return;
  }
  print_time(view.time);
  printf(" %-8s %s", priority_name(view.priority), view.subject);
  if (view.type[0] != '\0') printf(" [%s]", view.type);
  printf(" %s", view.text);
  if (view.file[0] != '\0') printf(" (%s:%llu %s)", view.file, (unsigned long long)view.line,
                                   view.routine);
  for (i = 0; i < view.field_count; i++) {
    printf(i == 0 ? " {%s=" : ", %s=", view.fields[i].name);
    print_value(&view.fields[i]);
  }
  printf(view.field_count > 0 ? "}\n" : "\n");
}

/* A gap: records lost before they reached us (a full queue on the server, a cluster
 * route, or this client's buffer). Herald always says so instead of skipping silently. */
static void print_gap(const herald_event *event) {
  int priority;
  printf("GAP: %llu records lost", (unsigned long long)event->lost);
  for (priority = 1; priority < HERALD_PRIORITY_SLOTS; priority++) {
    if (event->lost_by_priority[priority] > 0)
      printf(" %s=%llu", priority_name(priority),
             (unsigned long long)event->lost_by_priority[priority]);
  }
  if (event->member != NULL) printf(" on the route from %s", event->member);
  printf("\n");
}

/*
 * The subscription's callback, on the library's thread for this subscription, one event at
 * a time. `event` is valid only until it returns (herald_record_encode/decode copies a
 * record to keep). It may call Herald, even functions that wait.
 */
static void on_event(const herald_event *event, void *user_data) {
  struct progress *progress = user_data;
  switch (event->type) {
    case HERALD_EVENT_RECORD: print_record(event->record); break;
    case HERALD_EVENT_GAP: print_gap(event); break;
    case HERALD_EVENT_INTERRUPTED:
      printf("INTERRUPTED: lost %s, resumed on %s after %llu ms (records meanwhile are lost)\n",
             event->server_lost, event->server_resumed, (unsigned long long)event->down_ms);
      break;
    default: break;
  }
  fflush(stdout);
  if (event->type != HERALD_EVENT_RECORD) return;
  pthread_mutex_lock(&progress->lock);
  progress->records++;
  pthread_cond_signal(&progress->changed);
  pthread_mutex_unlock(&progress->lock);
}

/* Waits until `progress` has its records or `timeout_s` passed; returns the records seen. */
static unsigned long wait_for_records(struct progress *progress, long timeout_s) {
  struct timespec deadline;
  unsigned long seen;
  int waited = 0;
  /* pthread_cond_timedwait takes a CLOCK_REALTIME deadline by default. */
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += timeout_s;
  pthread_mutex_lock(&progress->lock);
  while ((progress->wanted == 0 || progress->records < progress->wanted) && waited != ETIMEDOUT)
    waited = pthread_cond_timedwait(&progress->changed, &progress->lock, &deadline);
  seen = progress->records;
  pthread_mutex_unlock(&progress->lock);
  return seen;
}

int main(int argc, char **argv) {
  const char *url = argc > 1 ? argv[1] : DEFAULT_URL;
  const char *subject = argc > 2 ? argv[2] : DEFAULT_SUBJECT;
  unsigned long wanted = argc > 3 ? strtoul(argv[3], NULL, 10) : DEFAULT_COUNT;
  long timeout_s = argc > 4 ? strtol(argv[4], NULL, 10) : DEFAULT_TIMEOUT_S;
  const char *priorities = argc > 5 ? argv[5] : NULL; /* NULL: every priority */
  struct progress progress;
  herald_client *client = NULL;
  herald_subscription *subscription = NULL;
  unsigned long seen;
  int status;

  progress.records = 0;
  progress.wanted = wanted;
  pthread_mutex_init(&progress.lock, NULL);
  pthread_cond_init(&progress.changed, NULL);

  status = herald_connect(url, "demo-subscriber", &client);
  if (status != HERALD_OK) {
    fprintf(stderr, "subscriber: connect: %s: %s\n", herald_status_name(status),
            herald_last_error());
    return 1;
  }
  /* NULL type: any type. The callback gets `&progress` as its user_data. */
  status = herald_subscribe(client, subject, NULL, priorities, on_event, &progress, &subscription);
  if (status != HERALD_OK) {
    fprintf(stderr, "subscriber: subscribe: %s: %s\n", herald_status_name(status),
            herald_last_error());
    herald_close(client);
    return 1;
  }
  /* herald_subscribe returns once the server has the subscription: say so, for scripts. */
  printf("subscribed to %s\n", subject);
  fflush(stdout);

  seen = wait_for_records(&progress, timeout_s);

  /* Unsubscribe first: when it returns the callback has finished and will not run again,
   * so `progress` may go away after. */
  herald_unsubscribe(subscription);
  status = herald_close(client);
  pthread_cond_destroy(&progress.changed);
  pthread_mutex_destroy(&progress.lock);
  if (status != HERALD_OK) {
    fprintf(stderr, "subscriber: close: %s: %s\n", herald_status_name(status),
            herald_last_error());
    return 1;
  }
  if (wanted > 0 && seen < wanted) {
    fprintf(stderr, "subscriber: %lu of %lu records within %ld s\n", seen, wanted, timeout_s);
    return 1;
  }
  printf("subscriber: %lu records\n", seen);
  return 0;
}
