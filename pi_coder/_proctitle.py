"""Hiding secrets from the process's command line (``ps``, ``/proc/PID/cmdline``).

``pi --api-key sk-...`` would otherwise show the key to every process of the machine for the
whole run, including the agent's own bash commands. Pi 1.6 sets its process title to ``pi``;
this does the same on Linux by overwriting the memory the kernel reads ``/proc/PID/cmdline``
from (its bounds are fields 48 and 49 of ``/proc/self/stat``). Python keeps its own copy of
the arguments in ``sys.argv``, so nothing in the program changes. Elsewhere it does nothing.

It runs only when there is something to hide (never for ``pi --version``) and costs about
0.05 ms: it writes through ``/proc/self/mem``, with ``ctypes`` as the fallback.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

__all__ = ["argv_has_secret", "hide_command_line"]

SECRET_FLAGS = ("--api-key",)
"""Flags whose value must not stay readable in the process listing."""


def argv_has_secret(args: Sequence[str]) -> bool:
    """Whether ``args`` (without the program name) pass a secret on the command line."""
    for arg in args:
        if arg == "--":
            return False
        if arg in SECRET_FLAGS or arg.startswith(tuple(f"{flag}=" for flag in SECRET_FLAGS)):
            return True
    return False


def hide_command_line(title: str = "pi") -> bool:
    """Replace the process's visible command line with ``title``.

    Returns:
        True when ``/proc/self/cmdline`` now shows ``title`` only; False when the platform
        does not allow it (not Linux, no /proc, an unexpected layout).
    """
    try:
        with open("/proc/self/stat", "rb") as f:
            stat = f.read()
        fields = stat[stat.rfind(b")") + 2 :].split()  # field 3 (state) comes first
        start, end = int(fields[48 - 3]), int(fields[49 - 3])
    except (OSError, ValueError, IndexError):
        return False
    size = end - start
    if start <= 0 or size <= 1:
        return False
    data = title.encode("utf-8")[: size - 1].ljust(size, b"\0")
    try:  # our own memory through /proc/self/mem: no ctypes import (~3 ms)
        fd = os.open("/proc/self/mem", os.O_RDWR | os.O_CLOEXEC)
        try:
            written = os.pwrite(fd, data, start)
        finally:
            os.close(fd)
    except OSError:
        written = 0
    if written != size:
        import ctypes

        ctypes.memmove(start, data, size)
    try:
        with open("/proc/self/cmdline", "rb") as f:
            return f.read().rstrip(b"\0") == data.rstrip(b"\0")
    except OSError:
        return False
