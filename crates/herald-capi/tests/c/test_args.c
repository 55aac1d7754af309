/* Every function of the C API given NULL or invalid arguments returns HERALD_E_INVALID
 * with a message naming the argument, and never crashes; records build, encode, decode and
 * read back without a server. Runs under valgrind and the sanitizers. */
#include <stdint.h>

#include "check.h"

/* Expects HERALD_E_INVALID and a message that mentions `word`. */
#define EXPECT_INVALID(call, word)                                                          \
  do {                                                                                      \
    EXPECT_STATUS(call, HERALD_E_INVALID);                                                  \
    if (strstr(herald_last_error(), (word)) == NULL) {                                      \
      fprintf(stderr, "%s:%d: the message of %s does not name `%s`: %s\n", __FILE__,        \
              __LINE__, #call, (word), herald_last_error());                                \
      check_failures++;                                                                     \
    }                                                                                       \
  } while (0)

static void records_without_a_server(void) {
  herald_record *r = NULL, *back = NULL;
  herald_record_view view;
  const herald_field *field = NULL;
  const uint8_t *data = NULL;
  size_t len = 0;
  static const uint8_t raw[] = {1, 2, 3};
  herald_field items[2] = {{NULL, HERALD_INT, 7, 0.0, NULL, 0, NULL, 0},
                           {NULL, HERALD_STR, 0, 0.0, "seven", 5, NULL, 0}};
  herald_field array = {NULL, HERALD_ARRAY, 0, 0.0, NULL, 0, items, 2};

  CHECK(herald_record_new(HERALD_KIND_LOG, "ANTENNA.DV01.Mount", &r));
  CHECK(herald_record_set_priority(r, HERALD_WARNING));
  CHECK(herald_record_set_text(r, "encoder fault"));
  CHECK(herald_record_set_source(r, "mount.c", 42, "read_encoder"));
  CHECK(herald_record_set_context(r, "container-3"));
  CHECK(herald_record_add_audience(r, "operator"));
  CHECK(herald_record_add_int(r, "axis", 2));
  CHECK(herald_record_add_float(r, "temperature", -12.5));
  CHECK(herald_record_add_bool(r, "stopped", 1));
  CHECK(herald_record_add_str(r, "unit", "deg"));
  CHECK(herald_record_add_bytes(r, "raw", raw, sizeof raw));
  CHECK(herald_record_add_time(r, "since", 1700000000000000000LL));
  CHECK(herald_record_add_value(r, "samples", &array));
  CHECK(herald_record_set_local_origin(r));

  CHECK(herald_record_encode(r, &data, &len));
  CHECK(herald_record_decode(data, len, &back));
  CHECK(herald_record_read(back, &view));
  EXPECT(view.kind == HERALD_KIND_LOG && view.priority == HERALD_WARNING);
  EXPECT(strcmp(view.subject, "ANTENNA.DV01.Mount") == 0);
  EXPECT(strcmp(view.text, "encoder fault") == 0 && view.text_len == 13);
  EXPECT(strcmp(view.file, "mount.c") == 0 && view.line == 42);
  EXPECT(strcmp(view.routine, "read_encoder") == 0);
  EXPECT(strcmp(view.context, "container-3") == 0);
  EXPECT(view.audience_count == 1 && strcmp(view.audience[0], "operator") == 0);
  EXPECT(view.field_count == 7);
  EXPECT(view.host[0] != '\0' && view.process[0] != '\0');
  EXPECT(view.reply_to == NULL);
  CHECK(herald_record_field(back, "samples", &field));
  EXPECT(field->type == HERALD_ARRAY && field->count == 2);
  EXPECT(field->items[0].i == 7 && strcmp(field->items[1].s, "seven") == 0);
  CHECK(herald_record_field(back, "raw", &field));
  EXPECT(field->type == HERALD_BYTES && field->len == 3 && memcmp(field->s, raw, 3) == 0);
  EXPECT_STATUS(herald_record_field(back, "missing", &field), HERALD_E_NOT_FOUND);

  /* A record's own view may feed its setters (the view is dropped after the change). */
  CHECK(herald_record_read(back, &view));
  CHECK(herald_record_set_text(back, view.routine));
  CHECK(herald_record_field(back, "unit", &field));
  CHECK(herald_record_add_str(back, "unit again", field->s));
  CHECK(herald_record_read(back, &view));
  EXPECT(strcmp(view.text, "read_encoder") == 0 && view.field_count == 8);

  /* A change drops what was read before and reads anew. */
  CHECK(herald_record_clear_fields(back));
  CHECK(herald_record_read(back, &view));
  EXPECT(view.field_count == 0 && view.fields == NULL);
  herald_record_free(back);

  /* Bad values are refused, naming what is wrong, and the record stays as it was. */
  EXPECT_INVALID(herald_record_set_priority(r, 7), "priority 7");
  EXPECT_INVALID(herald_record_set_priority(r, 12), "priority 12");
  EXPECT_INVALID(herald_record_set_subject(r, "A.*"), "subject");
  EXPECT_INVALID(herald_record_set_subject(r, ""), "subject");
  EXPECT_INVALID(herald_record_set_text(r, "\xff\xfe"), "UTF-8");
  EXPECT_INVALID(herald_record_add_bytes(r, "b", NULL, 4), "NULL");
  items[1].type = 99;
  EXPECT_INVALID(herald_record_add_value(r, "samples", &array), "type 99");
  items[1].type = HERALD_STR;
  items[0].type = HERALD_MAP;
  items[0].count = 1;
  items[0].items = &items[0];
  EXPECT_INVALID(herald_record_add_value(r, "unnamed", &array), "map item name is NULL");
  items[0].name = "self"; /* a loop: refused by the depth limit, not followed forever */
  EXPECT_INVALID(herald_record_add_value(r, "loop", &array), "nested deeper than 32");
  {
    /* The depth the wire takes: a field's value and 31 levels below it are sent and read
       back; one more is refused here, where it was made, not by the server later. */
    herald_field chain[33] = {{0}};
    for (int level = 0; level < 33; level++) {
      chain[level].type = HERALD_ARRAY;
      chain[level].count = level + 1 < 33 ? 1 : 0;
      chain[level].items = level + 1 < 33 ? &chain[level + 1] : NULL;
    }
    herald_record *deep = NULL;
    const uint8_t *data;
    size_t len;
    CHECK(herald_record_new(HERALD_KIND_LOG, "A.deep", &deep));
    EXPECT_INVALID(herald_record_add_value(deep, "d", &chain[0]), "nested deeper than 32");
    CHECK(herald_record_add_value(deep, "d", &chain[1]));
    CHECK(herald_record_encode(deep, &data, &len));
    herald_record *again = NULL;
    CHECK(herald_record_decode(data, len, &again));
    herald_record_free(again);
    /* A name occurs once in a record and once in a map, as the server's checks want. */
    CHECK(herald_record_add_int(deep, "n", 1));
    EXPECT_INVALID(herald_record_add_int(deep, "n", 2), "field `n` appears twice");
    herald_field twins[2] = {{0}};
    twins[0].name = twins[1].name = "k";
    twins[0].type = twins[1].type = HERALD_BOOL;
    herald_field map = {0};
    map.type = HERALD_MAP;
    map.items = twins;
    map.count = 2;
    EXPECT_INVALID(herald_record_add_value(deep, "m", &map), "map item `k` appears twice");
    herald_record_free(deep);
  }
  CHECK(herald_record_read(r, &view));
  EXPECT(view.priority == HERALD_WARNING && view.field_count == 7);
  EXPECT_INVALID(herald_record_new(HERALD_KIND_INFO + 1, "x", &r), "kind");
  EXPECT_INVALID(herald_record_decode(raw, sizeof raw, &back), "not a record");
  herald_record_free(r);
}

static void null_arguments(void) {
  herald_client *c = NULL;
  herald_record *r = NULL;
  herald_subscription *s = NULL;
  herald_event *e = NULL;
  herald_record_view view;
  const uint8_t *data;
  size_t len;
  uint64_t count;
  char buf[8];

  EXPECT_INVALID(herald_connect(NULL, "n", &c), "url is NULL");
  EXPECT_INVALID(herald_connect("herald://127.0.0.1:1", "n", NULL), "out is NULL");
  EXPECT_INVALID(herald_connect("http://x", "n", &c), "");
  EXPECT(c == NULL);
  EXPECT_INVALID(herald_flush(NULL, HERALD_ACK_RECEIVED, 10), "client is NULL");
  EXPECT_INVALID(herald_set_threshold(NULL, HERALD_INFO), "client is NULL");
  EXPECT(herald_threshold(NULL) == 0);
  EXPECT_INVALID(herald_log_dropped(NULL, &count), "client is NULL");
  EXPECT_INVALID(herald_abandoned(NULL, &count), "client is NULL");
  EXPECT_INVALID(herald_monitor(NULL, &r), "client is NULL");
  EXPECT_INVALID(herald_server(NULL, buf, sizeof buf), "client is NULL");
  EXPECT(herald_log_enabled(NULL, HERALD_EMERGENCY) == 0);
  EXPECT_INVALID(herald_log(NULL, HERALD_INFO, "a", "t"), "client is NULL");
  EXPECT_INVALID(herald_log_at(NULL, HERALD_INFO, "a", __FILE__, __LINE__, __func__, "t", 1),
                 "client is NULL");
  EXPECT_INVALID(herald_logf(NULL, HERALD_INFO, "a", __FILE__, __LINE__, __func__, "%d", 1),
                 "client is NULL");
  {
    static herald_log_site site = {.file = __FILE__, .routine = __func__, .line = __LINE__};
    EXPECT_INVALID(herald_log_site_at(NULL, HERALD_INFO, "a", &site, "t", 1), "client is NULL");
    EXPECT_INVALID(herald_logf_site(NULL, HERALD_INFO, "a", &site, "%d", 1), "client is NULL");
  }
  {
    /* A deferrable site: its format gets a plan, and the call is still refused. */
    static herald_log_site deferred = {.file = __FILE__, .line = __LINE__, .deferrable = 1};
    static const char format[] = "%d";
    EXPECT_INVALID(herald_logf_site(NULL, HERALD_INFO, "a", &deferred, format, 1),
                   "client is NULL");
    EXPECT(herald_log_site_plan(&deferred, format) != NULL);
    EXPECT_INVALID(herald_log_site_args(NULL, HERALD_INFO, "a", &deferred, NULL, 0),
                   "client is NULL");
  }
  EXPECT(herald_log_site_plan(NULL, "%d") == NULL);
  EXPECT_INVALID(herald_logf_site(NULL, HERALD_INFO, "a", NULL, "%d", 1), "site is NULL");
  EXPECT_INVALID(herald_log_plan_render(NULL, NULL, 0, buf, sizeof buf), "plan is NULL");
  HERALD_LOG(NULL, HERALD_EMERGENCY, "a", "never formatted: %d", 1);
  EXPECT_INVALID(herald_publish(NULL, NULL), "client is NULL");
  EXPECT_INVALID(herald_try_publish(NULL, NULL), "client is NULL");
  EXPECT_INVALID(herald_publish_message(NULL, "a", NULL, NULL), "client is NULL");
  EXPECT_INVALID(herald_publish_sync(NULL, NULL, HERALD_ACK_RECEIVED, 10), "client is NULL");
  EXPECT_INVALID(herald_request(NULL, NULL, 10, &r), "client is NULL");
  EXPECT_INVALID(herald_reply(NULL, NULL, NULL), "client is NULL");
  EXPECT_INVALID(herald_subscribe(NULL, "a", NULL, NULL, NULL, NULL, &s), "client is NULL");
  EXPECT_INVALID(herald_subscribe_group(NULL, "a", NULL, NULL, "g", NULL, NULL, &s), "client is NULL");
  EXPECT_INVALID(herald_poll(NULL, 0, &e), "subscription is NULL");
  EXPECT_INVALID(herald_info_declare(NULL, "T", NULL, "a:bool"), "client is NULL");
  EXPECT_INVALID(herald_info_set(NULL, NULL, HERALD_INFO_UPSERT, NULL), "client is NULL");
  EXPECT_INVALID(herald_info_get(NULL, "a.b", &r), "client is NULL");
  EXPECT_INVALID(herald_info_delete(NULL, "a.b"), "client is NULL");
  EXPECT_INVALID(herald_info_list(NULL, NULL, NULL, NULL, NULL), "client is NULL");
  EXPECT_INVALID(herald_info_subscribe(NULL, NULL, NULL, NULL, NULL, &s), "client is NULL");
  EXPECT_INVALID(herald_record_new(HERALD_KIND_LOG, NULL, &r), "subject is NULL");
  EXPECT_INVALID(herald_record_new(HERALD_KIND_LOG, "a", NULL), "out is NULL");
  EXPECT_INVALID(herald_record_decode(NULL, 3, &r), "NULL");
  EXPECT_INVALID(herald_record_encode(NULL, &data, &len), "record is NULL");
  EXPECT_INVALID(herald_record_read(NULL, &view), "record is NULL");
  EXPECT_INVALID(herald_record_field(NULL, "a", NULL), "record is NULL");
  EXPECT_INVALID(herald_record_set_text(NULL, "t"), "record is NULL");
  EXPECT_INVALID(herald_record_set_source(NULL, NULL, 0, NULL), "record is NULL");
  EXPECT_INVALID(herald_record_add_value(NULL, "a", NULL), "record is NULL");
  CHECK(herald_record_new(HERALD_KIND_LOG, "a", &r));
  EXPECT_INVALID(herald_record_set_text(r, NULL), "value is NULL");
  EXPECT_INVALID(herald_record_add_int(r, NULL, 1), "name is NULL");
  EXPECT_INVALID(herald_record_add_value(r, "v", NULL), "value is NULL");
  EXPECT_INVALID(herald_record_encode(r, NULL, &len), "NULL");
  EXPECT_INVALID(herald_record_read(r, NULL), "out is NULL");
  herald_record_free(r);
  /* Freeing NULL is fine, as free(NULL) is. */
  herald_record_free(NULL);
  herald_event_free(NULL);
  EXPECT_STATUS(herald_unsubscribe(NULL), HERALD_OK);
  EXPECT_STATUS(herald_close(NULL), HERALD_OK);
  EXPECT(strcmp(herald_status_name(HERALD_E_TIMEOUT), "HERALD_E_TIMEOUT") == 0);
  EXPECT(strcmp(herald_status_name(12345), "unknown status") == 0);
}

static void no_server(void) {
  herald_client *c = NULL;
  /* Port 1 on loopback: nothing listens there. */
  EXPECT_STATUS(herald_connect("herald://127.0.0.1:1", "test", &c), HERALD_E_CONNECT);
  EXPECT(strstr(herald_last_error(), "127.0.0.1:1") != NULL);
  EXPECT(c == NULL);
}

int main(void) {
  records_without_a_server();
  null_arguments();
  no_server();
  return check_result("test_args");
}
