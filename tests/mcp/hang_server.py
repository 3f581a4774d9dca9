"""A "server" that never answers initialize; writes its pid to $HANG_PID_FILE and starts a child."""

import os
import subprocess
import sys
import time

child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
path = os.environ.get("HANG_PID_FILE")
if path:
    with open(path, "w") as fh:
        fh.write(f"{os.getpid()} {child.pid}")
print("hanging forever", file=sys.stderr, flush=True)
while True:
    time.sleep(1)
