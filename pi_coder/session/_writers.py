"""Which other processes have a session file open for writing: a lock note next to the file.

Every process that writes ``<session>.jsonl`` holds a shared ``flock`` on ``<session>.jsonl.lock``
for as long as it has the session open, and notes its pid in it. A process that cannot take the
lock exclusively knows another writer is alive; the kernel drops the locks of a dead process, so
a note left by a killed one is stale and simply overwritten. The pids are only for the message.
Everything here is best effort: a note that cannot be written never stops a session.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

__all__ = ["WriterNote"]

_MODE = 0o600


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class WriterNote:
    """This process's presence as a writer of one session file (see the module docstring)."""

    def __init__(self, session_file: Path) -> None:
        self.path = session_file.with_name(session_file.name + ".lock")
        self._fd = -1

    def join(self) -> list[int]:
        """Take part as a writer; returns the pids of other live writers (empty if none or unknown)."""
        if self._fd >= 0:
            return self.others()
        for _ in range(3):
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, _MODE)
            except OSError:
                return []
            try:
                alone = _try_lock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                if not alone:
                    fcntl.flock(fd, fcntl.LOCK_SH)
                if not _same_file(fd, self.path):
                    os.close(fd)  # removed by a writer that left just now: take the new one
                    continue
            except OSError:
                os.close(fd)
                return []
            self._fd = fd
            pid = f"{os.getpid()}\n".encode()
            with contextlib.suppress(OSError):
                if alone:
                    os.ftruncate(fd, 0)
                    os.pwrite(fd, pid, 0)
                    fcntl.flock(fd, fcntl.LOCK_SH)
                else:
                    os.lseek(fd, 0, os.SEEK_END)
                    os.write(fd, pid)
            return [] if alone else self.others()
        return []

    def others(self) -> list[int]:
        """Pids named in the note that are alive and not this process."""
        try:
            text = self.path.read_text(encoding="ascii", errors="replace")
        except OSError:
            return []
        pids: list[int] = []
        for word in text.split():
            if word.isdigit() and int(word) != os.getpid() and int(word) not in pids and _alive(int(word)):
                pids.append(int(word))
        return pids

    def __del__(self) -> None:
        try:
            self.leave()
        except Exception:  # noqa: S110 - at interpreter exit there is no one to tell
            pass

    def leave(self) -> None:
        """Stop being a writer; the note is removed when no other writer holds it."""
        fd, self._fd = self._fd, -1
        if fd < 0:
            return
        try:
            if _try_lock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB) and _same_file(fd, self.path):
                self.path.unlink()
        except OSError:
            pass
        finally:
            os.close(fd)


def _try_lock(fd: int, flags: int) -> bool:
    try:
        fcntl.flock(fd, flags)
    except BlockingIOError:
        return False
    return True


def _same_file(fd: int, path: Path) -> bool:
    try:
        on_disk = os.stat(path)
    except OSError:
        return False
    mine = os.fstat(fd)
    return (on_disk.st_dev, on_disk.st_ino) == (mine.st_dev, mine.st_ino)

