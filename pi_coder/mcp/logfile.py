"""``logs_dir()/mcp.log`` (docs/mcp.md#reconnect-and-logs): servers' ``notifications/message`` and the SDK's own warnings.

One line each, ``<time> [<server>] <level> <logger>: <message>``, the file rotated to ``mcp.log.1``
past 5 MB. The SDK logs through :mod:`logging` (``mcp.*``); without a handler Python would print
those records on stderr (over the TUI), so :func:`capture_sdk_logging` sends them here instead.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time

__all__ = ["append", "capture_sdk_logging"]

MAX_BYTES = 5 * 1024 * 1024


def append(server: str, level: str, logger: str, text: str) -> None:
    """Add one line to ``mcp.log`` (never raises)."""
    from pi_coder.paths import logs_dir

    with contextlib.suppress(OSError):
        folder = logs_dir()
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "mcp.log"
        if path.exists() and path.stat().st_size > MAX_BYTES:
            os.replace(path, path.with_suffix(".log.1"))
        with path.open("a", encoding="utf-8") as fh:
            fh.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} [{server}] {level} {logger}: {text}\n")


class _ToFile(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(Exception):
            append("sdk", record.levelname.lower(), record.name, record.getMessage().splitlines()[0])


def capture_sdk_logging() -> None:
    """Warnings and errors of the ``mcp`` loggers go to ``mcp.log``, not to stderr (idempotent)."""
    logger = logging.getLogger("mcp")
    if not any(isinstance(h, _ToFile) for h in logger.handlers):
        handler = _ToFile(logging.WARNING)
        logger.addHandler(handler)
        logger.propagate = False
