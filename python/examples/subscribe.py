"""Print the next N records whose subject matches a glob, then exit.

Usage: python subscribe.py herald://host:7400 'example.*' 3
"""

import sys

import herald

url, glob, n = sys.argv[1], sys.argv[2], int(sys.argv[3])

with herald.connect(url, name="example-subscribe") as client:
    # subscribe() returns once the server has accepted the subscription.
    with client.subscribe(glob) as sub:
        print("subscribed", flush=True)
        for _ in range(n):
            # next() blocks until a record arrives (None if the timeout expires).
            delivered = sub.next(timeout=60)
            if delivered is None:
                sys.exit("timed out")
            priority = delivered.record.priority.name
            print(f"{priority} {delivered.subject}: {delivered.text} {delivered.fields}")
            sys.stdout.flush()
