"""Project-wide pytest fixtures."""

import os

# No local-server discovery on the real default ports in tests (tests that want it set their own).
os.environ.setdefault("PI_CODER_DISCOVERY_PORTS", "")

from tests.support.sse_server import sse_server  # noqa: F401  (fixture: scripted model API server)
