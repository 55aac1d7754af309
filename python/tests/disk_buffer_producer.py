"""A producer for the disk buffer tests, run as a process of its own so that a test can end
it as a crash would (SIGKILL) and start it again.

    python disk_buffer_producer.py URL DIR PREFIX COUNT [QUOTA] [close|hang]

Logs COUNT records ``PREFIX i`` (every tenth at ERROR, the rest at DEBUG) on logger
``spool.test`` through a HeraldHandler with the disk buffer in DIR, prints ``logged`` and,
once the memory buffer is empty (on disk or sent), ``settled``; then closes the handler
(``close``, the default) or waits to be killed (``hang``)."""

from __future__ import annotations

import logging
import sys
import time

from herald.logging import HeraldHandler


def main() -> None:
    url, directory, prefix, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    quota = int(sys.argv[5]) if len(sys.argv) > 5 else 256 * 1024 * 1024
    mode = sys.argv[6] if len(sys.argv) > 6 else "close"
    handler = HeraldHandler(
        url=url,
        name="spool-producer",
        buffer_dir=directory,
        buffer_quota=quota,
        storm_repeats=0,
        flush_timeout=2.0,
        capacity=100_000,
    )
    logger = logging.getLogger("spool.test")
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    logger.addHandler(handler)
    for i in range(count):
        logger.log(logging.ERROR if i % 10 == 0 else logging.DEBUG, "%s %d", prefix, i)
    print("logged", flush=True)
    deadline = time.monotonic() + 30
    while handler._buffer and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)  # the last batch written
    print(f"settled dropped={handler.dropped} lost={handler.spool_lost}", flush=True)
    if mode == "hang":
        time.sleep(60)
    logger.removeHandler(handler)
    handler.close()
    print("closed", flush=True)


if __name__ == "__main__":
    main()
