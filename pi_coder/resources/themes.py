"""Theme files: discovery, validation and colour resolution. No UI imports.

A theme is Pi's JSON format::

    {"name": "mine", "vars": {"blue": "#5f87ff"}, "colors": {"accent": "blue", ...}, "export": {...}}

``colors`` must define all 51 tokens in ``TOKENS``. A colour is ``"#rrggbb"``, an xterm-256 index
(0-255), the name of an entry in ``vars`` (resolved recursively) or ``""`` (the terminal's
default colour). ``export`` (optional) holds ``pageBg``, ``cardBg``, ``infoBg`` for HTML export.
Indexes 0-15 are the terminal's own palette: the built-in ``system`` theme uses only those and
``""``, so the terminal's colours show, on a light or a dark background alike (as Pi's ``system``
theme does when the terminal does not report its colours).

A ``theme`` setting may also name a pair, ``"light/dark"`` (the light theme first): the one that
suits the terminal's background is loaded (:func:`detect_theme_name`: the background the terminal
reported, :func:`set_terminal_appearance`, else ``$COLORFGBG``, else dark); ``"auto"`` means
``"light/dark"``.

Where themes come from, later ones winning on a name clash: the built-in ``dark``, ``light`` and ``system``;
``config_dir()/themes/*.json``; ``<cwd>/.pi/themes/*.json``; ``extra_paths`` (files or folders).
``discover=False`` (``--no-themes``) skips the two folders: only the built-ins and ``extra_paths``.
The built-in files ship in the wheel as ``pi_coder/_themes``; a source checkout uses ``themes/``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pi_coder.errors import ConfigError
from pi_coder.paths import config_dir, project_dir

__all__ = [
    "BUILTIN_THEMES",
    "TOKENS",
    "Color",
    "Theme",
    "ThemeError",
    "ThemeInfo",
    "builtin_themes_dir",
    "color_to_hex",
    "color_to_rich",
    "detect_theme_name",
    "list_themes",
    "load_theme",
    "load_theme_file",
    "load_theme_or_default",
    "set_terminal_appearance",
]

TOKENS: tuple[str, ...] = (
    # core UI
    "accent", "border", "borderAccent", "borderMuted", "success", "error", "warning", "muted", "dim",
    "text", "thinkingText",
    # backgrounds and content
    "selectedBg", "userMessageBg", "userMessageText", "customMessageBg", "customMessageText",
    "customMessageLabel", "toolPendingBg", "toolSuccessBg", "toolErrorBg", "toolTitle", "toolOutput",
    # markdown
    "mdHeading", "mdLink", "mdLinkUrl", "mdCode", "mdCodeBlock", "mdCodeBlockBorder", "mdQuote",
    "mdQuoteBorder", "mdHr", "mdListBullet",
    # diffs
    "toolDiffAdded", "toolDiffRemoved", "toolDiffContext",
    # syntax highlighting
    "syntaxComment", "syntaxKeyword", "syntaxFunction", "syntaxVariable", "syntaxString", "syntaxNumber",
    "syntaxType", "syntaxOperator", "syntaxPunctuation",
    # editor border per thinking level
    "thinkingOff", "thinkingMinimal", "thinkingLow", "thinkingMedium", "thinkingHigh", "thinkingXhigh",
    # editor border in ! mode
    "bashMode",
)  # fmt: skip
"""The 51 colour tokens every theme defines."""

EXPORT_KEYS = ("pageBg", "cardBg", "infoBg")
BUILTIN_THEMES = ("dark", "light", "system")

Color = str | int
"""A resolved colour: ``"#rrggbb"``, an xterm-256 index, or ``""`` for the terminal default."""

Source = Literal["builtin", "user", "project", "path"]

_HEX = re.compile(r"^#[0-9a-fA-F]{6}$")


class ThemeError(ConfigError):
    """A theme file is missing, unreadable or invalid; the message names the file and token."""


@dataclass(frozen=True, slots=True)
class ThemeInfo:
    """A discovered theme file (not yet validated)."""

    name: str
    path: Path
    source: Source


@dataclass(frozen=True, slots=True)
class Theme:
    """A validated theme with every colour resolved to a concrete value."""

    name: str
    colors: Mapping[str, Color]
    """All 51 tokens (and any extra ones the file defines)."""
    export: Mapping[str, Color] = field(default_factory=dict)
    path: Path | None = None
    mtime: float | None = None
    """The file's modification time when loaded; see ``changed_on_disk``."""
    source: Source = "builtin"

    def color(self, token: str) -> Color:
        """The resolved colour of ``token``; KeyError for an unknown token."""
        return self.colors[token]

    def hex(self, token: str) -> str | None:
        """``token`` as ``#rrggbb`` (256-colour indexes converted), or None for the terminal default."""
        return color_to_hex(self.colors[token])

    def rich(self, token: str) -> str:
        """``token`` as a Rich colour string (``#rrggbb``, ``color(N)`` or ``default``)."""
        return color_to_rich(self.colors[token])

    def changed_on_disk(self) -> bool:
        """True when the file was modified or removed since it was loaded (for hot reload)."""
        if self.path is None or self.mtime is None:
            return False
        try:
            return self.path.stat().st_mtime != self.mtime
        except OSError:
            return True


