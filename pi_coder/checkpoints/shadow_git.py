"""A shadow git repository that snapshots a working folder without touching the user's git state.

The repository lives under ``<data dir>/checkpoints/<key>/`` where ``key`` is derived from the
real path of the working folder. Every git call gets ``GIT_DIR`` (the shadow), ``GIT_WORK_TREE``
(the folder) and ``GIT_INDEX_FILE`` (the shadow's own index), ignores the system and global git
configuration (``GIT_CONFIG_NOSYSTEM``, ``GIT_CONFIG_GLOBAL=/dev/null``, a ``HOME`` of its own)
and runs no hooks (``core.hooksPath=/dev/null``). ``.gitignore`` files in the folder apply as
they would for git itself (they are read from the work tree); the folder's own
``.git/info/exclude`` is used as ``core.excludesFile``. A ``.git`` folder is never part of a
snapshot, so the user's repository, index, stash and branches stay as they are.

A snapshot is a parentless commit of the folder's tree, kept alive by a ref
``refs/pi/s/<unix time>-<sha>``; git shares the objects between snapshots. Blobs of files
outside the folder are kept by ``refs/pi/o/<unix time>-<sha>``. All calls run in asyncio
subprocesses, so the event loop never waits on git.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import shutil
import stat
import subprocess
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pi_coder.checkpoints.files import (
    Unsaved,
    default_perm,
    private_dirs,
    read_regular,
    remove_file,
    same,
    write_file,
)

__all__ = [
    "GitError",
    "Scan",
    "ShadowRepo",
    "Snapshot",
    "TreeEntry",
    "Unsaved",
    "git_available",
    "remove_file",
    "shadow_root",
    "write_file",
]

_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_DROPPED_ENV = frozenset({"PAGER", "EDITOR", "VISUAL", "LESS", "SSH_ASKPASS"})
"""Besides every ``GIT_*`` variable: nothing of the user's environment chooses a program git runs."""
_PERMS = "pi-perms: "
"""Commit message line: JSON ``{path: permission bits}`` of files not at the umask's default."""
_BULK_FROM = 200
"""Past this many files to add, a snapshot writes one pack rather than loose objects."""
_BATCH = 2500
"""Paths per ``update-index`` call."""


_SCAN = ("ls-files", "-z", "--others", "--modified", "--deleted", "--exclude-standard")
"""A full scan: what differs from the shadow index (its stat data tells git what to look at)."""


class GitError(Exception):
    """A git command failed (the message is git's first line of error output)."""


def git_available() -> bool:
    return shutil.which("git") is not None


def shadow_root() -> Path:
    """``<data dir>/checkpoints``: one shadow repository per working folder below it."""
    from pi_coder.paths import data_dir

    return data_dir() / "checkpoints"


@dataclass(slots=True, kw_only=True)
class Snapshot:
    """The result of :meth:`ShadowRepo.snapshot`."""

    commit: str
    tree: str
    skipped_large: list[str] = field(default_factory=list)
    """Files over the size limit (kept at their earlier snapshotted version, if any)."""
    added: int = 0
    """Files added or changed since the last snapshot."""


