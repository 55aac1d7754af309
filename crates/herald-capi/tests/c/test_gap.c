/* Gap notices through the C API: a subscriber slower than its publisher, on a server whose
 * queues hold few records (the script starts it so), gets HERALD_EVENT_GAP events, and the
 * records it got plus those the notices count are exactly what was published. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <time.h>

#include "check.h"

#define PUBLISHED 5000

struct tally {
  long records, lost, gaps, lost_info;
};

static void slow(const herald_event *event, void *user_data) {
  struct tally *tally = (struct tally *)user_data;
  struct timespec pause = {0, 200000L};
  if (event->type == HERALD_EVENT_GAP) {
    __atomic_add_fetch(&tally->gaps, 1, __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&tally->lost_info, (long)event->lost_by_priority[HERALD_INFO],
                       __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&tally->lost, (long)event->lost, __ATOMIC_SEQ_CST);
  } else if (event->type == HERALD_EVENT_RECORD) {
    __atomic_add_fetch(&tally->records, 1, __ATOMIC_SEQ_CST);
    nanosleep(&pause, NULL);
  }
}

int main(int argc, char **argv) {
  const char *url = argc > 1 ? argv[1] : "herald://127.0.0.1:7400";
  herald_client *client = NULL;
  herald_subscription *sub = NULL;
  struct tally tally = {0, 0, 0, 0};
  struct timespec tick = {0, 10000000L};
  int i;
  CHECK(herald_connect(url, "c-test-gap", &client));
  CHECK(herald_subscribe(client, "gap.test", NULL, NULL, slow, &tally, &sub));
  for (i = 0; i < PUBLISHED; i++) CHECK(herald_publish_message(client, "gap.test", NULL, "x"));
  CHECK(herald_flush(client, HERALD_ACK_RECEIVED, 10000));
  for (i = 0; i < 3000; i++) {
    if (__atomic_load_n(&tally.records, __ATOMIC_SEQ_CST) +
            __atomic_load_n(&tally.lost, __ATOMIC_SEQ_CST) >=
        PUBLISHED)
      break;
    nanosleep(&tick, NULL);
  }
  CHECK(herald_unsubscribe(sub));
  printf("test_gap: %ld records, %ld lost in %ld notices\n", tally.records, tally.lost, tally.gaps);
  EXPECT(tally.gaps > 0);
  EXPECT(tally.lost > 0 && tally.lost == tally.lost_info);
  EXPECT(tally.records + tally.lost == PUBLISHED);
  CHECK(herald_close(client));
  return check_result("test_gap");
}
