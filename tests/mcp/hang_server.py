"""A "server" that reads stdin and never answers (never finishes initialize)."""

import sys
import time

print("hanging forever", file=sys.stderr, flush=True)
while True:
    time.sleep(1)
