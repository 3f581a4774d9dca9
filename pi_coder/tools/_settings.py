"""Settings the coding tools need, as a small value object (the core layer maps user settings onto it)."""

from __future__ import annotations

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
    image_auto_resize: bool = True
    """Shrink images read from disk to at most 2000x2000 and 4.5 MB (needs Pillow)."""
    rg_path: str | None = None
    """Explicit ripgrep binary; ``None``: next to the interpreter, then on PATH."""
    use_ripgrep: bool = True
    """``False`` forces the pure-Python walker for grep and find."""
