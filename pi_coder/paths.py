"""Where pi_coder keeps its files. Functions only: nothing is read or created at import.

``PI_CODER_HOME``, when set, holds everything. Otherwise configuration lives under
``platformdirs.user_config_dir("pi-coder")`` and data (sessions, logs) under
``platformdirs.user_data_dir("pi-coder")``.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = [
    "config_dir",
    "data_dir",
    "ensure_private_dir",
    "logs_dir",
    "project_dir",
    "session_dir_for_cwd",
    "session_dir_from_env",
    "sessions_dir",
]

SESSION_DIR_ENV = ("PI_CODER_SESSION_DIR", "PI_CODING_AGENT_SESSION_DIR")
"""Variables naming the session folder (ours, then Pi's); ``--session-dir`` beats them, they beat the setting."""


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
