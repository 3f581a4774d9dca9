"""A Linux inotify watcher of a working folder: which paths changed since it was last asked.

Snapshots use it so that "nothing changed" costs no scan of the folder and a few changes cost
a look at those paths alone (:mod:`pi_coder.checkpoints.scanner` decides; docs/checkpoints.md has
the whole picture). Every folder below the top is watched except ``.git``, nested repositories,
the checkpoint store and folders git certainly ignores (:mod:`pi_coder.checkpoints.ignore_rules`).
Events are not read as they come: :meth:`FolderWatch.drain` reads what the kernel queued so far
(a non-blocking read, so everything that happened before the call is in it) and returns the
changed paths, relative to the top. A folder that appeared or went away is returned as itself
(git then looks below it) and a new folder is watched from then on.

:meth:`FolderWatch.drain` returns None when the watcher may have missed something: the kernel's
queue overflowed, a ``.gitignore``, ``.git`` or the exclude file changed (which files count, and
which folders to watch, may differ), a watch could not be added. The watcher then starts over
(a new walk) before returning, so the full scan the caller does next is a valid base again.
Watching is not possible (:func:`start` returns the reason) off Linux, on file systems whose
changes may come from elsewhere (NFS, SMB, FUSE, 9p...), past the inotify limits and for folders
with more than ``max_dirs`` folders.

Limits of inotify itself: a change made through a hard link from outside the folder, or by
writing to a memory-mapped file, raises no event; the next full scan (the first snapshot of every
``pi`` process) picks it up.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
import struct
import sys
import threading
import weakref
from collections.abc import Sequence

from pi_coder.checkpoints.ignore_rules import DirRules, parse_rules

__all__ = ["FolderWatch", "start"]

_MODIFY, _ATTRIB = 0x2, 0x4
_MOVED_FROM, _MOVED_TO, _CREATE, _DELETE = 0x40, 0x80, 0x100, 0x200
_DELETE_SELF, _MOVE_SELF, _UNMOUNT, _Q_OVERFLOW, _IGNORED = 0x400, 0x800, 0x2000, 0x4000, 0x8000
_ONLYDIR, _DONT_FOLLOW, _EXCL_UNLINK, _ISDIR = 0x01000000, 0x02000000, 0x04000000, 0x40000000
_MASK = (
    _MODIFY | _ATTRIB | _MOVED_FROM | _MOVED_TO | _CREATE | _DELETE | _DELETE_SELF | _MOVE_SELF
    | _ONLYDIR | _DONT_FOLLOW | _EXCL_UNLINK
)  # fmt: skip
_HEADER = struct.Struct("iIII")
_RESTART_NAMES = frozenset({".gitignore", ".git"})
"""A change to one of these changes which files snapshots keep, or which folders to watch."""
_LOCAL_FS = frozenset(
    {
        "ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "overlay", "f2fs", "zfs", "bcachefs",
        "jfs", "reiserfs", "ramfs", "vfat", "exfat", "ntfs3", "hfsplus", "nilfs2",
    }
)  # fmt: skip
"""File systems whose every change goes through this kernel (so inotify sees it)."""
_NLINK_FS = frozenset({"ext2", "ext3", "ext4", "xfs", "tmpfs"})
"""File systems where a folder's link count is 2 + its subfolders (btrfs and overlay say 1)."""


class _Libc:
    def __init__(self) -> None:
        lib = ctypes.CDLL(None, use_errno=True)  # the C library is loaded in every Python
        self.init1 = lib.inotify_init1
        self.init1.argtypes = [ctypes.c_int]
        self.init1.restype = ctypes.c_int
        self.add_watch = lib.inotify_add_watch
        self.add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        self.add_watch.restype = ctypes.c_int
        self.rm_watch = lib.inotify_rm_watch
        self.rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
        self.rm_watch.restype = ctypes.c_int


_libc: _Libc | None = None


def _lib() -> _Libc | str:
    global _libc
    if not sys.platform.startswith("linux"):
        return "inotify needs Linux"
    if _libc is None:
        try:
            _libc = _Libc()
        except (OSError, AttributeError) as exc:
            return f"inotify is not available ({exc})"
    return _libc


class _Unwatchable(Exception):
    pass


