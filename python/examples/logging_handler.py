"""Send the standard library's logging to Herald.

Usage: python logging_handler.py [herald://host:7400]   (or set HERALD_SERVER)
"""

import logging
import logging.config
import os
import sys

url = (
    sys.argv[1] if len(sys.argv) > 1 else os.environ.get("HERALD_SERVER", "herald://127.0.0.1:7400")
)

logging.config.dictConfig(
    {
        "version": 1,
        "handlers": {
            # HeraldHandler never blocks the caller: records go to a buffer that a background
            # thread publishes. The subject of each record is the logger's name.
            "herald": {
                "class": "herald.logging.HeraldHandler",
                "url": url,
                "name": "example-logging",
                "level": "INFO",
            },
            "console": {"class": "logging.StreamHandler", "level": "WARNING"},
        },
        "root": {"level": "INFO", "handlers": ["herald", "console"]},
    }
)

log = logging.getLogger("example.app")
log.info("service started on port %d", 8080)
# Attributes given with extra= become fields of the Herald record.
log.warning("disk %s is %d%% full", "/var", 91, extra={"disk": "/var"})
try:
    int("not a number")
except ValueError:
    # exception() logs at ERROR and adds the traceback.
    log.exception("could not parse the setting")

# shutdown() flushes and closes the handlers: the handler waits until its records are sent.
logging.shutdown()