def builtin_themes_dir() -> Path:
    """Folder of the built-in theme files: ``pi_coder/_themes`` when installed, else ``themes/``."""
    package = Path(__file__).resolve().parents[1]
    installed = package / "_themes"
    return installed if installed.is_dir() else package.parent / "themes"


def list_themes(
    cwd: str | os.PathLike[str] | None = None,
    *,
    extra_paths: Iterable[str | os.PathLike[str]] = (),
    discover: bool = True,
) -> list[ThemeInfo]:
    """All available themes, one per name (the later source wins), sorted by name.

    Args:
        cwd: Project folder for ``.pi/themes``; None skips project themes.
        extra_paths: More theme files or folders (the ``themes`` setting, ``--theme`` paths).
        discover: False skips the config and ``.pi/themes`` folders (``--no-themes``).
    """
    found: dict[str, ThemeInfo] = {}
    for path, source in _candidate_files(cwd, extra_paths, discover=discover):
        name = _declared_name(path)
        found[name] = ThemeInfo(name=name, path=path, source=source)
    return sorted(found.values(), key=lambda info: info.name)


def load_theme(
    name: str,
    cwd: str | os.PathLike[str] | None = None,
    *,
    extra_paths: Iterable[str | os.PathLike[str]] = (),
    discover: bool = True,
) -> Theme:
    """Load the theme called ``name``.

    Args:
        name: A theme name, a ``"light/dark"`` pair (the one that suits the terminal's
            background), ``"auto"`` (= ``"light/dark"``), or a path to a ``.json`` file.
        cwd: Project folder for ``.pi/themes``; None skips project themes.
        extra_paths: More theme files or folders.
        discover: False skips the config and ``.pi/themes`` folders (``--no-themes``).

    Raises:
        ThemeError: Unknown name, or the file is invalid (the message names file and token).
    """
    if name == "auto":
        name = "light/dark"
    if "/" in name and not name.endswith(".json"):
        light, _, dark = name.partition("/")
        name = light if detect_theme_name() == "light" else dark
    as_path = Path(name).expanduser()
    if name.endswith(".json") and as_path.is_file():
        return load_theme_file(as_path, "path")
    themes = list_themes(cwd, extra_paths=extra_paths, discover=discover)
    match = next((t for t in themes if t.name == name), None)
    if match is None:
        match = next((t for t in reversed(themes) if t.path.stem == name), None)
    if match is None:
        available = ", ".join(t.name for t in themes)
        raise ThemeError(f"theme {name!r} not found (available: {available})")
    return load_theme_file(match.path, match.source)


def load_theme_or_default(
    name: str,
    cwd: str | os.PathLike[str] | None = None,
    *,
    extra_paths: Iterable[str | os.PathLike[str]] = (),
    default: str = "dark",
    discover: bool = True,
) -> tuple[Theme, str | None]:
    """Like ``load_theme`` but falls back to a built-in theme; returns the theme and a warning."""
    try:
        return load_theme(name, cwd, extra_paths=extra_paths, discover=discover), None
    except ThemeError as exc:
        return load_theme(default), f"{exc}; using the {default} theme"


def load_theme_file(path: str | os.PathLike[str], source: Source = "path") -> Theme:
    """Read, validate and resolve one theme file.

    Raises:
        ThemeError: The file cannot be read or parsed, or a token is missing or invalid.
    """
    file = Path(path)
    try:
        mtime = file.stat().st_mtime
        data = json.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ThemeError(f"{file}: cannot read theme ({exc.strerror or exc})") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ThemeError(f"{file}: invalid JSON: {exc}") from exc
    name, colors, export = _validate(data, file)
    return Theme(name=name, colors=colors, export=export, path=file, mtime=mtime, source=source)


_reported_appearance: Literal["dark", "light"] | None = None


def set_terminal_appearance(appearance: Literal["dark", "light"] | None) -> None:
    """What the terminal said of its background (the TUI asks it); None: not known."""
    global _reported_appearance
    _reported_appearance = appearance


def detect_theme_name(environ: Mapping[str, str] | None = None) -> Literal["dark", "light"]:
    """``"light"`` when the terminal reported a light background (:func:`set_terminal_appearance`)
    or, without a report, ``$COLORFGBG`` names a light one; else ``"dark"``."""
    if _reported_appearance is not None and environ is None:
        return _reported_appearance
    value = (environ if environ is not None else os.environ).get("COLORFGBG", "")
    last = value.split(";")[-1].strip()
    if not last.isdigit():
        return "dark"
    bg = int(last)
    if bg > 255:
        return "dark"
    hex_value = _xterm_hex(bg)
    r, g, b = (int(hex_value[i : i + 2], 16) for i in (1, 3, 5))
    return "light" if (0.299 * r + 0.587 * g + 0.114 * b) > 140 else "dark"


def color_to_hex(value: Color) -> str | None:
    """``"#rrggbb"`` for a colour (xterm-256 indexes converted); None for ``""``."""
    if isinstance(value, int):
        return _xterm_hex(value)
    return value.lower() if value else None