class FolderWatch:
    """The watches of one folder (see the module docstring); made by :func:`start`."""

    def __init__(
        self, root: str, skip: Sequence[str], excludes: Sequence[str], max_dirs: int, lib: _Libc
    ) -> None:
        self.root = root
        self.excludes = tuple(excludes)
        """The extra ignore patterns the watcher was started with (the shadow's ``info/exclude``)."""
        self._skip = frozenset(os.path.realpath(p) for p in skip)
        self._max_dirs = max_dirs
        self._lib = lib
        self._fd = -1
        self._paths: dict[int, str] = {}
        """Watch descriptor -> the folder's path relative to the top ("" for the top)."""
        self._rules: dict[str, DirRules] = {}
        """The ignore rules for each watched folder's children (see ``_unlisted``)."""
        self._unlisted: set[str] = set()
        """Folders watched without being listed (no subfolders): their rules lack their own ``.gitignore``."""
        self.leaf_dev: int | None = None
        """The device whose folders' link counts are trusted: a folder with 2 links has no subfolders."""
        self._dirty: set[str] = set()
        self._exclude_stat: tuple[int, int, int] | None = None
        self.reason: str | None = None
        """Why the watcher stopped (it then returns None from every drain)."""
        self._finalizer: weakref.finalize[..., FolderWatch] | None = None

    # ------------------------------------------------------------------ starting

    def _open(self) -> None:
        fd = self._lib.init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            raise _Unwatchable(_why(ctypes.get_errno(), "cannot start inotify"))
        self._fd = fd
        self._finalizer = weakref.finalize(self, os.close, fd)
        self._rebuild()

    def _rebuild(self) -> None:
        """Walk the folder anew: watch what is there now, drop the watches of what is not.

        Watching a folder already watched keeps its watch (the kernel returns the same one), so
        no event is lost on the way; what was queued before is dropped (a full scan follows).
        """
        self._discard()
        old = self._paths
        self._paths = {}
        self._rules = {}
        self._unlisted = set()
        self._dirty = set()
        self._exclude_stat = _stat_key(os.path.join(self.root, ".git", "info", "exclude"))
        top = DirRules()
        user = _read_text(os.path.join(self.root, ".git", "info", "exclude"))
        for lines in (self.excludes, user.splitlines() if user is not None else []):
            parsed = parse_rules(lines)
            top = DirRules(unsure=True) if parsed is None else DirRules(top.patterns + parsed, top.unsure)
        self._walk("", top)
        for wd in old.keys() - self._paths.keys():
            self._lib.rm_watch(self._fd, wd)

    def _discard(self) -> None:
        while True:
            try:
                if not os.read(self._fd, 65536):
                    return
            except BlockingIOError:
                return

    def _add(self, rel: str) -> bool:
        """Watch one folder; False when it is gone (or no longer a folder)."""
        if len(self._paths) >= self._max_dirs:
            raise _Unwatchable(f"more than {self._max_dirs} folders to watch")
        path = os.path.join(self.root, rel) if rel else self.root
        wd = self._lib.add_watch(self._fd, os.fsencode(path), _MASK)
        if wd < 0:
            code = ctypes.get_errno()
            if code in (errno.ENOENT, errno.ENOTDIR):
                return False
            raise _Unwatchable(_why(code, f"cannot watch {path}"))
        self._paths[wd] = rel
        return True

    def _walk(self, start: str, rules: DirRules) -> None:
        """Watch ``start`` and the folders below it (each watched before it is listed).

        A folder with no subfolders (2 links, on a file system that keeps the count) is watched
        without being listed: most folders hold files only, and listing is most of a walk's cost.
        """
        pending = [(start, rules, False)]
        while pending:
            rel, inherited, leaf = pending.pop()
            if not self._add(rel):
                continue
            if leaf:
                self._rules[rel] = inherited
                self._unlisted.add(rel)
                continue
            full = os.path.join(self.root, rel) if rel else self.root
            subdirs: list[tuple[str, bool]] = []
            gitignore: str | None = None
            try:
                with os.scandir(full) as entries:
                    for entry in entries:
                        name = entry.name
                        if name == ".gitignore":
                            gitignore = _read_text(entry.path)
                        elif name == ".git":
                            if rel:  # a nested repository: git leaves its files alone
                                subdirs = []
                                break
                        else:
                            try:
                                if entry.is_dir(follow_symlinks=False):
                                    subdirs.append((name, self._is_leaf(entry)))
                            except OSError:
                                continue
            except (FileNotFoundError, NotADirectoryError):
                continue
            except OSError as exc:
                raise _Unwatchable(f"cannot list {full}: {exc.strerror or exc}") from exc
            mine = inherited.below(rel, gitignore)
            self._rules[rel] = mine
            for name, child_leaf in subdirs:
                child = f"{rel}/{name}" if rel else name
                if mine.ignores(child):
                    continue
                if self._skip and os.path.join(self.root, child) in self._skip:
                    continue
                pending.append((child, mine, child_leaf))

    def _is_leaf(self, entry: os.DirEntry[str]) -> bool:
        if self.leaf_dev is None:
            return False
        info = entry.stat(follow_symlinks=False)
        return info.st_nlink == 2 and info.st_dev == self.leaf_dev

    def _children_rules(self, folder: str) -> DirRules | None:
        """The rules for new subfolders of a watched folder (None: it is not watched)."""
        rules = self._rules.get(folder)
        if rules is not None and folder in self._unlisted:
            path = (
                os.path.join(self.root, folder, ".gitignore")
                if folder
                else os.path.join(self.root, ".gitignore")
            )
            rules = rules.below(folder, _read_text(path))
            self._rules[folder] = rules
            self._unlisted.discard(folder)
        return rules

    # ------------------------------------------------------------------ reading

    @property
    def alive(self) -> bool:
        return self.reason is None

    def drain(self) -> set[str] | None:
        """The paths changed since the last drain (or since the start); None: scan everything.

        After a None the watcher has started over (unless it stopped: see :attr:`reason`), so a
        full scan taken now is the base for the next drain.
        """
        if self.reason is not None:
            return None
        lost = False
        new_dirs: list[str] = []
        gone_dirs: set[str] = set()
        try:
            while True:
                try:
                    data = os.read(self._fd, 65536)
                except BlockingIOError:
                    break
                if not data:
                    break
                lost = self._parse(data, new_dirs, gone_dirs) or lost
            if gone_dirs:
                self._forget(gone_dirs)
            if _stat_key(os.path.join(self.root, ".git", "info", "exclude")) != self._exclude_stat:
                lost = True
            if not lost:
                for rel in new_dirs:
                    parent = rel.rpartition("/")[0]
                    rules = self._children_rules(parent)
                    if rules is None or rules.ignores(rel) or os.path.join(self.root, rel) in self._skip:
                        continue
                    self._walk(rel, rules)
            if lost:
                self._rebuild()
                return None
        except _Unwatchable as exc:
            self.stop(str(exc))
            return None
        except OSError as exc:
            self.stop(f"inotify failed: {exc.strerror or exc}")
            return None
        out, self._dirty = self._dirty, set()
        return out

    def _parse(self, data: bytes, new_dirs: list[str], gone_dirs: set[str]) -> bool:
        """Note the events of one read; True when something may have been missed.

        Folders that appeared go to ``new_dirs`` (walked once all is read), those that moved away
        or were removed to ``gone_dirs`` (their watches are dropped first: one pass for all).
        """
        lost = False
        offset = 0
        while offset + _HEADER.size <= len(data):
            wd, mask, _cookie, size = _HEADER.unpack_from(data, offset)
            raw = data[offset + _HEADER.size : offset + _HEADER.size + size].rstrip(b"\0")
            offset += _HEADER.size + size
            if mask & _Q_OVERFLOW:
                lost = True
                continue
            if mask & _IGNORED:
                self._paths.pop(wd, None)
                continue
            folder = self._paths.get(wd)
            if folder is None:
                continue  # a watch dropped earlier (its folder moved or went away)
            if mask & (_DELETE_SELF | _MOVE_SELF | _UNMOUNT):
                if folder == "":
                    raise _Unwatchable("the folder itself was moved or removed")
                if mask & _UNMOUNT:
                    lost = True
                continue  # the parent's event names the folder
            name = os.fsdecode(raw)
            if not name:
                continue
            if name in _RESTART_NAMES:
                lost = True
            rel = f"{folder}/{name}" if folder else name
            self._dirty.add(rel)
            if mask & _ISDIR:
                if mask & (_MOVED_FROM | _DELETE):
                    gone_dirs.add(rel)
                if mask & (_CREATE | _MOVED_TO):
                    new_dirs.append(rel)
        return lost

    def _forget(self, gone: set[str]) -> None:
        """Drop the watches of folders that moved away or were removed (and of those below them)."""
        for wd, path in list(self._paths.items()):
            probe = path
            while probe and probe not in gone:
                probe = probe.rpartition("/")[0]
            if probe:
                self._lib.rm_watch(self._fd, wd)  # fails harmlessly for one already gone
                del self._paths[wd]
                self._rules.pop(path, None)
                self._unlisted.discard(path)

    def restart(self, excludes: Sequence[str] | None = None) -> None:
        """Start over: a new walk (and new ``excludes``); what changed before is forgotten.

        Raises:
            _Unwatchable: (from :meth:`drain`) the folder cannot be watched any more.
        """
        if excludes is not None:
            self.excludes = tuple(excludes)
        self._rebuild()

    def reset(self, excludes: Sequence[str]) -> bool:
        """:meth:`restart` with new ``excludes``; False (and stopped) when watching is no longer possible."""
        try:
            self.restart(excludes)
        except _Unwatchable as exc:
            self.stop(str(exc))
            return False
        except OSError as exc:
            self.stop(f"inotify failed: {exc.strerror or exc}")
            return False
        return True

    def stop(self, reason: str = "stopped") -> None:
        """Stop watching (for good): every later drain returns None.

        The watches are removed first and the descriptor closed in a thread: closing one with
        watches waits for the kernel to free them (10-20 ms), which nobody needs to wait for.
        """
        if self.reason is None:
            self.reason = reason
        fd, finalizer = self._fd, self._finalizer
        self._fd, self._finalizer = -1, None
        if finalizer is not None and finalizer.detach() is not None:
            for wd in self._paths:
                self._lib.rm_watch(fd, wd)
            threading.Thread(target=os.close, args=(fd,), name="pi-unwatch", daemon=True).start()
        self._paths = {}
        self._rules = {}
        self._unlisted = set()
        self._dirty = set()

    @property
    def watched(self) -> int:
        """How many folders are watched."""
        return len(self._paths)


