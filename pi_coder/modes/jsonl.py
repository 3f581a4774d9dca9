"""One JSON object per LF-terminated line on stdout, flushed per line (JSON and RPC modes)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, BinaryIO

__all__ = ["JsonLineWriter", "to_jsonable"]


def _default(value: Any) -> Any:
    to_json = getattr(value, "to_json_dict", None)
    if to_json is not None:
        return to_json()
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def to_jsonable(value: Any) -> Any:
    """``value.to_json_dict()`` when it has one, else ``value`` (orjson handles the rest)."""
    to_json = getattr(value, "to_json_dict", None)
    return to_json() if to_json is not None else value


class JsonLineWriter:
    """Writes JSON lines to a binary stream; stops quietly once the reader has gone (EPIPE)."""

    def __init__(self, stream: BinaryIO | None = None) -> None:
        self._out: BinaryIO = stream if stream is not None else sys.stdout.buffer
        self.closed = False
        """True after the reader went away; later writes are dropped."""

    def write(self, obj: Any) -> None:
        """Serialise ``obj`` (objects with ``to_json_dict`` are converted) and write one line."""
        import orjson

        if self.closed:
            return
        data = orjson.dumps(to_jsonable(obj), default=_default) + b"\n"
        try:
            self._out.write(data)
            self._out.flush()
        except (BrokenPipeError, ValueError):
            self.closed = True
