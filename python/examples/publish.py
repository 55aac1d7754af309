"""Publish three records to a Herald server.

Usage: python publish.py [herald://host:7400]   (or set HERALD_SERVER)
"""

import os
import sys

import herald

# The server URL: the first argument, else $HERALD_SERVER, else the default port on this host.
url = (
    sys.argv[1] if len(sys.argv) > 1 else os.environ.get("HERALD_SERVER", "herald://127.0.0.1:7400")
)

client = herald.connect(url, name="example-publish")

# publish() only queues the record; the client sends queued records in batches.
client.publish("example.orders", type="order", text="order 1 placed", fields={"id": 1})
client.publish("example.orders", type="order", text="order 2 placed", fields={"id": 2})
# log() publishes a log record with a priority; keyword arguments become fields.
client.log(herald.Priority.WARNING, "example.orders", "stock is low", item="widget", left=3)

# flush() waits until the server has routed everything published so far.
client.flush()
client.close()
print("published 3 records")