def start(
    root: str, *, skip: Sequence[str] = (), excludes: Sequence[str] = (), max_dirs: int = 20_000
) -> FolderWatch | str:
    """Watch ``root`` (a real path); returns the watcher, or why watching is not possible here.

    ``skip``: absolute paths of folders never watched (the checkpoint store); ``excludes``: more
    ignore patterns (the shadow's ``info/exclude``); ``max_dirs``: at most this many folders
    (also held under a quarter of the system's inotify watch limit).
    """
    lib = _lib()
    if isinstance(lib, str):
        return lib
    foreign, fstype = _file_systems(root)
    if foreign is not None:
        return foreign
    limit = _watch_limit()
    if limit is not None:
        max_dirs = min(max_dirs, limit // 4)
    watch = FolderWatch(root, skip, excludes, max_dirs, lib)
    if fstype in _NLINK_FS:
        try:
            watch.leaf_dev = os.stat(root).st_dev
        except OSError as exc:
            return f"cannot watch {root}: {exc.strerror or exc}"
    try:
        watch._open()
    except _Unwatchable as exc:
        watch.stop(str(exc))
        return str(exc)
    return watch


def _why(code: int, what: str) -> str:
    if code == errno.ENOSPC:
        return f"{what}: the inotify watch limit is reached (fs.inotify.max_user_watches)"
    if code == errno.EMFILE:
        return f"{what}: too many inotify instances (fs.inotify.max_user_instances)"
    return f"{what}: {os.strerror(code)}"


def _watch_limit() -> int | None:
    try:
        with open("/proc/sys/fs/inotify/max_user_watches", encoding="ascii") as handle:
            return int(handle.read().strip())
    except (OSError, ValueError):
        return None


def _file_systems(root: str) -> tuple[str | None, str | None]:
    """Why the folder (or a mount below it) is on a file system inotify cannot follow (None: it is
    not), and the type of the folder's own file system."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return "the mounted file systems cannot be read (/proc/self/mountinfo)", None
    holder: tuple[str, str] | None = None
    below: list[tuple[str, str]] = []
    prefix = root.rstrip("/") + "/"
    for line in lines:
        fields = line.split(" ")
        try:
            dash = fields.index("-")
            point = _unescape(fields[4])
            fstype = fields[dash + 1]
        except (ValueError, IndexError):
            continue
        if point.startswith(prefix):
            below.append((point, fstype))
        elif (root + "/").startswith(point.rstrip("/") + "/") and (
            holder is None or len(point) >= len(holder[0])
        ):
            holder = (point, fstype)
    for point, fstype in ([holder] if holder is not None else []) + below:
        if fstype not in _LOCAL_FS:
            return f"{point} is a {fstype} file system", fstype
    return None, holder[1] if holder is not None else None


def _unescape(text: str) -> str:
    """mountinfo writes space, tab, newline and backslash as octal escapes."""
    if "\\" not in text:
        return text
    out: list[str] = []
    index = 0
    while index < len(text):
        if text[index] == "\\" and text[index + 1 : index + 4].isdigit() and index + 4 <= len(text):
            out.append(chr(int(text[index + 1 : index + 4], 8)))
            index += 4
        else:
            out.append(text[index])
            index += 1
    return "".join(out)


def _read_text(path: str) -> str | None:
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size > 1 << 20:
            return None
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


def _stat_key(path: str) -> tuple[int, int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size, info.st_ino
