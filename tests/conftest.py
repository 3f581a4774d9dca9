"""Project-wide pytest fixtures."""

from tests.support.sse_server import sse_server  # noqa: F401  (fixture: scripted model API server)
