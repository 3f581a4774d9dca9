"""The environment pi installs packages into: one folder per scope in the data folder.

``<data>/packages/user/`` for the user's packages, ``<data>/packages/projects/<folder>/`` for a
project's. Each holds ``venv/`` (a virtual environment for PyPI distributions and the
dependencies of git and local packages, made with ``uv`` when it is on PATH, else ``venv`` and
pip) and ``git/<name>-<hash>/`` (clones). The venv uses pi's own Python, so its site-packages can
join pi's ``sys.path`` for package extensions. Only ``pi install``/``remove``/``update`` change
anything here; start-up only reads.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator, Sequence
from pathlib import Path

from pi_coder.errors import UserError
from pi_coder.packages.sources import PackageSource, Scope

__all__ = ["PackageEnv", "PackageInstallError"]


class PackageInstallError(UserError):
    """pip, uv or git failed; the message carries the tool's last lines."""


class PackageEnv:
    """One scope's install folder."""

    def __init__(self, scope: Scope, cwd: str | os.PathLike[str], root: Path | None = None) -> None:
        from pi_coder.paths import data_dir, encode_cwd

        base = root if root is not None else data_dir() / "packages"
        self.scope = scope
        self.root = base / "user" if scope == "user" else base / "projects" / encode_cwd(os.path.realpath(cwd))
        self.venv = self.root / "venv"

    # -- reading (start-up) ----------------------------------------------------------------

    def site_packages(self) -> Path | None:
        """The venv's site-packages, or None before the first install."""
        if not self.venv.is_dir():
            return None
        relative = os.path.relpath(
            sysconfig.get_path("purelib", vars={"base": "/b", "platbase": "/b"}), "/b"
        )
        folder = self.venv / relative
        return folder if folder.is_dir() else None

    def clone_dir(self, source: PackageSource) -> Path:
        digest = hashlib.sha256(source.identity.encode()).hexdigest()[:10]
        return self.root / "git" / f"{source.name}-{digest}"

    # -- changing (pi install / remove / update) -------------------------------------------

    def pip_install(self, requirements: Sequence[str], *, upgrade: bool = False) -> None:
        """Install requirements into the venv (created on first use).

        pip's own settings apply (``PIP_INDEX_URL``, ``PIP_FIND_LINKS``, ``PIP_NO_INDEX``, pip.conf;
        ``UV_*`` for uv).
        """
        if not requirements:
            return
        python = self._ensure_venv()
        extra = ["--upgrade"] if upgrade else []
        uv = shutil.which("uv")
        if uv:
            _run([uv, "pip", "install", "--python", str(python), *extra, *requirements], "uv pip install")
        else:
            _run([*self._pip(python), "install", "--quiet", *extra, *requirements], "pip install")

    def pip_uninstall(self, name: str) -> None:
        if self.site_packages() is None:
            return
        python = self._python()
        uv = shutil.which("uv")
        if uv:
            _run([uv, "pip", "uninstall", "--python", str(python), name], "uv pip uninstall")
        else:
            _run([*self._pip(python), "uninstall", "--yes", "--quiet", name], "pip uninstall")

    def clone(self, source: PackageSource) -> Path:
        """Clone ``source`` (replacing an old clone only once the new one is complete)."""
        target = self.clone_dir(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        shutil.rmtree(staging, ignore_errors=True)
        try:
            _run(["git", "clone", "--quiet", "--", source.url, str(staging)], "git clone")
            if source.ref:
                _run(["git", "-C", str(staging), "checkout", "--quiet", source.ref, "--"], "git checkout")
            shutil.rmtree(target, ignore_errors=True)
            os.replace(staging, target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return target

    def pull(self, source: PackageSource) -> Path:
        """Bring an existing clone to the newest commit of its ref (a branch moves; a tag or commit stays)."""
        target = self.clone_dir(source)
        if not (target / ".git").exists():
            return self.clone(source)
        _run(["git", "-C", str(target), "fetch", "--quiet", "--tags", "origin"], "git fetch")
        ref = source.ref
        if ref is None:
            head = _run(["git", "-C", str(target), "symbolic-ref", "--short", "refs/remotes/origin/HEAD"], "git")
            ref = head.strip().removeprefix("origin/")
        branch = subprocess.run(
            ["git", "-C", str(target), "rev-parse", "--verify", "--quiet", f"refs/remotes/origin/{ref}"],
            capture_output=True,
            check=False,
        )
        goal = f"origin/{ref}" if branch.returncode == 0 else ref
        _run(["git", "-C", str(target), "checkout", "--quiet", "--detach", goal, "--"], "git checkout")
        return target

    def remove_clone(self, source: PackageSource) -> None:
        shutil.rmtree(self.clone_dir(source), ignore_errors=True)

    def _python(self) -> Path:
        return self.venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")

    def _ensure_venv(self) -> Path:
        python = self._python()
        if python.exists():
            return python
        self.root.mkdir(parents=True, exist_ok=True)
        uv = shutil.which("uv")
        with _cleanup_on_failure(self.venv):
            if uv:
                _run([uv, "venv", "--quiet", "--python", sys.executable, str(self.venv)], "uv venv")
            elif _host_pip_works():
                # No pip inside: pi's own pip installs into it (``pip --python``), which saves seconds.
                _run([sys.executable, "-m", "venv", "--without-pip", str(self.venv)], "python -m venv")
            else:
                _run([sys.executable, "-m", "venv", str(self.venv)], "python -m venv")
        return python

    def _pip(self, python: Path) -> list[str]:
        if (self.venv / "bin" / "pip").exists() or (self.venv / "Scripts" / "pip.exe").exists():
            return [str(python), "-m", "pip"]
        return [sys.executable, "-m", "pip", "--python", str(python)]


def _host_pip_works() -> bool:
    import importlib.util

    return importlib.util.find_spec("pip") is not None


@contextlib.contextmanager
def _cleanup_on_failure(folder: Path) -> Iterator[None]:
    try:
        yield
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise


def _run(command: list[str], what: str) -> str:
    """Run a tool, its output captured; a failure raises with the tool's last lines."""
    env = dict(os.environ)
    env.setdefault("GIT_TERMINAL_PROMPT", "0")  # never wait for a password nobody will type
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, check=False)
    except FileNotFoundError:
        raise PackageInstallError(f"{what}: {command[0]} is not installed") from None
    if done.returncode != 0:
        lines = [line for line in (done.stderr or done.stdout).splitlines() if line.strip()]
        detail = " / ".join(lines[-3:]) or f"exit code {done.returncode}"
        raise PackageInstallError(f"{what} failed: {detail}")
    return done.stdout
