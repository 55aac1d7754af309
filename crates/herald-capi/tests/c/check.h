/* The C tests' few helpers: CHECK a call's status, EXPECT a condition, count failures. */
#ifndef HERALD_TEST_CHECK_H
#define HERALD_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "herald.h"

static int check_failures = 0;

/* Fails the test (and goes on) when `call` does not return `want`. */
#define EXPECT_STATUS(call, want)                                                          \
  do {                                                                                     \
    int got_ = (call);                                                                     \
    if (got_ != (want)) {                                                                  \
      fprintf(stderr, "%s:%d: %s returned %s (%d), expected %s: %s\n", __FILE__, __LINE__, \
              #call, herald_status_name(got_), got_, herald_status_name(want),             \
              herald_last_error());                                                        \
      check_failures++;                                                                    \
    }                                                                                      \
  } while (0)

/* Stops the test when `call` fails: what follows depends on it. */
#define CHECK(call)                                                                        \
  do {                                                                                     \
    int got_ = (call);                                                                     \
    if (got_ != HERALD_OK) {                                                               \
      fprintf(stderr, "%s:%d: %s failed with %s: %s\n", __FILE__, __LINE__, #call,         \
              herald_status_name(got_), herald_last_error());                              \
      exit(1);                                                                             \
    }                                                                                      \
  } while (0)

#define EXPECT(cond)                                                                       \
  do {                                                                                     \
    if (!(cond)) {                                                                         \
      fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);                  \
      check_failures++;                                                                    \
    }                                                                                      \
  } while (0)

/* The test's exit status: 0 when nothing failed. */
static int check_result(const char *test) {
  if (check_failures != 0) {
    fprintf(stderr, "%s: %d check(s) failed\n", test, check_failures);
    return 1;
  }
  printf("%s: ok\n", test);
  return 0;
}

#endif
