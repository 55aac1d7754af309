/* herald_logf.h (included by herald.h): what HERALD_LOG does after its threshold check.
 *
 * For a format that is a string literal (herald_log_site.deferrable), the library reads the
 * format once into a plan (herald_log_site_plan) and each call only copies its arguments
 * (herald_fmt_capture: numbers as they are, the bytes of strings); the logger's background
 * thread makes the text, exactly as printf would. Otherwise, or when the arguments do not
 * fit in HERALD_LOG_ARGS_BYTES, the text is formatted here, on the calling thread, by
 * herald_format, printf-style formatting fast enough to stay inside the logger's budget.
 *
 * glibc's vsnprintf costs ~150 ns on our 2-core test machines even for "%d of %d", as much
 * as the whole log call is allowed. This formatter copies literal text and converts the
 * common conversions itself — %d %i %u %x %X %o with the length modifiers hh h l ll j z t,
 * the flags '-' and '0' and a width; %s with a width and a precision; %c; %% — and hands
 * every other conversion (floats, %p, '+', ' ', '#', integer precision, wide characters) to
 * snprintf, one conversion at a time, so the output is always what printf would write.
 * %n writes nothing (a logger has no business writing through its arguments).
 * tests/c/test_format.c compares it with snprintf. */
#ifndef HERALD_LOGF_H
#define HERALD_LOGF_H

#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "herald.h"

