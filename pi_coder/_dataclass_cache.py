"""Compiled dataclass methods kept between runs: about a tenth of pi's start-up.

Python's ``dataclasses`` writes the methods of each class (``__init__``, ``__repr__``,
``__eq__``...) as source text and compiles that text with ``exec`` when the class is created:
about 860 functions before the TUI's first frame (pi_coder's own classes, Textual's, pydantic's),
a sixth of the CPU time to that frame, and no ``.pyc`` file keeps them. :func:`install` gives
the ``dataclasses`` module its own ``exec``, which compiles each text once and keeps the code
objects in a file (``marshal``, the format of ``.pyc`` files) keyed by the exact text, for the
same interpreter only; a later run executes them without compiling. Nothing else changes: the
same text is compiled with the same flags (none inherited, as ``dataclasses`` has no
``__future__`` imports), and a text not in the file is compiled as before.

The file is ``dataclasses-<cache tag>.bin`` in the cache folder (``PI_CODER_HOME/cache``, else
the platform's user cache folder for pi-coder), private to the user like the ``.pyc`` files next
to the code. It is written when this run compiled a text it did not hold (the first run, or after
an upgrade): by :func:`save` (the TUI calls it once it is up) or at exit.
"""

from __future__ import annotations

import atexit
import marshal
import os
import sys
from collections.abc import Mapping
from types import CodeType

__all__ = ["default_path", "install", "save"]

_MAX_ENTRIES = 5000
"""Texts kept from earlier runs beyond this run's (classes made later in a session, by dialogs or
extensions); past this many, only this run's are written (old versions' texts drop out)."""

_state: _Cache | None = None


class _Cache:
    __slots__ = ("codes", "missed", "path", "used")

    def __init__(self, path: str, codes: dict[str, object]) -> None:
        self.path = path
        self.codes = codes
        self.used: dict[str, CodeType] = {}
        self.missed = False

    def exec(
        self, source: str | CodeType, globals: dict[str, object] | None = None, locals: Mapping[str, object] | None = None, /
    ) -> None:
        if isinstance(source, str):
            code = self.codes.get(source)
            if type(code) is not CodeType:
                code = compile(source, "<string>", "exec", dont_inherit=True)
                self.missed = True
            self.used[source] = code
            source = code
        exec(source, globals, locals)

    def save(self) -> None:
        if not self.missed:
            return
        merged = {**self.codes, **self.used}
        entries = merged if len(merged) <= _MAX_ENTRIES else self.used
        try:
            from pathlib import Path

            from pi_coder.paths import ensure_private_dir, write_atomic

            target = Path(self.path)
            ensure_private_dir(target.parent)
            write_atomic(target, marshal.dumps((_key(), entries)))
        except (OSError, ValueError):
            return  # a read-only or full disk: the next run compiles again
        self.missed = False


def _key() -> tuple[str, str | None, int]:
    """What the compiled code depends on: the interpreter and its optimisation level."""
    return (sys.version, sys.implementation.cache_tag, sys.flags.optimize)


def default_path() -> str:
    """The cache file for this interpreter (``PI_CODER_HOME/cache``, else the user cache folder)."""
    home = os.environ.get("PI_CODER_HOME")
    if home:
        folder = os.path.join(os.path.expanduser(home), "cache")
    else:
        from platformdirs import user_cache_dir

        folder = user_cache_dir("pi-coder")
    return os.path.join(folder, f"dataclasses-{sys.implementation.cache_tag}.bin")


def install(path: str | None = None) -> None:
    """Give ``dataclasses`` the caching ``exec`` (once per process), reading ``path`` (default:
    :func:`default_path`) if it holds code for this interpreter; written at exit if needed."""
    global _state
    if _state is not None:
        return
    import dataclasses

    if path is None:
        path = default_path()
    codes: dict[str, object] = {}  # read from a file: each value is checked to be code before use
    try:
        with open(path, "rb") as handle:
            key, stored = marshal.loads(handle.read())
        if key == _key() and isinstance(stored, dict):
            codes = stored
    except (OSError, ValueError, EOFError, TypeError):
        pass  # missing, unreadable or from another format: compiled afresh
    _state = _Cache(path, codes)
    vars(dataclasses)["exec"] = _state.exec
    atexit.register(_state.save)


def save() -> None:
    """Write the file now if this run compiled texts it did not hold (else nothing to do)."""
    if _state is not None:
        _state.save()
