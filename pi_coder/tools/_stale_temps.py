"""Temporary files of ``write``/``edit`` that a killed pi left behind, removed on the next write.

A write goes to ``.<name>.<12 hex>.pi-tmp`` beside the target and is renamed over it at the end
(``_files.write_file_atomic``). A SIGKILL in between leaves the temporary file, which can be as
big as the content being written. The writer holds an exclusive ``flock`` on its temporary file
from creation to rename; the kernel drops the lock when the process dies, whatever its pid
namespace. So a later write in the same folder removes the files of that naming which

- no process holds locked (their writer is gone),
- belong to this user and are regular files, and
- were last changed over ``MIN_AGE`` seconds ago (the instant between a writer creating its file
  and locking it).

Each folder is swept once per process, at its first write.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import stat
import threading
import time

__all__ = ["MIN_AGE", "TEMP_NAME", "lock_temp", "sweep_once"]

TEMP_NAME = re.compile(r"^\..+\.[0-9a-f]{12}\.pi-tmp$", re.DOTALL)
"""The names ``write_file_atomic`` gives its temporary files."""

MIN_AGE = 2.0
"""Seconds a temporary file must be unchanged before it may be swept."""

_swept: set[tuple[int, int]] = set()
_guard = threading.Lock()


def lock_temp(fd: int) -> None:
    """Mark a temporary file as in use for as long as ``fd`` is open."""
    with contextlib.suppress(OSError):
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def sweep_once(dir_fd: int) -> list[str]:
    """Remove the stale temporary files in the folder ``dir_fd`` (once per folder per process).

    Returns the names removed. Never raises: a folder that cannot be listed is left alone.
    """
    try:
        info = os.fstat(dir_fd)
    except OSError:
        return []
    key = (info.st_dev, info.st_ino)
    with _guard:
        if key in _swept:
            return []
        _swept.add(key)
    try:
        names = [n for n in os.listdir(dir_fd) if n.endswith(".pi-tmp") and TEMP_NAME.match(n)]
    except OSError:
        return []
    return [name for name in names if _remove_if_stale(dir_fd, name)]


def _remove_if_stale(dir_fd: int, name: str) -> bool:
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
            return False
        if time.time() - st.st_mtime < MIN_AGE:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # a live writer holds it
        try:
            now = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            return False
        if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
            return False  # the name was replaced meanwhile
        os.unlink(name, dir_fd=dir_fd)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
