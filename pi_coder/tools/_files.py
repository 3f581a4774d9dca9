"""Safe file access shared by the tools: regular files only, atomic replacement, clear errors.

- Opening a FIFO, socket or device can block forever (a FIFO with no writer) or never end
  (``/dev/zero``), so the tools refuse anything that is not a regular file. Files are opened
  with ``O_NONBLOCK`` and checked with ``fstat`` on the open descriptor, so a path swapped
  between a check and the open cannot slip through.
- ``write_file_atomic`` never truncates the original: the new text goes to a temporary file in
  the same folder, is flushed to disk and renamed over the target. A full disk, a file size
  limit or a kill leaves either the old file or the complete new one; the temporary file a kill
  leaves is removed by the next write in that folder (``_stale_temps``).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from pi_coder.errors import ToolError

__all__ = [
    "describe_os_error",
    "file_kind",
    "open_dir_nofollow",
    "open_regular",
    "read_regular_bytes",
    "refuse_special",
    "write_file_atomic",
]

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def file_kind(mode: int) -> str | None:
    """What a non-regular file is ("a FIFO", "a character device", ...); None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    for test, name in _KINDS:
        if test(mode):
            return name
    return "a special file"


def _not_regular(shown: str, kind: str, action: str) -> ToolError:
    if kind == "a directory":
        return ToolError(f"Path is a directory: {shown}. Use ls (or bash) to list it.")
    return ToolError(f"{shown} is not a regular file ({kind}); {action}.")


def refuse_special(path: str | Path, shown: str, action: str) -> None:
    """Refuse ``path`` as the tool argument spells it when it names a FIFO, socket or device.

    The tools work on the resolved path, and a link to an unnamed pipe (``/dev/stdin`` in RPC mode
    is ``/proc/self/fd/0 -> pipe:[N]``) resolves to a name that does not exist, which would read
    as "File not found". A missing path passes: the caller reports it.

    Raises:
        ToolError: ``path`` exists and is not a regular file (nor a directory, which the tools
            report in their own words).
    """
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return
    kind = file_kind(mode)
    if kind is not None and kind != "a directory":
        raise _not_regular(shown, kind, action)


def describe_os_error(exc: OSError, shown: str) -> str:
    """One sentence for a failed file operation on ``shown``, instead of Python's ``[Errno N] ...``."""
    code = exc.errno
    if code == errno.ENOENT:
        return f"File not found: {shown}"
    if code in (errno.EACCES, errno.EPERM):
        return f"Permission denied: {shown}"
    if code == errno.EISDIR:
        return f"Path is a directory: {shown}. Use ls (or bash) to list it."
    if code == errno.ENOTDIR:
        return f"Not a directory: a parent of {shown} is a file"
    if code == errno.ENOSPC:
        return f"No space left on the device holding {shown}"
    if code == errno.EDQUOT:
        return f"Disk quota exceeded for {shown}"
    if code == errno.EFBIG:
        return f"File too large: {shown} (the size limit for files was reached)"
    if code == errno.EROFS:
        return f"Read-only file system: {shown}"
    if code == errno.ELOOP:
        return f"Too many levels of symbolic links: {shown}"
    if code == errno.ENAMETOOLONG:
        return f"File name too long: {shown}"
    return f"{exc.strerror or exc}: {shown}"


def open_regular(path: Path, shown: str, action: str = "read only opens regular files") -> int:
    """A blocking read-only descriptor of ``path``, which must be a regular file.

    Raises:
        ToolError: ``path`` is missing, unreadable or not a regular file (FIFO, socket,
            device, directory); the message names it and says what to do.
    """
    try:
        # stat first: opening a socket fails with a confusing ENXIO, a FIFO opens fine.
        kind = file_kind(os.stat(path).st_mode)
        if kind is not None:
            raise _not_regular(shown, kind, action)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise ToolError(describe_os_error(exc, shown)) from None
    try:
        kind = file_kind(os.fstat(fd).st_mode)
        if kind is not None:
            raise _not_regular(shown, kind, action)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular_bytes(path: Path, shown: str, action: str = "read only opens regular files") -> bytes:
    """The bytes of ``path`` (a regular file), read without ever blocking on a FIFO or device.

    Raises:
        ToolError: as ``open_regular``, or the read failed.
    """
    fd = open_regular(path, shown, action)
    try:
        with open(fd, "rb", closefd=False) as f:
            return f.read()
    except OSError as exc:
        raise ToolError(describe_os_error(exc, shown)) from None
    finally:
        os.close(fd)


def _copy_owner_and_mode(fd: int, old: os.stat_result | None) -> None:
    if old is None:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        return
    try:
        os.fchown(fd, old.st_uid, old.st_gid)
    except OSError:
        pass  # only root may give a file away; a group we are not in is not ours to set either
    os.fchmod(fd, stat.S_IMODE(old.st_mode))


