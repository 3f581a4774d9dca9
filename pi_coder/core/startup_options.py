"""The command-line choices the start-up plan reads, declared once.

Every ``pi`` option is declared exactly once: as a field of :class:`StartupOptions` (the
choices the start-up plan reads) or of ``modes.options.CliOptions`` (the rest of the command
line, which extends this class), with its flags, help text and help group in the field's
metadata (:func:`flag`). ``pi_coder.cli`` builds its parser and its ``--help`` from those
fields, so a new option is one new field. Callers without a command line (tests, embedding)
build a :class:`StartupOptions` directly (``core.startup.PlanOptions`` is the same class).
Only ``dataclasses`` is imported: the command line's options module imports this one on
``pi -p``'s path.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["PANELS", "CliFlag", "StartupOptions", "flag"]

PANELS = ("Mode", "Model", "Session", "Tools", "Prompt", "Project trust", "Extensions", "Safety", "Other")
"""The ``--help`` groups, in the order they are listed."""

OptionKind = Literal["flag", "value", "optional"]


class CliFlag:
    """How one field is spelled on the command line.

    ``kind`` is ``flag`` (no value), ``value`` or ``optional`` (a value only when the next word
    is not a flag or @file); ``repeatable`` values are appended to the field's list.
    """

    __slots__ = ("flags", "help", "kind", "metavar", "panel", "repeatable")

    def __init__(
        self,
        flags: tuple[str, ...],
        help: str,
        panel: str,
        kind: OptionKind,
        metavar: str | None,
        repeatable: bool,
    ) -> None:
        self.flags = flags
        self.help = help
        self.panel = panel
        self.kind = kind
        self.metavar = metavar
        self.repeatable = repeatable


def flag(
    *flags: str,
    help: str,
    panel: str,
    metavar: str | None = None,
    kind: OptionKind | None = None,
    repeatable: bool = False,
) -> Mapping[str, CliFlag]:
    """The ``metadata`` of a field that is a command-line option.

    Without ``metavar`` (and without ``kind``) the option is a flag that sets the field to True.
    """
    if panel not in PANELS:
        raise ValueError(f"unknown help group {panel!r}")
    chosen: OptionKind = kind or ("value" if metavar is not None else "flag")
    return {"cli": CliFlag(tuple(flags), help, panel, chosen, metavar, repeatable)}


@dataclass(slots=True, kw_only=True)
class StartupOptions:
    """What the plan takes from the command line. ``None`` means "not given" for every optional value."""

    thinking: str | None = field(
        default=None,
        metadata=flag(
            "--thinking",
            help="Thinking level: off, minimal, low, medium, high, xhigh, max (clamped to the model).",
            panel="Model",
            metavar="LEVEL",
        ),
    )
    tools: list[str] | None = field(
        default=None,
        metadata=flag(
            "-t",
            "--tools",
            help="Comma-separated allowlist of tools or * patterns (default read,bash,edit,write; also "
            "grep,find,ls); only +name/-name entries change the default set instead.",
            panel="Tools",
            metavar="NAMES",
        ),
    )
    """``-t/--tools`` entries split on commas: names (built-in or an extension's), ``*`` patterns, ``+name``/``-name``, ``mcp__...``."""
    no_tools: bool = field(
        default=False,
        metadata=flag(
            "-nt", "--no-tools", help="Start without built-in tools (--tools adds some back).", panel="Tools"
        ),
    )
    no_builtin_tools: bool = field(
        default=False,
        metadata=flag(
            "-nbt",
            "--no-builtin-tools",
            help="Start without built-in tools but keep extension tools (--tools adds some back).",
            panel="Tools",
        ),
    )
    """``-nbt``: no built-in tools by default; extension tools stay."""
    exclude_tools: list[str] = field(
        default_factory=list,
        metadata=flag(
            "-xt",
            "--exclude-tools",
            help="Comma-separated tools or * patterns to leave out, after every other tool option.",
            panel="Tools",
            metavar="NAMES",
        ),
    )
    """``-xt/--exclude-tools`` names, split on commas."""
    system_prompt: str | None = field(
        default=None,
        metadata=flag(
            "--system-prompt",
            help="Replace the system prompt (text, or a file to read).",
            panel="Prompt",
            metavar="TEXT|FILE",
        ),
    )
    append_system_prompt: list[str] = field(
        default_factory=list,
        metadata=flag(
            "--append-system-prompt",
            help="Append text (or a file's text) to the system prompt (repeatable).",
            panel="Prompt",
            metavar="TEXT|FILE",
            repeatable=True,
        ),
    )
    """``--append-system-prompt`` texts or files, in order (repeatable)."""
    no_context_files: bool = field(
        default=False,
        metadata=flag("-nc", "--no-context-files", help="Do not read AGENTS.md or CLAUDE.md.", panel="Prompt"),
    )
    """``-nc``: no AGENTS.md/CLAUDE.md."""
    prompt_templates: list[str] = field(
        default_factory=list,
        metadata=flag(
            "--prompt-template",
            help="Load a prompt template file or folder (repeatable).",
            panel="Prompt",
            metavar="PATH",
            repeatable=True,
        ),
    )
    """``--prompt-template`` files or folders (repeatable)."""
    no_prompt_templates: bool = field(
        default=False,
        metadata=flag(
            "-np",
            "--no-prompt-templates",
            help="Load only the --prompt-template templates (none discovered or configured).",
            panel="Prompt",
        ),
    )
    """``-np``: only the ``--prompt-template`` templates."""
    themes: list[str] = field(
        default_factory=list,
        metadata=flag(
            "--theme", help="Load a theme file or folder (repeatable).", panel="Other", metavar="PATH", repeatable=True
        ),
    )
    """``--theme`` files or folders (repeatable)."""
    use_theme: str | None = field(
        default=None,
        metadata=flag("--use-theme", help="The theme for this run (not saved).", panel="Other", metavar="NAME"),
    )
    """``--use-theme``: the theme for this run (not saved)."""
    no_themes: bool = field(
        default=False,
        metadata=flag(
            "--no-themes", help="Disable discovered and configured themes (--theme paths still load).", panel="Other"
        ),
    )
    """``--no-themes``: no discovered or configured themes (built-ins; ``--theme`` paths still load)."""
    name: str | None = field(
        default=None,
        metadata=flag("-n", "--name", help="Set the session's display name.", panel="Session", metavar="NAME"),
    )
    """``-n/--name``: the session's display name."""
    verbose: bool = field(
        default=False,
        metadata=flag(
            "--verbose",
            help="Start-up diagnostics on stderr: settings files, models, context files, timings.",
            panel="Other",
        ),
    )
    """``--verbose``: start-up diagnostics on stderr."""
