"""The command-line choices the start-up plan reads, declared once.

``modes.options.CliOptions`` (the parsed command line) extends :class:`StartupOptions`, and
callers without a command line (tests, embedding) build a :class:`StartupOptions` directly
(``core.startup.PlanOptions`` is the same class). Only ``dataclasses`` is imported: the
command line's options module imports this one on ``pi -p``'s path.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["StartupOptions"]


@dataclass(slots=True, kw_only=True)
class StartupOptions:
    """What the plan takes from the command line. ``None`` means "not given" for every optional value."""

    thinking: str | None = None
    tools: list[str] | None = None
    """``-t/--tools`` entries split on commas: names (built-in or an extension's), ``*`` patterns, ``+name``/``-name``, ``mcp__...``."""
    no_tools: bool = False
    no_builtin_tools: bool = False
    """``-nbt``: no built-in tools by default; extension tools stay."""
    exclude_tools: list[str] = field(default_factory=list)
    """``-xt/--exclude-tools`` names, split on commas."""
    system_prompt: str | None = None
    append_system_prompt: list[str] = field(default_factory=list)
    """``--append-system-prompt`` texts or files, in order (repeatable)."""
    no_context_files: bool = False
    """``-nc``: no AGENTS.md/CLAUDE.md."""
    prompt_templates: list[str] = field(default_factory=list)
    """``--prompt-template`` files or folders (repeatable)."""
    no_prompt_templates: bool = False
    """``-np``: only the ``--prompt-template`` templates."""
    themes: list[str] = field(default_factory=list)
    """``--theme`` files or folders (repeatable)."""
    use_theme: str | None = None
    """``--use-theme``: the theme for this run (not saved)."""
    no_themes: bool = False
    """``--no-themes``: no discovered or configured themes (built-ins; ``--theme`` paths still load)."""
    name: str | None = None
    """``-n/--name``: the session's display name."""
    verbose: bool = False
    """``--verbose``: start-up diagnostics on stderr."""