def color_to_rich(value: Color) -> str:
    """A Rich colour string: ``#rrggbb``, ``color(N)`` or ``default``."""
    if isinstance(value, int):
        return f"color({value})"
    return value.lower() if value else "default"


# -- internals -----------------------------------------------------------------------------


def _candidate_files(
    cwd: str | os.PathLike[str] | None, extra_paths: Iterable[str | os.PathLike[str]], *, discover: bool
) -> list[tuple[Path, Source]]:
    locations: list[tuple[Path, Source]] = [(builtin_themes_dir(), "builtin")]
    if discover:
        locations.append((config_dir() / "themes", "user"))
    if discover and cwd is not None:
        locations.append((project_dir(cwd) / "themes", "project"))
    locations.extend((Path(p).expanduser(), "path") for p in extra_paths)
    out: list[tuple[Path, Source]] = []
    for location, source in locations:
        if location.is_file():
            out.append((location, source))
            continue
        try:
            entries = sorted(location.iterdir())
        except OSError:
            continue
        out.extend((p, source) for p in entries if p.suffix == ".json" and p.is_file())
    return out


def _declared_name(path: Path) -> str:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return path.stem
    name = data.get("name") if isinstance(data, dict) else None
    return name if isinstance(name, str) and name.strip() else path.stem


def _validate(data: Any, file: Path) -> tuple[str, dict[str, Color], dict[str, Color]]:
    if not isinstance(data, dict):
        raise ThemeError(f"{file}: a theme must be a JSON object")
    problems: list[str] = []
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        problems.append('"name" must be a non-empty string')
        name = file.stem
    raw_vars = data.get("vars", {})
    if not isinstance(raw_vars, dict):
        problems.append('"vars" must be an object')
        raw_vars = {}
    raw_colors = data.get("colors")
    if not isinstance(raw_colors, dict):
        raise ThemeError(f'{file}: "colors" must be an object defining all {len(TOKENS)} tokens')
    raw_export = data.get("export", {})
    if not isinstance(raw_export, dict):
        problems.append('"export" must be an object')
        raw_export = {}

    resolver = _Resolver(raw_vars)
    for var in raw_vars:
        resolver.resolve(var, f"vars.{var}", raw_vars[var], problems)
    missing = [t for t in TOKENS if t not in raw_colors]
    if missing:
        problems.append(f"missing colour tokens: {', '.join(missing)}")
    colors: dict[str, Color] = {}
    for token, value in raw_colors.items():
        resolved = resolver.value(value, f"colors.{token}", problems)
        if resolved is not None:
            colors[token] = resolved
    export: dict[str, Color] = {}
    for key, value in raw_export.items():
        resolved = resolver.value(value, f"export.{key}", problems)
        if resolved is not None:
            export[key] = resolved
    if problems:
        raise ThemeError(f"{file}: invalid theme {name!r}: " + "; ".join(problems))
    return name, colors, export


class _Resolver:
    """Resolves colour values and var references, reporting cycles and unknown names."""

    def __init__(self, raw_vars: Mapping[str, Any]) -> None:
        self._raw = raw_vars
        self._done: dict[str, Color | None] = {}

    def value(self, value: Any, where: str, problems: list[str]) -> Color | None:
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            problems.append(f"{where}: {value!r} is not a colour")
            return None
        if isinstance(value, int):
            if 0 <= value <= 255:
                return value
            problems.append(f"{where}: {value} is outside 0-255")
            return None
        if value == "" or _HEX.match(value):
            return value
        if value in self._raw:
            return self.resolve(value, where, self._raw[value], problems)
        problems.append(f'{where}: {value!r} is not "#rrggbb", 0-255, "" or a name in vars')
        return None

    def resolve(
        self, var: str, where: str, raw: Any, problems: list[str], chain: tuple[str, ...] = ()
    ) -> Color | None:
        if var in self._done:
            return self._done[var]
        if var in chain:
            cycle = " -> ".join((*chain[chain.index(var) :], var))
            problems.append(f"{where}: circular var reference {cycle}")
            self._done[var] = None
            return None
        if isinstance(raw, str) and raw in self._raw and not _HEX.match(raw):
            result = self.resolve(raw, where, self._raw[raw], problems, (*chain, var))
        else:
            result = self.value(raw, f"vars.{var}", problems)
        self._done[var] = result
        return result


def _xterm_hex(index: int) -> str:
    base16 = (
        "#000000", "#800000", "#008000", "#808000", "#000080", "#800080", "#008080", "#c0c0c0",
        "#808080", "#ff0000", "#00ff00", "#ffff00", "#0000ff", "#ff00ff", "#00ffff", "#ffffff",
    )  # fmt: skip
    if index < 16:
        return base16[index]
    if index < 232:
        steps = (0, 95, 135, 175, 215, 255)
        i = index - 16
        r, g, b = steps[i // 36], steps[(i // 6) % 6], steps[i % 6]
        return f"#{r:02x}{g:02x}{b:02x}"
    level = 8 + 10 * (index - 232)
    return f"#{level:02x}{level:02x}{level:02x}"