class Scan:
    """A full scan started ahead of its snapshot (:meth:`ShadowRepo.start_scan`)."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self._taken = False

    def take(self) -> bool:
        """True for the one snapshot that uses it."""
        taken, self._taken = self._taken, True
        return not taken

    def cancel(self) -> None:
        """Stop a scan no snapshot will use."""
        if not self.take():
            return
        if self.proc.poll() is None:
            self.proc.kill()
        with contextlib.suppress(OSError, ValueError, subprocess.TimeoutExpired):
            self.proc.communicate(timeout=5)


@dataclass(slots=True, frozen=True)
class TreeEntry:
    mode: str
    sha: str


class ShadowRepo:
    """The shadow repository of one working folder (see the module docstring)."""

    def __init__(self, cwd: str | os.PathLike[str], root: Path | None = None) -> None:
        self.cwd = os.path.realpath(cwd)
        key = hashlib.sha256(self.cwd.encode()).hexdigest()[:16]
        self.dir = (root or shadow_root()) / f"{Path(self.cwd).name or 'root'}-{key}"
        self.git_dir = self.dir / "git"
        self._lock = asyncio.Lock()
        self._init_lock = asyncio.Lock()
        self._ready = False
        self._perm_cache: tuple[str, dict[str, int]] | None = None
        self._excludes: tuple[str, ...] | None = None

    # ------------------------------------------------------------------ running git

    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and k not in _DROPPED_ENV}
        env.update(
            GIT_DIR=str(self.git_dir),
            GIT_WORK_TREE=self.cwd,
            GIT_INDEX_FILE=str(self.git_dir / "pi-index"),
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CONFIG_GLOBAL=os.devnull,
            GIT_ATTR_NOSYSTEM="1",
            GIT_PAGER="cat",
            PAGER="cat",
            HOME=str(self.dir),
            XDG_CONFIG_HOME=str(self.dir / "no-config"),
            GIT_AUTHOR_NAME="pi",
            GIT_AUTHOR_EMAIL="pi@localhost",
            GIT_COMMITTER_NAME="pi",
            GIT_COMMITTER_EMAIL="pi@localhost",
            GIT_TERMINAL_PROMPT="0",
            LC_ALL="C",
        )
        return env

    def _config_args(self) -> list[str]:
        args = [
            "-c", "core.hooksPath=" + os.devnull,
            "-c", "core.autocrlf=false",
            "-c", "core.safecrlf=false",
            "-c", "core.fsmonitor=false",
            "-c", "core.untrackedCache=true",
            "-c", "core.splitIndex=true",  # a snapshot rewrites a small index, not all 10,000 entries
            "-c", "core.pager=cat",
            "-c", "core.attributesFile=" + os.devnull,
            "-c", "diff.external=",
            "-c", "core.quotePath=false",
            "-c", "core.symlinks=true",
            "-c", "gc.auto=0",
            "-c", "maintenance.auto=false",
            "-c", "advice.addEmbeddedRepo=false",
            "-c", "safe.directory=*",
        ]  # fmt: skip
        user_exclude = Path(self.cwd, ".git", "info", "exclude")
        args += ["-c", f"core.excludesFile={user_exclude if user_exclude.is_file() else os.devnull}"]
        return args

    async def git(
        self, *args: str, stdin: bytes | None = None, check: bool = True, bare: bool = False
    ) -> bytes:
        """Run ``git <args>`` against the shadow; returns stdout.

        Raises:
            GitError: git exited non-zero (with ``check``) or could not be started.
        """
        return await self._collect(self._spawn(args, stdin is not None, bare), args, stdin, check)

    def _spawn(self, args: Sequence[str], stdin: bool = False, bare: bool = False) -> subprocess.Popen[bytes]:
        # Popen here and communicate() in a thread, not asyncio's subprocess: on Python 3.11 a
        # task cancelled while asyncio connects a child's pipes never ends, and a background
        # snapshot is exactly what a closing loop (asyncio.run's end, a test's teardown) cancels.
        # A cancelled call stops git with SIGTERM (it removes its lock files) and the thread ends
        # with it.
        try:
            return subprocess.Popen(
                ["git", *self._config_args(), *args],
                stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={k: v for k, v in self._env().items() if k not in ("GIT_DIR", "GIT_WORK_TREE")}
                if bare
                else self._env(),
                cwd=self.cwd if not bare else str(self.dir),
            )
        except OSError as exc:
            raise GitError(f"cannot run git: {exc.strerror or exc}") from exc

    async def _collect(
        self,
        proc: subprocess.Popen[bytes],
        args: Sequence[str],
        stdin: bytes | None = None,
        check: bool = True,
    ) -> bytes:
        try:
            out, err = await asyncio.to_thread(proc.communicate, stdin)
        except asyncio.CancelledError:
            # A snapshot nobody needs any more: stop git and let it remove its lock files before
            # the next git call (a closing loop may cancel this wait too; git still exits).
            if proc.poll() is None:
                proc.terminate()
            with contextlib.suppress(asyncio.CancelledError, subprocess.TimeoutExpired):
                await asyncio.to_thread(proc.wait, 10)
            raise
        if check and proc.returncode != 0:
            text = err.decode(errors="replace").strip().splitlines()
            raise GitError(text[0] if text else f"git {args[0]} failed ({proc.returncode})")
        return out

    def start_scan(self) -> Scan | None:
        """Start the full scan of the next snapshot now, without waiting (see :meth:`snapshot`).

        Only for a store that is ready for it (made, with a last snapshot and the exclude
        patterns already in place: see :meth:`excludes_current`); None otherwise.
        """
        if not self._ready:
            if not (self.git_dir / "HEAD").is_file() or stat.S_IMODE(self.dir.stat().st_mode) & 0o077:
                return None
            self._ready = True
        if self._excludes is None or self._last_snapshot() is None:
            return None
        try:
            return Scan(self._spawn(_SCAN))
        except GitError:
            return None

    async def ensure(self) -> None:
        """Create the shadow repository on first use."""
        if self._ready:
            return
        async with self._init_lock:  # a first snapshot and a prompt's own may both start here
            if not self._ready:
                await self._create()
                self._ready = True

    async def _create(self) -> None:
        if not (self.git_dir / "HEAD").is_file():
            await asyncio.to_thread(private_dirs, self.dir)
            # Made beside and renamed into place: an init cut short (pi closed while its first
            # snapshot was starting) never leaves a half-made repository behind.
            fresh = self.dir / "git.new"
            await asyncio.to_thread(shutil.rmtree, fresh, True)
            await self.git("init", "-q", "--bare", str(fresh), bare=True)
            (self.dir / "cwd").write_text(self.cwd + "\n")
            await asyncio.to_thread(shutil.rmtree, self.git_dir, True)
            try:
                os.replace(fresh, self.git_dir)
            except OSError:
                if not (self.git_dir / "HEAD").is_file():
                    raise
                await asyncio.to_thread(shutil.rmtree, fresh, True)  # another pi made it meanwhile
        elif stat.S_IMODE(self.dir.stat().st_mode) & 0o077:  # a store made by an earlier version
            await asyncio.to_thread(private_dirs, self.dir)

    # ------------------------------------------------------------------ snapshots

    async def count_files(self, limit: int) -> int:
        """How many files git would snapshot (stops counting past ``limit``)."""
        await self.ensure()
        out = await self.git("ls-files", "-z", "--cached", "--others", "--exclude-standard")
        return min(out.count(b"\0"), limit + 1)

    async def snapshot(
        self,
        max_file_bytes: int,
        message: str = "pi checkpoint",
        only: Sequence[str] | None = None,
        scan: Scan | None = None,
    ) -> Snapshot:
        """Record the folder as git sees it; files over ``max_file_bytes`` are left out.

        ``only``: the paths (relative to the folder) known to be the only ones changed since the
        last snapshot; git then looks at those alone instead of every file (ignore rules still
        apply). An empty list: nothing to look at (the last snapshot). ``scan``: the full scan,
        started earlier by :meth:`start_scan` (the snapshot is of the folder as it was then).

        Returns:
            The snapshot (an existing one when nothing changed since the last snapshot).
        """
        async with self._lock:
            await self.ensure()
            if only is not None and not only and self._last_snapshot() is not None:
                raw = b""
            elif only:
                # The named paths as git counts them: those in the index (changed or not, present
                # or not: ``--modified`` would stat every file of the index) and new ones not
                # ignored; a folder stands for the paths below it.
                raw = await self.git(
                    "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--",
                    *[":(literal)" + p for p in only],
                )  # fmt: skip
            elif scan is not None and scan.take():
                raw = await self._collect(scan.proc, _SCAN)
            else:
                raw = await self.git(*_SCAN)
            names = raw.decode("utf-8", "surrogateescape").split("\0")
            changed = list(
                dict.fromkeys(p for p in names if p and not p.endswith("/"))
            )  # "x/": a nested repo
            add: list[str] = []
            gone: list[str] = []
            skipped: list[str] = []
            modes: dict[str, int | None] = {}
            for rel in changed:
                try:
                    info = os.lstat(os.path.join(self.cwd, rel))
                except OSError:
                    info = None
                if info is None or stat.S_ISDIR(info.st_mode):
                    gone.append(rel)  # deleted, or now a folder (its files are listed themselves)
                    modes[rel] = None
                elif stat.S_ISREG(info.st_mode) and info.st_size > max_file_bytes:
                    skipped.append(rel)
                else:
                    add.append(rel)
                    modes[rel] = info.st_mode
            last = self._last_snapshot()
            if not add and not gone and last is not None:
                # Only snapshots change the shadow index, and "last" records the tree written
                # from it (it is removed while the index is being changed: see below).
                return Snapshot(commit=last[0], tree=last[1], skipped_large=skipped)
            perms = dict(await self._perms(last[0])) if last is not None else {}
            for rel, mode in modes.items():
                perm = stat.S_IMODE(mode) if mode is not None else 0
                if mode is not None and stat.S_ISREG(mode) and perm != default_perm(bool(perm & 0o100)):
                    perms[rel] = perm
                else:
                    perms.pop(rel, None)
            if add or gone:
                (self.dir / "last").unlink(missing_ok=True)  # a crash from here on: no shortcut
                # One update-index for both: ``--remove`` drops a listed path that is gone or now
                # a folder (listed first, so a path that changed type never clashes) and
                # ``--add --replace`` adds the rest.
                # Many new blobs (a first snapshot): stream them into one pack instead of one loose
                # object file each, which is what makes a first snapshot slow (3-15 s for 10,000
                # files on a busy disk, about 1 s this way). The threshold is for this call only,
                # so diffs and later repacks are unaffected.
                # In batches, so a first snapshot that is cancelled (pi closed meanwhile) keeps
                # what it added: the next one continues from there.
                bulk = ["-c", "core.bigFileThreshold=1"] if len(add) > _BULK_FROM else []
                paths = gone + add
                for start in range(0, len(paths), _BATCH):
                    await self.git(
                        *bulk,
                        "update-index",
                        "-z",
                        "--add",
                        "--remove",
                        "--replace",
                        "--stdin",
                        stdin=_z(paths[start : start + _BATCH]),
                    )
            tree = (await self.git("write-tree")).decode().strip()
            if last is not None and last[1] == tree and perms == await self._perms(last[0]):
                self._write_last(last[0], tree, perms)
                return Snapshot(commit=last[0], tree=tree, skipped_large=skipped)
            if perms:
                message += "\n\n" + _PERMS + json.dumps(perms, sort_keys=True, separators=(",", ":"))
            commit = (await self.git("commit-tree", tree, "-m", message)).decode().strip()
            self._perm_cache = (commit, perms)
            now = int(time.time())
            # A loose ref file, as update-ref would write it (the name is new, so no lock race).
            await asyncio.to_thread(self._write_ref, f"refs/pi/s/{now}-{commit}", commit)
            self._write_last(commit, tree, perms)
            return Snapshot(commit=commit, tree=tree, skipped_large=skipped, added=len(add))

    async def _perms(self, commit: str) -> dict[str, int]:
        """Permission bits other than the umask's default of the files of a snapshot (its message)."""
        if self._perm_cache is not None and self._perm_cache[0] == commit:
            return self._perm_cache[1]
        perms: dict[str, int] = {}
        try:
            body = (await self.git("cat-file", "commit", commit)).decode("utf-8", "surrogateescape")
        except GitError:
            body = ""
        for line in body.splitlines():
            if line.startswith(_PERMS):
                loaded = json.loads(line[len(_PERMS) :])
                perms = {str(k): int(v) for k, v in loaded.items()} if isinstance(loaded, dict) else {}
        self._perm_cache = (commit, perms)
        return perms

    def last_commit(self) -> str | None:
        """The commit of the store's last snapshot (by any process), None when there is none."""
        last = self._last_snapshot()
        return last[0] if last is not None else None

    @property
    def excludes(self) -> tuple[str, ...] | None:
        """The shadow's own ignore patterns as last set by :meth:`set_excludes` (None: not set yet)."""
        return self._excludes

    def has_snapshot(self) -> bool:
        """True once a snapshot was taken here (its index then knows the folder's files)."""
        return (self.dir / "last").is_file()

    def excludes_current(self, patterns: Sequence[str]) -> bool:
        """True (and noted) when the store's ``info/exclude`` already holds ``patterns``."""
        if self._excludes == tuple(patterns):
            return True
        try:
            same = (self.git_dir / "info" / "exclude").read_text() == "".join(f"{p}\n" for p in patterns)
        except OSError:
            return False
        if same:
            self._excludes = tuple(patterns)
        return same

    async def set_excludes(self, patterns: Sequence[str]) -> None:
        """Ignore patterns of the shadow itself (``info/exclude``): files never snapshotted."""
        if self._excludes == tuple(patterns):
            return
        await self.ensure()
        text = "".join(f"{p}\n" for p in patterns)
        path = self.git_dir / "info" / "exclude"
        try:
            same = path.read_text() == text
        except OSError:
            same = False
        if not same:
            path.parent.mkdir(exist_ok=True)
            path.write_text(text)
            if patterns:  # files kept before stay in the index unless dropped now
                specs = [f":(glob)**/{p}" for p in patterns]
                await self.git("rm", "-q", "-r", "--cached", "--ignore-unmatch", "--", *specs, check=False)
                (self.dir / "last").unlink(missing_ok=True)
        self._excludes = tuple(patterns)

    def _write_ref(self, name: str, sha: str) -> None:
        path = self.git_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(path.name + ".lock")
        temp.write_text(sha + "\n")
        os.replace(temp, path)

    def _write_last(self, commit: str, tree: str, perms: dict[str, int]) -> None:
        """Record the snapshot the index was written for (and its permission bits: no ``cat-file``
        for them in the next process)."""
        data = json.dumps(perms, sort_keys=True, separators=(",", ":"))
        temp = self.dir / "last.tmp"
        temp.write_text(f"{commit} {tree} {data}\n")
        os.replace(temp, self.dir / "last")
        self._perm_cache = (commit, perms)

    def _last_snapshot(self) -> tuple[str, str] | None:
        try:
            commit, tree, *rest = (self.dir / "last").read_text().split(maxsplit=2)
        except (OSError, ValueError):
            return None
        if rest and (self._perm_cache is None or self._perm_cache[0] != commit):
            try:
                loaded = json.loads(rest[0])
            except ValueError:
                loaded = None
            if isinstance(loaded, dict):
                self._perm_cache = (commit, {str(k): int(v) for k, v in loaded.items()})
        return commit, tree

    async def store_blob(self, path: str, max_bytes: int) -> str | Unsaved | None:
        """Keep a file (anywhere) as a blob: ``"<sha>:<octal permission bits>"``.

        None when nothing is at ``path``; :class:`Unsaved` (the reason) when it is not a regular
        file of at most ``max_bytes`` (never read: see :func:`read_regular`).
        """
        got = await asyncio.to_thread(read_regular, path, max_bytes)
        if got is None or isinstance(got, Unsaved):
            return got
        data, perm = got
        await self.ensure()
        sha = (await self.git("hash-object", "-w", "--stdin", stdin=data)).decode().strip()
        await self.git("update-ref", f"refs/pi/o/{int(time.time())}-{sha}", sha)
        return f"{sha}:{perm:o}"

    async def read_blob(self, sha: str) -> bytes:
        return await self.git("cat-file", "blob", sha.partition(":")[0])

    # ------------------------------------------------------------------ comparing, restoring

    async def changed_paths(self, old: str | None, new: str) -> list[str]:
        """Paths that differ between two snapshots (``old`` None: the empty tree)."""
        out = await self.git("diff-tree", "-r", "-z", "--no-renames", "--name-only", old or _EMPTY_TREE, new)
        return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]

    async def entries(self, commit: str, paths: Iterable[str]) -> dict[str, TreeEntry]:
        """``path -> (mode, blob)`` for the given paths in a snapshot (absent paths are missing)."""
        wanted = list(paths)
        if not wanted:
            return {}
        out: dict[str, TreeEntry] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            raw = await self.git(
                "ls-tree", "-r", "-z", "--full-tree", commit, "--", *[":(literal)" + p for p in chunk]
            )
            for record in raw.decode("utf-8", "surrogateescape").split("\0"):
                if not record:
                    continue
                meta, _, path = record.partition("\t")
                mode, _kind, sha = meta.split()
                out[path] = TreeEntry(mode, sha)
        return out

    async def diff(self, old: str, new: str, paths: Sequence[str] = ()) -> str:
        """A unified diff between two snapshots (optionally of some paths)."""
        args = ["diff", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames", old, new]
        if paths:
            args += ["--", *[":(literal)" + p for p in paths]]
        return (await self.git(*args)).decode("utf-8", "replace")

    async def restore(self, commit: str, paths: Iterable[str]) -> list[str]:
        """Make ``paths`` as they are in snapshot ``commit``: written, or removed when absent there.

        Returns:
            The paths that were changed on disk.
        """
        wanted = sorted(set(paths))
        target = await self.entries(commit, wanted)
        perms = await self._perms(commit)
        changed: list[str] = []
        # Removals first, deepest first: a path that is a file in one snapshot and a folder in
        # the other is cleared before it is written.
        for rel in sorted((p for p in wanted if p not in target), reverse=True):
            if await asyncio.to_thread(remove_file, os.path.join(self.cwd, rel), self.cwd):
                changed.append(rel)
        for rel in wanted:
            entry = target.get(rel)
            if entry is None or entry.mode == "160000":  # a nested repository: leave it alone
                continue
            full = os.path.join(self.cwd, rel)
            data = await self.read_blob(entry.sha)
            perm = perms.get(rel)
            if await asyncio.to_thread(same, full, entry.mode, data, perm):
                continue
            await asyncio.to_thread(write_file, full, entry.mode, data, perm, self.cwd)
            changed.append(rel)
        return sorted(changed)

    # ------------------------------------------------------------------ pruning

    async def prune(self, max_age_days: int, max_bytes: int) -> tuple[int, int]:
        """Drop snapshots older than ``max_age_days`` (and the oldest half while over ``max_bytes``).

        Returns:
            ``(refs removed, bytes on disk afterwards)``.
        """
        async with self._lock:
            await self.ensure()
            raw = (await self.git("for-each-ref", "--format=%(refname)", "refs/pi/")).decode().split()
            stamped = sorted((int(ref.rsplit("/", 1)[1].split("-", 1)[0]), ref) for ref in raw if "-" in ref)
            cutoff = time.time() - max_age_days * 86400 if max_age_days != 0 else None
            drop = [ref for when, ref in stamped if cutoff is not None and when < cutoff]
            size = self.disk_bytes()
            if max_bytes > 0 and size > max_bytes:
                keep = [ref for _when, ref in stamped if ref not in drop]
                drop += keep[: len(keep) // 2]
            if drop:
                await self.git(
                    "update-ref", "--stdin", stdin="".join(f"delete {ref}\n" for ref in drop).encode()
                )
                (self.dir / "last").unlink(missing_ok=True)
            await self.git("gc", "-q", "--prune=now")
            return len(drop), self.disk_bytes()

    def disk_bytes(self) -> int:
        total = 0
        for folder, _dirs, files in os.walk(self.git_dir):
            for name in files:
                try:
                    total += os.lstat(os.path.join(folder, name)).st_size
                except OSError:
                    pass
        return total


def _z(paths: list[str]) -> bytes:
    return b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths)