#ifdef __cplusplus
extern "C" {
#endif

/* As snprintf: the same output and return value (the length the whole text needs). */
static inline int herald_format(char *buf, size_t cap, const char *format, ...)
    HERALD_PRINTF_(3, 4);

/* As vsnprintf. */
static inline int herald_vformat(char *buf, size_t cap, const char *format, va_list args)
    HERALD_PRINTF_(3, 0);

/* Formats as printf and logs as HERALD_LOG does, without the threshold check. `file` and
 * `routine` must stay valid as long as the client lives (string literals, __FILE__,
 * __func__). Texts up to 511 bytes are formatted on the stack, longer ones once more on the
 * heap. */
static inline int herald_logf(const herald_client *client, int priority, const char *subject,
                              const char *file, int line, const char *routine,
                              const char *format, ...) HERALD_PRINTF_(7, 8);

/* As herald_logf, from a call site (herald_log_site: its file and routine are checked once):
 * what HERALD_LOG calls. A deferrable site's arguments are captured, not formatted. */
static inline int herald_logf_site(const herald_client *client, int priority,
                                   const char *subject, herald_log_site *site,
                                   const char *format, ...) HERALD_PRINTF_(5, 6);


/* The text being made: writes stop at `cap - 1`, `len` counts everything, as snprintf. */
struct herald_fmt_out {
  char *buf;
  size_t cap;
  size_t len;
};

static inline void herald_fmt_put(struct herald_fmt_out *o, const char *s, size_t n) {
  if (o->len + 1 < o->cap) {
    size_t room = o->cap - 1 - o->len, k = n < room ? n : room, i;
    /* Pieces between conversions and numbers are short: a loop beats a call to memcpy. */
    if (k <= 16) {
      for (i = 0; i < k; i++) o->buf[o->len + i] = s[i];
    } else {
      memcpy(o->buf + o->len, s, k);
    }
  }
  o->len += n;
}

static inline void herald_fmt_pad(struct herald_fmt_out *o, char c, size_t n) {
  char run[32];
  memset(run, c, sizeof run);
  while (n > 0) {
    size_t k = n < sizeof run ? n : sizeof run;
    herald_fmt_put(o, run, k);
    n -= k;
  }
}

/* Puts `n` bytes at `s` in a field of `width`, on the left when `left`. */
static inline void herald_fmt_field(struct herald_fmt_out *o, const char *s, size_t n, size_t width, int left) {
  if (!left && width > n) herald_fmt_pad(o, ' ', width - n);
  herald_fmt_put(o, s, n);
  if (left && width > n) herald_fmt_pad(o, ' ', width - n);
}

/* A conversion, parsed. */
struct herald_fmt_spec {
  int left, zero, plus, space, alt; /* flags */
  int width, precision;             /* -1: none */
  int length; /* 'H' hh, 'h', 'l', 'L' ll, 'j', 'z', 't', 'D' long double, 0 none */
  char conversion;
};

static inline void herald_fmt_integer(struct herald_fmt_out *o, const struct herald_fmt_spec *s, uintmax_t magnitude, int negative) {
  static const char lower[] = "0123456789abcdef", upper[] = "0123456789ABCDEF";
  const char *digits = s->conversion == 'X' ? upper : lower;
  unsigned base = s->conversion == 'x' || s->conversion == 'X' ? 16u
                  : s->conversion == 'o'                       ? 8u
                                                               : 10u;
  char text[72];
  size_t at = sizeof text, n, width = s->width > 0 ? (size_t)s->width : 0;
  /* Constant divisors: the compiler turns them into multiplications (a division by a
   * variable is a slow instruction per digit). */
  if (base == 10u) {
    do {
      text[--at] = (char)('0' + magnitude % 10u);
      magnitude /= 10u;
    } while (magnitude != 0);
  } else if (base == 16u) {
    do {
      text[--at] = digits[magnitude & 15u];
      magnitude >>= 4;
    } while (magnitude != 0);
  } else {
    do {
      text[--at] = (char)('0' + (magnitude & 7u));
      magnitude >>= 3;
    } while (magnitude != 0);
  }
  n = sizeof text - at;
  if (negative) {
    if (s->zero && !s->left) {
      herald_fmt_put(o, "-", 1);
      if (width > n + 1) herald_fmt_pad(o, '0', width - n - 1);
      herald_fmt_put(o, text + at, n);
      return;
    }
    text[--at] = '-';
    n++;
  } else if (s->zero && !s->left && width > n) {
    herald_fmt_pad(o, '0', width - n);
    herald_fmt_put(o, text + at, n);
    return;
  }
  herald_fmt_field(o, text + at, n, width, s->left);
}

/* Rebuilds the conversion `s` as a format of its own, with '*' replaced by the numbers. */
static inline void herald_fmt_respell(const struct herald_fmt_spec *s, char *format) {
  char *p = format;
  static const char *lengths[] = {"hh", "h", "l", "ll", "j", "z", "t", "L"};
  static const char codes[] = "HhlLjztD";
  const char *code;
  *p++ = '%';
  if (s->left) *p++ = '-';
  if (s->zero) *p++ = '0';
  if (s->plus) *p++ = '+';
  if (s->space) *p++ = ' ';
  if (s->alt) *p++ = '#';
  if (s->width >= 0) p += sprintf(p, "%d", s->width);
  if (s->precision >= 0) p += sprintf(p, ".%d", s->precision);
  if (s->length != 0 && (code = strchr(codes, s->length)) != NULL) {
    const char *text = lengths[code - codes];
    size_t n = strlen(text);
    memcpy(p, text, n);
    p += n;
  }
  *p++ = s->conversion;
  *p = '\0';
}

/* Formats one conversion with snprintf, taking its argument of the right type. */
static inline void herald_fmt_fallback(struct herald_fmt_out *o, const struct herald_fmt_spec *s, va_list *args) {
  char format[48];
  char *at = o->len + 1 < o->cap ? o->buf + o->len : NULL;
  size_t room = at != NULL ? o->cap - o->len : 0;
  char scratch[1];
  int n = 0;
  herald_fmt_respell(s, format);
  if (at == NULL) {
    at = scratch;
    room = 0;
  }
  switch (s->conversion) {
    case 'd': case 'i':
      switch (s->length) {
        case 'l': n = snprintf(at, room, format, va_arg(*args, long)); break;
        case 'L': case 'D': n = snprintf(at, room, format, va_arg(*args, long long)); break;
        case 'j': n = snprintf(at, room, format, va_arg(*args, intmax_t)); break;
        case 'z': n = snprintf(at, room, format, (ptrdiff_t)va_arg(*args, size_t)); break;
        case 't': n = snprintf(at, room, format, va_arg(*args, ptrdiff_t)); break;
        default: n = snprintf(at, room, format, va_arg(*args, int)); break;
      }
      break;
    case 'u': case 'o': case 'x': case 'X':
      switch (s->length) {
        case 'l': n = snprintf(at, room, format, va_arg(*args, unsigned long)); break;
        case 'L': case 'D': n = snprintf(at, room, format, va_arg(*args, unsigned long long)); break;
        case 'j': n = snprintf(at, room, format, va_arg(*args, uintmax_t)); break;
        case 'z': n = snprintf(at, room, format, va_arg(*args, size_t)); break;
        case 't': n = snprintf(at, room, format, va_arg(*args, ptrdiff_t)); break;
        default: n = snprintf(at, room, format, va_arg(*args, unsigned)); break;
      }
      break;
    case 'f': case 'F': case 'e': case 'E': case 'g': case 'G': case 'a': case 'A':
      if (s->length == 'D')
        n = snprintf(at, room, format, va_arg(*args, long double));
      else
        n = snprintf(at, room, format, va_arg(*args, double));
      break;
    case 'c':
      if (s->length == 'l')
        n = snprintf(at, room, format, va_arg(*args, wint_t));
      else
        n = snprintf(at, room, format, va_arg(*args, int));
      break;
    case 's':
      if (s->length == 'l')
        n = snprintf(at, room, format, va_arg(*args, const wchar_t *));
      else
        n = snprintf(at, room, format, va_arg(*args, const char *));
      break;
    case 'p':
      n = snprintf(at, room, format, va_arg(*args, void *));
      break;
    default:
      break;
  }
  if (n > 0) o->len += (size_t)n;
}

/* Reads a conversion after its '%' at `*p`; returns 0 for one that is not (written as is). */
static inline int herald_fmt_parse(const char **p, struct herald_fmt_spec *s, va_list *args) {
  const char *q = *p;
  s->left = s->zero = s->plus = s->space = s->alt = 0;
  s->length = 0;
  s->conversion = 0;
  s->width = -1;
  s->precision = -1;
  for (;; q++) {
    if (*q == '-') s->left = 1;
    else if (*q == '0') s->zero = 1;
    else if (*q == '+') s->plus = 1;
    else if (*q == ' ') s->space = 1;
    else if (*q == '#') s->alt = 1;
    else break;
  }
  if (*q == '*') {
    s->width = va_arg(*args, int);
    if (s->width < 0) {
      s->left = 1;
      s->width = s->width == INT_MIN ? 0 : -s->width;
    }
    q++;
  } else if (*q >= '0' && *q <= '9') {
    s->width = 0;
    while (*q >= '0' && *q <= '9' && s->width < 100000) s->width = s->width * 10 + (*q++ - '0');
  }
  if (*q == '.') {
    q++;
    if (*q == '*') {
      s->precision = va_arg(*args, int);
      if (s->precision < 0) s->precision = -1;
      q++;
    } else {
      s->precision = 0;
      while (*q >= '0' && *q <= '9' && s->precision < 100000)
        s->precision = s->precision * 10 + (*q++ - '0');
    }
  }
  switch (*q) {
    case 'h': s->length = q[1] == 'h' ? 'H' : 'h'; q += q[1] == 'h' ? 2 : 1; break;
    case 'l': s->length = q[1] == 'l' ? 'L' : 'l'; q += q[1] == 'l' ? 2 : 1; break;
    case 'j': case 'z': case 't': s->length = *q++; break;
    case 'L': s->length = 'D'; q++; break;
    default: break;
  }
  switch (*q) {
    case 'd': case 'i': case 'u': case 'o': case 'x': case 'X': case 'f': case 'F': case 'e':
    case 'E': case 'g': case 'G': case 'a': case 'A': case 'c': case 's': case 'p': case 'n':
    case '%':
      break;
    default:
      return 0; /* not a conversion (a '\0' too) */
  }
  s->conversion = *q;
  *p = q + 1;
  return 1;
}

/* Whether `s` is one this file converts itself. */
static inline int herald_fmt_fast(const struct herald_fmt_spec *s) {
  if (s->plus || s->space || s->alt) return 0;
  switch (s->conversion) {
    case 'd': case 'i': case 'u': case 'o': case 'x': case 'X':
      return s->precision < 0 && s->length != 'D';
    case 's': case 'c':
      return s->length != 'l' && !s->zero;
    default:
      return 0;
  }
}

static inline void herald_fmt_convert(struct herald_fmt_out *o, const struct herald_fmt_spec *s, va_list *args) {
  intmax_t value;
  uintmax_t magnitude;
  switch (s->conversion) {
    case 'd': case 'i':
      switch (s->length) {
        case 'H': value = (signed char)va_arg(*args, int); break;
        case 'h': value = (short)va_arg(*args, int); break;
        case 'l': value = va_arg(*args, long); break;
        case 'L': value = va_arg(*args, long long); break;
        case 'j': value = va_arg(*args, intmax_t); break;
        case 'z': value = (intmax_t)va_arg(*args, size_t); break;
        case 't': value = va_arg(*args, ptrdiff_t); break;
        default: value = va_arg(*args, int); break;
      }
      magnitude = value < 0 ? (uintmax_t)0 - (uintmax_t)value : (uintmax_t)value;
      herald_fmt_integer(o, s, magnitude, value < 0);
      return;
    case 'u': case 'o': case 'x': case 'X':
      switch (s->length) {
        case 'H': magnitude = (unsigned char)va_arg(*args, unsigned); break;
        case 'h': magnitude = (unsigned short)va_arg(*args, unsigned); break;
        case 'l': magnitude = va_arg(*args, unsigned long); break;
        case 'L': magnitude = va_arg(*args, unsigned long long); break;
        case 'j': magnitude = va_arg(*args, uintmax_t); break;
        case 'z': magnitude = va_arg(*args, size_t); break;
        case 't': magnitude = (uintmax_t)va_arg(*args, ptrdiff_t); break;
        default: magnitude = va_arg(*args, unsigned); break;
      }
      herald_fmt_integer(o, s, magnitude, 0);
      return;
    case 'c': {
      char c = (char)va_arg(*args, int);
      herald_fmt_field(o, &c, 1, s->width > 0 ? (size_t)s->width : 0, s->left);
      return;
    }
    case 's': {
      const char *text = va_arg(*args, const char *);
      size_t n;
      if (text == NULL) text = s->precision < 0 || s->precision >= 6 ? "(null)" : "";
      if (s->precision < 0) {
        n = strlen(text);
      } else {
        const char *end = (const char *)memchr(text, '\0', (size_t)s->precision);
        n = end != NULL ? (size_t)(end - text) : (size_t)s->precision;
      }
      herald_fmt_field(o, text, n, s->width > 0 ? (size_t)s->width : 0, s->left);
      return;
    }
    default:
      return;
  }
}

static inline size_t herald_fmt_format(char *buf, size_t cap, const char *fmt, va_list args) {
  struct herald_fmt_out o;
  struct herald_fmt_spec s;
  va_list rest;
  const char *p = fmt;
  o.buf = buf;
  o.cap = cap;
  o.len = 0;
  va_copy(rest, args);
  while (*p != '\0') {
    /* The text up to the next '%' (formats are short: a scan beats strchr's call). */
    const char *start = p;
    while (*p != '\0' && *p != '%') p++;
    herald_fmt_put(&o, start, (size_t)(p - start));
    if (*p == '\0') break;
    p++;
    if (*p == '%') {
      herald_fmt_put(&o, "%", 1);
      p++;
    } else if (!herald_fmt_parse(&p, &s, &rest)) {
      herald_fmt_put(&o, "%", 1); /* not a conversion: written as it stands */
    } else if (s.conversion == '%') {
      herald_fmt_put(&o, "%", 1); /* "%5%": a '%' with flags or a width is one '%' */
    } else if (s.conversion == 'n') {
      (void)va_arg(rest, void *);
    } else if (herald_fmt_fast(&s)) {
      herald_fmt_convert(&o, &s, &rest);
    } else {
      herald_fmt_fallback(&o, &s, &rest);
    }
  }
  va_end(rest);
  if (cap > 0) buf[o.len < cap ? o.len : cap - 1] = '\0';
  return o.len;
}

/* As vsnprintf (the same output, the same return value), faster. */
static inline int herald_vformat(char *buf, size_t cap, const char *fmt, va_list args) {
  if (fmt == NULL) return -1;
  return (int)herald_fmt_format(buf, cap, fmt, args);
}

static inline int herald_format(char *buf, size_t cap, const char *fmt, ...) {
  va_list args;
  int n;
  va_start(args, fmt);
  n = herald_vformat(buf, cap, fmt, args);
  va_end(args);
  return n;
}

/* Formats `fmt` with `args` for a log call: into `stack` (`cap` bytes) or, for a longer
 * text, into a malloc'ed buffer left in `*heap` (free it after the call; if malloc fails,
 * the first cap - 1 bytes are sent). Returns the text and stores its length in `*len`; a
 * NULL `fmt` gives no text. */
static inline const char *herald_fmt_log_text(char *stack, size_t cap, char **heap, size_t *len,
                                              const char *fmt, va_list args) {
  va_list again;
  size_t n;
  *heap = NULL;
  *len = 0;
  if (fmt == NULL) return NULL;
  va_copy(again, args);
  n = herald_fmt_format(stack, cap, fmt, args);
  if (n < cap || (*heap = (char *)malloc(n + 1)) == NULL) {
    va_end(again);
    *len = n < cap ? n : cap - 1;
    return stack;
  }
  (void)herald_fmt_format(*heap, n + 1, fmt, again);
  va_end(again);
  *len = n;
  return *heap;
}

static inline int herald_logf(const herald_client *client, int priority, const char *subject, const char *file,
                int line, const char *routine, const char *fmt, ...) {
  char stack[512];
  char *heap;
  const char *text;
  size_t n;
  int status;
  va_list args;
  va_start(args, fmt);
  text = herald_fmt_log_text(stack, sizeof stack, &heap, &n, fmt, args);
  va_end(args);
  status = herald_log_at(client, priority, subject, file, (uint32_t)line, routine, text, n);
  free(heap);
  return status;
}

/* Copies the arguments `plan` lists into `out` (`cap` bytes), in the layout the library
 * renders (docs/c-api.md, "Deferred formatting"); returns the bytes used, or (size_t)-1 if
 * they do not fit. */
static inline size_t herald_fmt_capture(const herald_log_plan *plan, unsigned char *out, size_t cap,
                                        va_list args) {
  size_t n = 0;
  uint32_t i;
  long long star = -1; /* the last int taken: a '*' precision for the string after it */
  for (i = 0; i < plan->count; i++) {
    int64_t word;
    switch (plan->kinds[i]) {
      case HERALD_ARG_INT: {
        int v = va_arg(args, int);
        star = v;
        word = v;
        break;
      }
      case HERALD_ARG_LONG: word = (int64_t)va_arg(args, long); break;
      case HERALD_ARG_LONG_LONG: word = (int64_t)va_arg(args, long long); break;
      case HERALD_ARG_INTMAX: word = (int64_t)va_arg(args, intmax_t); break;
      case HERALD_ARG_SIZE: word = (int64_t)va_arg(args, size_t); break;
      case HERALD_ARG_PTRDIFF: word = (int64_t)va_arg(args, ptrdiff_t); break;
      case HERALD_ARG_POINTER: word = (int64_t)(intptr_t)va_arg(args, void *); break;
      case HERALD_ARG_DOUBLE: {
        double v = va_arg(args, double);
        if (cap - n < sizeof v) return (size_t)-1;
        memcpy(out + n, &v, sizeof v);
        n += sizeof v;
        continue;
      }
      case HERALD_ARG_STRING: {
        const char *s = va_arg(args, const char *);
        uint16_t limit = plan->limits[i], len;
        size_t k;
        if (s == NULL) {
          len = 0xFFFF;
          k = 0;
        } else {
          if (limit == HERALD_ARG_NO_LIMIT || (limit == HERALD_ARG_STAR_LIMIT && star < 0)) {
            k = strlen(s);
          } else {
            size_t most = limit == HERALD_ARG_STAR_LIMIT ? (size_t)star : (size_t)limit;
            const char *end = (const char *)memchr(s, '\0', most);
            k = end != NULL ? (size_t)(end - s) : most;
          }
          if (k >= cap) return (size_t)-1;
          len = (uint16_t)k;
        }
        if (cap - n < sizeof len + k) return (size_t)-1;
        memcpy(out + n, &len, sizeof len);
        if (k > 0) memcpy(out + n + sizeof len, s, k);
        n += sizeof len + k;
        continue;
      }
      default:
        return (size_t)-1;
    }
    if (cap - n < sizeof word) return (size_t)-1;
    memcpy(out + n, &word, sizeof word);
    n += sizeof word;
  }
  return n;
}

static inline int herald_logf_site(const herald_client *client, int priority, const char *subject,
                                   herald_log_site *site, const char *fmt, ...) {
  char stack[512];
  char *heap;
  const char *text;
  size_t n;
  int status;
  va_list args;
  const herald_log_plan *plan;
#if defined(__GNUC__) || defined(__clang__)
  /* The plan the library left in the site; asked for only the first time. (A NULL site
   * gets no plan, and the library's refusal below.) */
  plan = site != NULL ? __atomic_load_n(&site->plan, __ATOMIC_ACQUIRE) : NULL;
  if (plan == NULL || plan->format != fmt) plan = herald_log_site_plan(site, fmt);
#else
  plan = herald_log_site_plan(site, fmt);
#endif
  if (plan != NULL) {
    unsigned char captured[HERALD_LOG_ARGS_BYTES];
    va_start(args, fmt);
    n = herald_fmt_capture(plan, captured, sizeof captured, args);
    va_end(args);
    if (n != (size_t)-1)
      return herald_log_site_args(client, priority, subject, site, captured, n);
  }
  va_start(args, fmt);
  text = herald_fmt_log_text(stack, sizeof stack, &heap, &n, fmt, args);
  va_end(args);
  status = herald_log_site_at(client, priority, subject, site, text, n);
  free(heap);
  return status;
}

#ifdef __cplusplus
}
#endif

#endif