def _fsync_dir(dir_fd: int) -> None:
    try:
        os.fsync(dir_fd)
    except OSError:
        pass  # some file systems cannot sync a directory; the rename itself is still atomic


_SWAPPED = "a symbolic link appeared on the path after it was checked; nothing was written"


def _is_link(name: str, dir_fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def open_dir_nofollow(directory: Path, shown: str, *, create: bool) -> int:
    """A descriptor of ``directory`` (a real, absolute path), opened one component at a time from
    ``/`` without following any symlink; missing folders are created when ``create``.

    Raises:
        ToolError: a component is (now) a symlink or not a folder, or a folder cannot be made.
    """
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open("/", flags)
    try:
        for part in directory.parts[1:]:
            try:
                nxt = os.open(part, flags, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                try:
                    os.mkdir(part, 0o777, dir_fd=fd)
                except FileExistsError:
                    pass
                nxt = os.open(part, flags, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(part, fd):
                    raise ToolError(f"{shown}: {_SWAPPED}") from None
                raise
            os.close(fd)
            fd = nxt
    except OSError as exc:
        os.close(fd)
        raise ToolError(describe_os_error(exc, shown) + "; the file was not changed") from None
    except BaseException:
        os.close(fd)
        raise
    return fd


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def write_file_atomic(path: Path, data: bytes, shown: str) -> None:
    """Replace (or create) ``path`` with ``data`` so that no reader ever sees a partial file.

    ``path`` should be real (``tools._paths.real_path``: a symlink argument names its target,
    which gets the new content while the link stays). The file is written through a descriptor
    of its folder, opened from ``/`` without following symlinks, and its name is never followed
    either: a symlink swapped in after the path was checked makes the write fail instead of
    sending it elsewhere. An existing file keeps its mode and, where the process may set them,
    its owner and group. Parent folders are created. Hard links to the old file keep the old
    content (the name gets a new inode), as with most editors' safe save.

    Raises:
        ToolError: the target is not a regular file, the path changed, or writing failed; the
            original file is unchanged then and no temporary file is left behind.
    """
    target = Path(os.path.abspath(path))
    name = target.name
    from pi_coder.tools._stale_temps import sweep_once

    dir_fd = open_dir_nofollow(target.parent, shown, create=True)
    try:
        sweep_once(dir_fd)  # temporary files a killed pi left in this folder
        _write_in(dir_fd, name, data, shown)
    finally:
        os.close(dir_fd)


def _write_in(dir_fd: int, name: str, data: bytes, shown: str) -> None:
    try:
        old: os.stat_result | None = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        old = None
    except OSError as exc:
        raise ToolError(describe_os_error(exc, shown)) from None
    if old is not None:
        if stat.S_ISLNK(old.st_mode):
            raise ToolError(f"{shown}: {_SWAPPED}")
        kind = file_kind(old.st_mode)
        if kind is not None:
            raise _not_regular(shown, kind, "write only replaces regular files")
    tmp = ""
    fd = -1
    try:
        for _ in range(100):
            tmp = f".{name[:200]}.{os.urandom(6).hex()}.pi-tmp"
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dir_fd)
                break
            except FileExistsError:
                continue
        else:
            raise FileExistsError(errno.EEXIST, "no free temporary name")
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EPERM) and old is not None:
            _write_in_place(dir_fd, name, data, shown)  # a writable file in a folder we may not add to
            return
        raise ToolError(describe_os_error(exc, shown) + "; the file was not changed") from None
    from pi_coder.tools._stale_temps import lock_temp

    try:
        try:
            lock_temp(fd)  # held until the rename: another pi's sweep leaves the file alone
            _copy_owner_and_mode(fd, old)
            _write_all(fd, data)
            os.fsync(fd)
            os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        finally:
            os.close(fd)
    except BaseException as exc:
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise ToolError(describe_os_error(exc, shown) + "; the file was not changed") from None
        raise
    _fsync_dir(dir_fd)


def _write_in_place(dir_fd: int, name: str, data: bytes, shown: str) -> None:
    # Without a temporary file the best left is to overwrite without truncating first and cut
    # the tail afterwards, so a failure at least keeps the old file's length.
    try:
        fd = os.open(name, os.O_WRONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ToolError(f"{shown}: {_SWAPPED}") from None
        raise ToolError(describe_os_error(exc, shown)) from None
    try:
        if file_kind(os.fstat(fd).st_mode) is not None:
            raise ToolError(f"{shown} is not a regular file; write only replaces regular files.")
        _write_all(fd, data)
        os.ftruncate(fd, len(data))
        os.fsync(fd)
    except OSError as exc:
        raise ToolError(describe_os_error(exc, shown)) from None
    finally:
        os.close(fd)
