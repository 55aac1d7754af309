/* The shared test vectors through the C API, byte for byte: each record of testdata/vectors
 * is built with the C API's setters and must encode to exactly the vector's bytes; the
 * vector's bytes decoded by the C API must encode to the same bytes again, and read back
 * (herald_record_read) the same as the record built. */
#include <stdint.h>

#include "check.h"

struct vector {
  const char *name;
  herald_record *(*build)(void);
  const uint8_t *bytes;
  size_t len;
};

#include "vectors.inc"

static int same_text(const char *a, const char *b) {
  if (a == NULL || b == NULL) return a == b;
  return strcmp(a, b) == 0;
}

static int same_fields(const herald_field *a, const herald_field *b, size_t count);

static int same_field(const herald_field *a, const herald_field *b) {
  if (!same_text(a->name, b->name) || a->type != b->type) return 0;
  switch (a->type) {
    case HERALD_BOOL:
    case HERALD_INT:
    case HERALD_UINT:
    case HERALD_TIME:
      return a->i == b->i;
    case HERALD_FLOAT:
      return memcmp(&a->f, &b->f, sizeof a->f) == 0;
    case HERALD_STR:
    case HERALD_BYTES:
      return a->len == b->len && memcmp(a->s, b->s, a->len) == 0 && a->s[a->len] == '\0';
    case HERALD_ARRAY:
    case HERALD_MAP:
      return a->count == b->count && same_fields(a->items, b->items, a->count);
    default:
      return 0;
  }
}

static int same_fields(const herald_field *a, const herald_field *b, size_t count) {
  size_t i;
  for (i = 0; i < count; i++)
    if (!same_field(&a[i], &b[i])) return 0;
  return 1;
}

static int same_view(const herald_record_view *a, const herald_record_view *b) {
  size_t i;
  if (a->kind != b->kind || a->time != b->time || a->priority != b->priority) return 0;
  if (a->text_len != b->text_len || memcmp(a->text, b->text, a->text_len) != 0) return 0;
  if (!same_text(a->subject, b->subject) || !same_text(a->type, b->type)) return 0;
  if (!same_text(a->host, b->host) || !same_text(a->process, b->process) ||
      !same_text(a->thread, b->thread) || !same_text(a->file, b->file) ||
      !same_text(a->routine, b->routine) || !same_text(a->context, b->context) ||
      !same_text(a->stack_id, b->stack_id) || !same_text(a->log_id, b->log_id) ||
      !same_text(a->uri, b->uri) || !same_text(a->reply_to, b->reply_to))
    return 0;
  if (a->line != b->line || a->stack_level != b->stack_level || a->id != b->id) return 0;
  if (a->audience_count != b->audience_count || a->field_count != b->field_count) return 0;
  for (i = 0; i < a->audience_count; i++)
    if (!same_text(a->audience[i], b->audience[i])) return 0;
  return same_fields(a->fields, b->fields, a->field_count);
}

static void hex(const char *label, const uint8_t *data, size_t len) {
  size_t i;
  fprintf(stderr, "  %s:", label);
  for (i = 0; i < len; i++) fprintf(stderr, "%02x", data[i]);
  fprintf(stderr, "\n");
}

int main(void) {
  size_t n, count = sizeof VECTORS / sizeof VECTORS[0];
  for (n = 0; n < count; n++) {
    const struct vector *v = &VECTORS[n];
    herald_record *built = v->build(), *decoded = NULL;
    const uint8_t *data = NULL;
    size_t len = 0;
    herald_record_view built_view, decoded_view;

    CHECK(herald_record_encode(built, &data, &len));
    if (len != v->len || memcmp(data, v->bytes, len) != 0) {
      fprintf(stderr, "%s: the record built through the C API encodes differently\n", v->name);
      hex("built ", data, len);
      hex("vector", v->bytes, v->len);
      check_failures++;
    }
    CHECK(herald_record_decode(v->bytes, v->len, &decoded));
    CHECK(herald_record_encode(decoded, &data, &len));
    if (len != v->len || memcmp(data, v->bytes, len) != 0) {
      fprintf(stderr, "%s: decoded and encoded again, the bytes differ\n", v->name);
      check_failures++;
    }
    CHECK(herald_record_read(built, &built_view));
    CHECK(herald_record_read(decoded, &decoded_view));
    if (!same_view(&built_view, &decoded_view)) {
      fprintf(stderr, "%s: the decoded record reads differently from the one built\n", v->name);
      check_failures++;
    }
    herald_record_free(built);
    herald_record_free(decoded);
  }
  printf("test_vectors: %zu records\n", count);
  return check_result("test_vectors");
}
