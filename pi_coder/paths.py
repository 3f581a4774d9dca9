"""Where pi_coder keeps its files. Functions only: nothing is read or created at import.

``PI_CODER_HOME``, when set, holds everything. Otherwise configuration lives under
``platformdirs.user_config_dir("pi-coder")`` and data (sessions, logs) under
``platformdirs.user_data_dir("pi-coder")``.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = [
    "write_atomic",
    "config_dir",
    "data_dir",
    "ensure_private_dir",
    "logs_dir",
    "project_dir",
    "session_dir_for_cwd",
    "session_dir_from_env",
    "sessions_dir",
    "shorten_home",
]

SESSION_DIR_ENV = ("PI_CODER_SESSION_DIR", "PI_CODING_AGENT_SESSION_DIR")
"""Variables naming the session folder (ours, then Pi's); ``--session-dir`` beats them, they beat the setting."""


def shorten_home(path: str) -> str:
    """Replace the home directory prefix with ``~``."""
    home = os.path.expanduser("~")
    if home and home != "/" and (path == home or path.startswith(home + os.sep)):
        return "~" + path[len(home) :]
    return path


def _home() -> Path | None:
    value = os.environ.get("PI_CODER_HOME")
    return Path(value).expanduser() if value else None


def config_dir() -> Path:
    """settings.toml, models.toml, AGENTS.md, SYSTEM.md, themes/, prompts/, skills/."""
    home = _home()
    if home is not None:
        return home
    from platformdirs import user_config_dir

    return Path(user_config_dir("pi-coder"))


def data_dir() -> Path:
    home = _home()
    if home is not None:
        return home
    from platformdirs import user_data_dir

    return Path(user_data_dir("pi-coder"))


def sessions_dir() -> Path:
    return data_dir() / "sessions"


def session_dir_from_env() -> str | None:
    """The session folder named by ``PI_CODER_SESSION_DIR`` or Pi's ``PI_CODING_AGENT_SESSION_DIR``."""
    for name in SESSION_DIR_ENV:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return None


def logs_dir() -> Path:
    return data_dir() / "logs"


def project_dir(cwd: str | os.PathLike[str]) -> Path:
    """The project-scope folder ``<cwd>/.pi``."""
    return Path(cwd) / ".pi"


def encode_cwd(cwd: str) -> str:
    """``/home/u/proj`` -> ``--home-u-proj--`` (Pi's per-cwd folder name)."""
    stripped = cwd.lstrip("/\\")
    for ch in "/\\:":
        stripped = stripped.replace(ch, "-")
    return f"--{stripped}--"


def session_dir_for_cwd(cwd: str, root: Path | None = None) -> Path:
    return (root or sessions_dir()) / encode_cwd(cwd)


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` (and parents) with mode 0700 if missing; return it."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


def write_atomic(path: Path, data: bytes, *, mode: int = 0o600) -> None:
    """Replace ``path`` with ``data`` so a reader or a crash sees the old file or the new one, never
    half of it: a temporary file in the same folder (created ``mode``, never following a link),
    fsynced, renamed over ``path``, then the folder fsynced. The temporary file is removed on failure."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            if hasattr(os, "fchmod"):  # a leftover temporary file may have had other bits
                os.fchmod(handle.fileno(), mode)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:
        dir_fd = os.open(path.parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)
