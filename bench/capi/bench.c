/* The C API measured the way `herald bench` measures the Rust client:
 *   bench pub URL RECORDS SIZE   records/s into the server through herald_publish (a log
 *                                record of SIZE bytes of text, restamped each time, as
 *                                `herald bench pub`), timed until the server has them all
 *   bench logger URL             ns per HERALD_LOG call (batches of 8 timed together, 24,000
 *                                calls per thread, about 128 bytes of formatted text) from 1,
 *                                2 and 8 threads at once, as `herald bench logger`
 * bench/capi.sh runs both beside `herald bench` against one server. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "herald.h"

#define BATCH_CALLS 8
#define CALLS_PER_THREAD 24000

#define CHECK(call)                                                                       \
  do {                                                                                    \
    int status_ = (call);                                                                 \
    if (status_ != HERALD_OK) {                                                           \
      fprintf(stderr, "%s failed: %s: %s\n", #call, herald_status_name(status_),          \
              herald_last_error());                                                       \
      exit(1);                                                                            \
    }                                                                                     \
  } while (0)

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int publish(const char *url, long records, long size) {
  herald_client *client = NULL;
  herald_record *record = NULL;
  char *text = malloc((size_t)size + 1);
  int64_t start;
  double seconds, rate;
  long i;
  memset(text, 'x', (size_t)size);
  text[size] = '\0';
  CHECK(herald_connect(url, "bench-c-pub", &client));
  CHECK(herald_record_new(HERALD_KIND_LOG, "bench.subject", &record));
  CHECK(herald_record_set_type(record, "bench"));
  CHECK(herald_record_set_local_origin(record));
  CHECK(herald_record_set_text(record, text));
  start = now_ns();
  for (i = 0; i < records; i++) {
    CHECK(herald_record_set_time(record, herald_now()));
    CHECK(herald_publish(client, record));
  }
  CHECK(herald_flush(client, HERALD_ACK_RECEIVED, 60000));
  seconds = (double)(now_ns() - start) / 1e9;
  rate = (double)records / seconds;
  printf("c pub: %ld x %ld B in %.3f s: %.0f msg/s, %.1f MB/s\n", records, size, seconds, rate,
         rate * (double)size / 1e6);
  herald_record_free(record);
  free(text);
  CHECK(herald_close(client));
  return 0;
}

struct worker {
  herald_client *client;
  pthread_barrier_t *start;
  int64_t *samples; /* ns per call, one per batch */
};

static const char *PADDING =
    "the azimuth encoder of the mount reports a step larger than the servo loop allows, at";

static void *log_calls(void *arg) {
  struct worker *w = (struct worker *)arg;
  int b, i;
  pthread_barrier_wait(w->start);
  for (b = 0; b < CALLS_PER_THREAD / BATCH_CALLS; b++) {
    int64_t begin = now_ns();
    for (i = 0; i < BATCH_CALLS; i++)
      HERALD_LOG(w->client, HERALD_INFO, "bench.logger", "%s step %d of %d", PADDING, b, i);
    w->samples[b] = (now_ns() - begin) / BATCH_CALLS;
  }
  return NULL;
}

static int by_value(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static int logger(const char *url) {
  static const int thread_counts[] = {1, 2, 8};
  size_t t;
  printf("c logger: ns per HERALD_LOG call (batches of 8), ~128 B formatted text\n");
  for (t = 0; t < sizeof thread_counts / sizeof thread_counts[0]; t++) {
    int threads = thread_counts[t], i;
    size_t per = CALLS_PER_THREAD / BATCH_CALLS, n = per * (size_t)threads;
    herald_client *client = NULL;
    herald_options options;
    pthread_t ids[8];
    struct worker workers[8];
    pthread_barrier_t start;
    int64_t *samples = malloc(n * sizeof *samples);
    double mean = 0;
    uint64_t dropped = 0;
    /* As `herald bench logger`: a buffer that holds every call, so no call finds it full. */
    herald_options_init(&options);
    options.name = "bench-c-logger";
    options.log_subject = "bench.logger";
    options.log_buffer_records = (size_t)CALLS_PER_THREAD * 8 * 2;
    CHECK(herald_connect_with(url, &options, &client));
    pthread_barrier_init(&start, NULL, (unsigned)threads);
    for (i = 0; i < threads; i++) {
      workers[i].client = client;
      workers[i].start = &start;
      workers[i].samples = samples + (size_t)i * per;
      pthread_create(&ids[i], NULL, log_calls, &workers[i]);
    }
    for (i = 0; i < threads; i++) pthread_join(ids[i], NULL);
    pthread_barrier_destroy(&start);
    CHECK(herald_flush(client, HERALD_ACK_RECEIVED, 60000));
    CHECK(herald_log_dropped(client, &dropped));
    for (i = 0; i < (int)n; i++) mean += (double)samples[i];
    qsort(samples, n, sizeof *samples, by_value);
    printf("  %d threads: median %lld ns, p99 %lld ns, mean %.0f ns, %llu dropped\n", threads,
           (long long)samples[n / 2], (long long)samples[n * 99 / 100], mean / (double)n,
           (unsigned long long)dropped);
    free(samples);
    CHECK(herald_close(client));
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 3 && strcmp(argv[1], "pub") == 0)
    return publish(argv[2], argc > 3 ? atol(argv[3]) : 1000000, argc > 4 ? atol(argv[4]) : 128);
  if (argc >= 3 && strcmp(argv[1], "logger") == 0) return logger(argv[2]);
  fprintf(stderr, "usage: %s pub URL [RECORDS [SIZE]] | logger URL\n", argv[0]);
  return 2;
}
