/*
 * logger.c: logs to Herald from C. HERALD_LOG at a few priorities, one record with typed
 * fields, then a wait until the server has received all of it.
 *
 * Build (after `scripts/install-capi.sh PREFIX`):
 *   export PKG_CONFIG_PATH=PREFIX/lib/pkgconfig
 *   cc -std=c99 -Wall -Wextra -pedantic logger.c $(pkg-config --cflags --libs herald) -o logger
 * Run, with a server up (`herald serve`) and something watching (`herald tail`, or
 * examples/c/subscriber.c with the same subject):
 *   ./logger [URL] [SUBJECT]          defaults: herald://127.0.0.1:7400 DEMO.LOGGER
 *
 * It sends 4 records on SUBJECT (INFO, WARNING, ERROR, NOTICE; the DEBUG one is below the
 * logger's threshold) and exits 0 once the server has acknowledged them, non-zero on any
 * failure.
 */
#include <stdio.h>

#include "herald.h"

#define DEFAULT_URL "herald://127.0.0.1:7400"
#define DEFAULT_SUBJECT "DEMO.LOGGER"
/* How long to wait for the server's acknowledgement, ms. */
#define FLUSH_TIMEOUT_MS 5000

/* Prints what failed with the library's message and returns the exit code for it. */
static int fail(const char *what, int status) {
  fprintf(stderr, "logger: %s: %s: %s\n", what, herald_status_name(status), herald_last_error());
  return 1;
}

/*
 * Makes the record a calibration routine would log: text for people, fields for programs
 * (viewers filter and plot them). Each step runs only while those before succeeded, so the
 * first failure's message is the one left in herald_last_error().
 */
static int make_calibration_record(const char *subject, herald_record **out) {
  herald_record *record = NULL;
  int status = herald_record_new(HERALD_KIND_LOG, subject, &record);
  if (status == HERALD_OK) status = herald_record_set_priority(record, HERALD_NOTICE);
  if (status == HERALD_OK)
    status = herald_record_set_text(record, "calibration of sensor PT-101 done");
  /* Host, process and thread, as HERALD_LOG's records have them. */
  if (status == HERALD_OK) status = herald_record_set_local_origin(record);
  if (status == HERALD_OK) status = herald_record_set_source(record, __FILE__, __LINE__, __func__);
  if (status == HERALD_OK) status = herald_record_add_str(record, "sensor", "PT-101");
  if (status == HERALD_OK) status = herald_record_add_bool(record, "converged", 1);
  if (status == HERALD_OK) status = herald_record_add_int(record, "iterations", 17);
  if (status == HERALD_OK) status = herald_record_add_float(record, "residual", 0.0042);
  if (status == HERALD_OK) status = herald_record_add_time(record, "started", herald_now());
  if (status != HERALD_OK) {
    herald_record_free(record);
    return status;
  }
  *out = record;
  return HERALD_OK;
}

/* Logs and publishes on `subject`, then waits for the server: 0, or 1 after saying why. */
static int log_and_flush(herald_client *client, const char *subject) {
  herald_record *record = NULL;
  uint64_t dropped = 0;
  int status;

  /*
   * HERALD_LOG never blocks: the record goes to the logger's buffer and a library thread
   * sends it. Below the threshold (INFO unless changed) the arguments are not even
   * evaluated, so DEBUG lines may stay in code that runs at high rates.
   */
  HERALD_LOG(client, HERALD_DEBUG, subject, "raw ADC value %d", 5120);
  HERALD_LOG(client, HERALD_INFO, subject, "pump %s started at %d rpm", "P1", 1450);
  HERALD_LOG(client, HERALD_WARNING, subject, "pressure %.1f bar above limit %.1f bar", 3.4,
             3.2);
  HERALD_LOG(client, HERALD_ERROR, subject, "valve %s did not close within %d ms", "V7", 500);

  /* A record built field by field, for what should be machine-readable. */
  status = make_calibration_record(subject, &record);
  if (status != HERALD_OK) return fail("build the calibration record", status);
  status = herald_publish(client, record);
  herald_record_free(record); /* publish copied it */
  if (status != HERALD_OK) return fail("publish", status);

  /* Wait until the server has everything: what was logged and what was published. */
  status = herald_flush(client, HERALD_ACK_RECEIVED, FLUSH_TIMEOUT_MS);
  if (status != HERALD_OK) return fail("flush", status);

  /* The logger drops records rather than block when its buffer is full: a check must
   * notice that. */
  status = herald_log_dropped(client, &dropped);
  if (status != HERALD_OK) return fail("read the drop count", status);
  if (dropped > 0) {
    fprintf(stderr, "logger: %llu log records were dropped\n", (unsigned long long)dropped);
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  const char *url = argc > 1 ? argv[1] : DEFAULT_URL;
  const char *subject = argc > 2 ? argv[2] : DEFAULT_SUBJECT;
  herald_client *client = NULL;
  int exit_code, status;

  /* The name shows in the server's monitor (`herald monitor`). */
  status = herald_connect(url, "demo-logger", &client);
  if (status != HERALD_OK) return fail("connect", status);

  exit_code = log_and_flush(client, subject);

  /* Always close: it sends what is still buffered and frees the client. */
  status = herald_close(client);
  if (status != HERALD_OK) return fail("close", status);
  if (exit_code == 0) printf("logger: 4 records sent on %s\n", subject);
  return exit_code;
}
