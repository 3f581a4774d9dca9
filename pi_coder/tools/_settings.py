"""Settings the coding tools need, as a small value object (the core layer maps user settings onto it)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

__all__ = ["ToolSettings"]


@dataclass(slots=True, kw_only=True)
class ToolSettings:
    """Tool configuration.

    The core layer builds this from the user's settings; tools never read settings files.
    """

    shell_path: str | None = None
    """Shell used by bash and ``!cmd`` (must exist); ``None``: bash, else sh."""
    shell_command_prefix: str | None = None
    """Prepended on its own line to every bash command (e.g. ``shopt -s expand_aliases``)."""
    bash_default_timeout: float = 120.0
    """Seconds a bash command may run when the model gives no ``timeout``."""
    bash_max_timeout: float = 600.0
    """Upper bound for the model's per-call ``timeout``."""
    env_allow: tuple[str, ...] = ()
    """Variables (names or ``fnmatch`` patterns) passed to commands although they look secret."""
    secret_env_names: tuple[str, ...] = ()
    """More variables kept from commands (e.g. those models.toml reads keys from)."""
    env_extra: Callable[[], Mapping[str, str]] | None = None
    """Called for every command: variables to set (the session markers ``PI_SESSION_ID``, ...)."""
    keep_background: bool = False
    """Leave processes a finished command left running (``cmd &``, nohup) alive when pi exits."""
    output_file_max_bytes: int = 50 * 1024 * 1024
    """Cap of a command's full-output file in the temp folder; beyond it the file keeps the tail."""
    image_auto_resize: bool = True
    """Shrink images read from disk to at most 2000x2000 and 4.5 MB (needs Pillow)."""
    rg_path: str | None = None
    """Explicit ripgrep binary; ``None``: next to the interpreter, then on PATH."""
    use_ripgrep: bool = True
    """``False`` forces the pure-Python walker for grep and find."""
