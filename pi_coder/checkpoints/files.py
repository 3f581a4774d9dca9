"""Files as checkpoints read and write them: without blocking, with their permission bits.

``read_regular`` keeps a file outside the working folder only when it is a regular file under the
size limit (opened ``O_NONBLOCK``, checked with ``fstat`` before a byte is read); ``write_file``
and ``remove_file`` put paths back, clearing whatever is in the way (a path that changed type).
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

__all__ = ["Unsaved", "default_perm", "private_dirs", "read_regular", "remove_file", "same", "write_file"]


def private_dirs(folder: Path) -> None:
    """Create ``folder`` and its missing parents 0700 (the store and ``checkpoints/``: owner only)."""
    missing: list[Path] = []
    probe = folder
    while not probe.exists() and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    for path in reversed(missing):
        path.mkdir(mode=0o700, exist_ok=True)
    for path in (folder.parent, folder):
        if stat.S_IMODE(path.stat().st_mode) != 0o700:
            os.chmod(path, 0o700)


def default_perm(executable: bool) -> int:
    """The permission bits a new file gets here (``0o666``/``0o777`` less the umask)."""
    return (0o777 if executable else 0o666) & ~_umask()


def _umask() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022


class Unsaved(str):
    """Why a file outside the folder was not kept (not a regular file, too large, unreadable)."""


def read_regular(path: str, max_bytes: int) -> tuple[bytes, int] | Unsaved | None:
    """The content and permission bits of a regular file, read without ever blocking.

    Opened ``O_NONBLOCK`` (a FIFO or a device returns at once) and checked with ``fstat`` before
    a byte is read: anything but a regular file of at most ``max_bytes`` is not read and the
    reason is returned. None: nothing is there (the path is free).
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        return Unsaved(f"cannot be read ({exc.strerror or exc})")
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return Unsaved("not a regular file")
        if info.st_size > max_bytes:
            return Unsaved(f"larger than {max_bytes / 1048576:g} MB")
        chunks: list[bytes] = []
        size = 0
        while chunk := os.read(fd, 1 << 20):
            size += len(chunk)
            if size > max_bytes:
                return Unsaved(f"larger than {max_bytes / 1048576:g} MB")
            chunks.append(chunk)
        return b"".join(chunks), stat.S_IMODE(info.st_mode)
    except OSError as exc:
        return Unsaved(f"cannot be read ({exc.strerror or exc})")
    finally:
        os.close(fd)


def remove_file(full: str, stop: str) -> bool:
    """Remove a file or symlink (not a folder) and the folders it leaves empty up to ``stop``."""
    if not os.path.islink(full) and (not os.path.lexists(full) or os.path.isdir(full)):
        return False
    os.unlink(full)
    _remove_empty_parents(os.path.dirname(full), stop)
    return True


def same(full: str, mode: str, data: bytes, perm: int | None = None) -> bool:
    try:
        if mode == "120000":
            return os.path.islink(full) and os.readlink(full).encode("utf-8", "surrogateescape") == data
        if os.path.islink(full) or not os.path.isfile(full):
            return False
        with open(full, "rb") as handle:
            if handle.read() != data:
                return False
        want = perm if perm is not None else default_perm(mode == "100755")
        return stat.S_IMODE(os.stat(full).st_mode) == want
    except OSError:
        return False


def write_file(full: str, mode: str, data: bytes, perm: int | None = None, stop: str = os.sep) -> None:
    """Write ``data`` at ``full`` as git mode ``mode`` (regular, executable or symlink).

    ``perm``: the permission bits (default: the umask's for the mode). Whatever is in the way is
    cleared first: a folder at ``full``, a file or symlink where a parent folder must be (below
    ``stop``).
    """
    if os.path.isdir(full) and not os.path.islink(full):
        shutil.rmtree(full)
    elif os.path.lexists(full) and (mode == "120000" or os.path.islink(full)):
        os.unlink(full)
    parent = os.path.dirname(full) or "."
    probe = parent
    while probe.startswith(stop.rstrip(os.sep) + os.sep) and probe != stop:
        if os.path.islink(probe) or (os.path.lexists(probe) and not os.path.isdir(probe)):
            os.unlink(probe)
            break
        probe = os.path.dirname(probe)
    os.makedirs(parent, exist_ok=True)
    if mode == "120000":
        os.symlink(data.decode("utf-8", "surrogateescape"), full)
        return
    want = perm if perm is not None else default_perm(mode == "100755")
    fd = os.open(full, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        os.fchmod(fd, 0o600)  # owner only while the content is written (it may be a secret)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fchmod(fd, want)
    finally:
        os.close(fd)


def _remove_empty_parents(folder: str, stop: str) -> None:
    while folder.startswith(stop + os.sep) and folder != stop:
        try:
            os.rmdir(folder)
        except OSError:
            return
        folder = os.path.dirname(folder)
