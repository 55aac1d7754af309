/*
 * info_watcher.c: information objects from C, the state of things that other programs
 * watch. It declares a type, creates an object of it, watches every object of that type
 * (first their current values, then each change), changes its object a few times and
 * deletes it, printing every change as the server reports it.
 *
 * Build (after `scripts/install-capi.sh PREFIX`):
 *   export PKG_CONFIG_PATH=PREFIX/lib/pkgconfig
 *   cc -std=c99 -Wall -Wextra -pedantic info_watcher.c $(pkg-config --cflags --libs herald) \
 *      -o info_watcher
 * Run, with a server up (`herald serve`):
 *   ./info_watcher [URL] [OBJECT] [CHANGES] [TIMEOUT_S]
 *   defaults:      herald://127.0.0.1:7400 demo.valve1 3 10
 * While it runs, `herald ls` and `herald get OBJECT` show the object; `herald set` changes
 * to any DemoValve show up here too. It exits 0 once it has seen the snapshot of OBJECT,
 * each of its CHANGES updates and its deletion, 1 if TIMEOUT_S seconds pass first or
 * anything fails.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "herald.h"

#define DEFAULT_URL "herald://127.0.0.1:7400"
#define DEFAULT_OBJECT "demo.valve1"
#define DEFAULT_CHANGES 3
#define DEFAULT_TIMEOUT_S 10

/* The type: its attributes are `name:type`. Declaring it again with the same attributes is
 * fine, so every program that sets such objects may declare it at start. */
#define TYPE_NAME "DemoValve"
#define TYPE_ATTRIBUTES "position:double, open:bool, operator:string"

static int fail(const char *what, int status) {
  fprintf(stderr, "info_watcher: %s: %s: %s\n", what, herald_status_name(status),
          herald_last_error());
  return 1;
}

static int64_t now_ms(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* Creates the object, or updates it (`mode`), with the valve at `position`. */
static int set_valve(herald_client *client, const char *name, int mode, double position) {
  herald_record *object = NULL, *after = NULL;
  herald_record_view view;
  /* An object is a record of kind info: subject its name, fields its attributes. */
  int status = herald_record_new(HERALD_KIND_INFO, name, &object);
  /* The type is needed to create an object; for an update it may stay empty. */
  if (status == HERALD_OK) status = herald_record_set_type(object, TYPE_NAME);
  if (status == HERALD_OK) status = herald_record_add_float(object, "position", position);
  if (status == HERALD_OK) status = herald_record_add_bool(object, "open", position > 0.0);
  if (status == HERALD_OK) status = herald_record_add_str(object, "operator", "info_watcher.c");
  /* `after` is the object as the server now has it, with its new version. */
  if (status == HERALD_OK) status = herald_info_set(client, object, mode, &after);
  herald_record_free(object);
  if (status != HERALD_OK) return fail("set the object", status);
  herald_record_read(after, &view);
  printf("set     %s to position %.2f: version %llu\n", name, position,
         (unsigned long long)view.id);
  herald_record_free(after);
  return 0;
}

/* One line per delivered object: why (snapshot, created, updated, deleted), name, version,
 * attributes. */
static void print_object(const herald_record_view *view) {
  size_t i;
  printf("watched %-8s %s (%s) version %llu", view->text, view->subject, view->type,
         (unsigned long long)view->id);
  for (i = 0; i < view->field_count; i++) {
    const herald_field *field = &view->fields[i];
    printf(" %s=", field->name);
    switch (field->type) {
      case HERALD_BOOL: printf("%s", field->i ? "true" : "false"); break;
      case HERALD_INT: printf("%lld", (long long)field->i); break;
      case HERALD_UINT: printf("%llu", (unsigned long long)(uint64_t)field->i); break;
      case HERALD_FLOAT: printf("%.2f", field->f); break;
      case HERALD_STR: printf("\"%s\"", field->s); break;
      default: printf("<type %d>", field->type); break;
    }
  }
  printf("\n");
  fflush(stdout);
}

/*
 * Polls `subscription`, printing every event, until the one that reports `why` (snapshot,
 * updated, deleted …) about object `name`; fails at `deadline_ms`.
 */
static int wait_for(herald_subscription *subscription, const char *name, const char *why,
                    int64_t deadline_ms) {
  for (;;) {
    herald_event *event = NULL;
    herald_record_view view;
    int found, status;
    int64_t left_ms = deadline_ms - now_ms();
    if (left_ms <= 0) {
      fprintf(stderr, "info_watcher: no `%s` of %s in time\n", why, name);
      return 1;
    }
    status = herald_poll(subscription, (int)left_ms, &event);
    if (status == HERALD_E_TIMEOUT) continue; /* the deadline check says so */
    if (status != HERALD_OK) return fail("poll", status);
    if (event->type == HERALD_EVENT_GAP || event->type == HERALD_EVENT_INTERRUPTED) {
      /* Changes may have been missed: a real program would read the objects again. */
      printf("changes may be missing (event type %d)\n", event->type);
      herald_event_free(event);
      continue;
    }
    herald_record_read(event->record, &view);
    print_object(&view);
    found = strcmp(view.subject, name) == 0 && strcmp(view.text, why) == 0;
    herald_event_free(event); /* `view` points into it: use it before */
    if (found) return 0;
  }
}

/* The whole demonstration, on a connected client. */
static int watch(herald_client *client, const char *name, int changes, int64_t deadline_ms) {
  herald_subscription *subscription = NULL;
  int change, failed, status;

  status = herald_info_declare(client, TYPE_NAME, NULL, TYPE_ATTRIBUTES);
  if (status != HERALD_OK) return fail("declare the type", status);
  if (set_valve(client, name, HERALD_INFO_UPSERT, 0.0) != 0) return 1;

  /* Every object of the type (NULL name regex: any name). No callback: we poll. The
   * snapshot comes first, then changes, none lost or repeated in between. */
  status = herald_info_subscribe(client, NULL, TYPE_NAME, NULL, NULL, &subscription);
  if (status != HERALD_OK) return fail("subscribe", status);

  failed = wait_for(subscription, name, "snapshot", deadline_ms);
  for (change = 1; change <= changes && !failed; change++) {
    failed = set_valve(client, name, HERALD_INFO_UPDATE, (double)change / changes);
    if (!failed) failed = wait_for(subscription, name, "updated", deadline_ms);
  }
  if (!failed) {
    status = herald_info_delete(client, name);
    failed = status != HERALD_OK ? fail("delete the object", status)
                                 : wait_for(subscription, name, "deleted", deadline_ms);
  }
  herald_unsubscribe(subscription);
  return failed;
}

int main(int argc, char **argv) {
  const char *url = argc > 1 ? argv[1] : DEFAULT_URL;
  const char *name = argc > 2 ? argv[2] : DEFAULT_OBJECT;
  int changes = argc > 3 ? atoi(argv[3]) : DEFAULT_CHANGES;
  long timeout_s = argc > 4 ? strtol(argv[4], NULL, 10) : DEFAULT_TIMEOUT_S;
  herald_client *client = NULL;
  int exit_code, status;

  status = herald_connect(url, "demo-info-watcher", &client);
  if (status != HERALD_OK) return fail("connect", status);
  exit_code = watch(client, name, changes, now_ms() + timeout_s * 1000);
  status = herald_close(client);
  if (status != HERALD_OK) return fail("close", status);
  if (exit_code == 0)
    printf("info_watcher: saw the snapshot, %d updates and the deletion\n", changes);
  return exit_code;
}
