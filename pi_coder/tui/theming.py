"""Pi themes (``pi_coder.resources.themes``) on Textual: CSS variables, Rich styles, hot reload.

A Pi theme becomes a Textual ``Theme`` named ``pi-<name>``:

- Textual's base colours: ``primary`` = ``accent``, ``secondary`` = ``mdLink``, ``accent`` =
  ``borderAccent``, ``warning``/``error``/``success`` as named, ``foreground`` = ``text``,
  ``background``/``surface``/``panel`` = the export colours ``pageBg``/``cardBg``/``infoBg``
  when the theme has them;
- every one of the 51 tokens as a CSS variable ``$pi-<token in kebab case>``
  (``$pi-user-message-bg``, ``$pi-thinking-high``); a token set to ``""`` (the terminal's
  default) becomes ``ansi_default`` (text) or ``transparent`` (backgrounds);
- the selection colour of lists (``block-cursor-*``) from ``selectedBg``.

The page itself is the terminal's own background (and text colour), as in Pi: the Textual theme
is built in its ANSI mode (``background`` = ``ansi_default``, no truecolor conversion), and only
cards (user messages, tool blocks, selected rows) carry the theme's background tokens. The
``paint_background`` setting paints the theme's ``pageBg`` instead. ``NO_COLOR`` drops every
colour: structure is then bold, underline, reverse and dim only (docs/architecture.md#themes).

:class:`ThemeController` loads the ``theme`` setting (with the ``themes`` setting's extra paths,
the config ``themes/`` folder and ``.pi/themes/``), applies it, previews others (``/settings``)
and polls the theme file's mtime once a second to reload it when it is edited.
:func:`session_themes` builds one for a session before the app exists (``run_tui``); the app
attaches itself with :meth:`ThemeController.attach`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from pi_coder.resources.themes import (
    TOKENS,
    Color,
    Theme,
    ThemeError,
    ThemeInfo,
    color_to_hex,
    detect_theme_name,
    list_themes,
    load_theme,
    load_theme_file,
)

if TYPE_CHECKING:
    from textual.app import App
    from textual.theme import Theme as TextualTheme
    from textual.timer import Timer

    from pi_coder.core.agent_session import AgentSession

__all__ = [
    "ThemeController",
    "default_theme_variables",
    "markdown_styles",
    "no_color",
    "session_theme_paths",
    "session_themes",
    "textual_theme",
    "textual_theme_name",
    "theme_style",
    "theme_variables",
    "token_variable",
]

_ANSI_NAMES = (
    "black", "red", "green", "yellow", "blue", "magenta", "cyan", "white",
    "bright_black", "bright_red", "bright_green", "bright_yellow", "bright_blue", "bright_magenta",
    "bright_cyan", "bright_white",
)  # fmt: skip
"""Textual's names of the terminal's 16 palette colours (``ansi_red``), by index."""

_FALLBACK_FG = {True: "#d4d4d4", False: "#1e1e1e"}
_FALLBACK_BG = {True: "#121212", False: "#efefef"}  # Textual's own page colours


def no_color() -> bool:
    """True when ``NO_COLOR`` is set (any value, as Textual reads it): no colour at all."""
    return "NO_COLOR" in os.environ


def token_variable(token: str) -> str:
    """CSS variable name of a token: ``userMessageBg`` -> ``pi-user-message-bg``."""
    return "pi-" + re.sub(r"(?<=[a-z0-9])([A-Z])", r"-\1", token).lower()


def theme_style(app: Any, token: str, fallback: str, *, extra: str = "") -> str:
    """A Rich style: ``token``'s colour in the app's Pi theme (``app.themes``), else ``fallback``.

    ``extra`` is prepended (``"bold"``). A token set to the terminal default gives just ``extra``.
    """
    themes = getattr(app, "themes", None)
    color = themes.rich(token) if isinstance(themes, ThemeController) else None
    if color is None or (color == "default" and themes is not None and themes.shown is None):
        color = fallback
    if color == "default":
        return extra or "none"
    return f"{extra} {color}".strip()


def textual_theme_name(theme: Theme) -> str:
    return f"pi-{theme.name}"


def _luminance(hex_color: str) -> float:
    r, g, b = (int(hex_color[i : i + 2], 16) / 255 for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _css_color(value: Color) -> str | None:
    """A theme colour for Textual CSS: indexes 0-15 stay the terminal's palette (``ansi_red``),
    others become ``#rrggbb``; None for ``""`` (the terminal's default)."""
    if isinstance(value, int) and 0 <= value < len(_ANSI_NAMES):
        return f"ansi_{_ANSI_NAMES[value]}"
    return color_to_hex(value)


def _is_dark(theme: Theme) -> bool:
    if theme.name == "system":  # the terminal's colours: as dark as its background
        return detect_theme_name() == "dark"
    for source in (theme.export.get("pageBg"), theme.colors.get("selectedBg"), theme.colors.get("userMessageBg")):
        hex_color = color_to_hex(source) if source not in (None, "") else None
        if hex_color:
            return _luminance(hex_color) < 0.5
    return theme.name != "light"


def theme_variables(theme: Theme) -> dict[str, str]:
    """``pi-*`` CSS variables for every colour token of ``theme``."""
    variables: dict[str, str] = {}
    for token in TOKENS:
        value = _css_color(theme.colors.get(token, ""))
        if value is None:
            value = "transparent" if token.endswith("Bg") else "ansi_default"
        variables[token_variable(token)] = value
    return variables


def default_theme_variables() -> dict[str, str]:
    """Variables for CSS that uses ``$pi-*`` before a Pi theme is applied (the built-in dark theme)."""
    try:
        variables = theme_variables(load_theme("dark"))
    except ThemeError:
        variables = {token_variable(t): "ansi_default" for t in TOKENS}
    variables["pi-overlay"] = "transparent"
    return variables


def textual_theme(theme: Theme, *, painted: bool = False, colorless: bool = False) -> TextualTheme:
    """The Textual theme for a Pi theme (see the module docstring for the mapping).

    ``painted``: the page takes the theme's ``pageBg``/``cardBg``/``infoBg`` (the
    ``paint_background`` setting); else the terminal's background shows. ``colorless``
    (``NO_COLOR``): selections and cursors are drawn in reverse video, since colours are dropped.
    """
    from textual.theme import Theme as TextualTheme

    def hex_of(token: str) -> str | None:
        value = theme.colors.get(token)
        return _css_color(value) if value is not None and value != "" else None

    def export_of(key: str) -> str | None:
        value = theme.export.get(key)
        return color_to_hex(value) if value not in (None, "") else None

    dark = _is_dark(theme)
    painted = painted and not colorless
    variables = theme_variables(theme)
    selected = hex_of("selectedBg")
    if selected:
        variables["block-cursor-background"] = selected
        variables["block-cursor-blurred-background"] = selected
        variables["block-cursor-text-style"] = "bold"
        variables["block-cursor-foreground"] = hex_of("text") or ("ansi_default" if not painted else _FALLBACK_FG[dark])
        variables["block-hover-background"] = selected + " 50%"
    page = export_of("pageBg") or _FALLBACK_BG[dark]
    # Dialogs over the transcript: dimmed on a painted page; on the terminal's background (which
    # cannot be blended) the transcript shows as it is around the dialog.
    variables["pi-overlay"] = f"{page} 60%" if painted else "transparent"
    if not painted:
        variables["ansi-background"] = "ansi_default"  # what Textual's own ANSI themes define
        variables["ansi-foreground"] = "ansi_default"
        muted = hex_of("muted")
        if muted:
            variables["text-muted"] = muted
    if colorless or not selected:  # no colour to select with: reverse video
        for name in ("block-cursor", "block-cursor-blurred"):
            variables[f"{name}-text-style"] = "bold reverse"
            variables[f"{name}-background"] = "ansi_default"
            variables[f"{name}-foreground"] = "ansi_default"
        variables["block-hover-background"] = "transparent"
        variables["input-cursor-text-style"] = "reverse"
    if colorless:
        variables["text-muted"] = "ansi_default"
    return TextualTheme(
        name=textual_theme_name(theme),
        primary=hex_of("accent") or "#56c8d8",
        secondary=hex_of("mdLink"),
        accent=hex_of("borderAccent") or hex_of("accent"),
        warning=hex_of("warning"),
        error=hex_of("error"),
        success=hex_of("success"),
        foreground=hex_of("text"),
        background=export_of("pageBg") if painted else None,
        surface=export_of("cardBg") if painted else None,
        panel=export_of("infoBg") if painted else None,
        dark=dark,
        ansi=not painted,
        variables=variables,
    )


def markdown_styles(theme: Theme, *, colorless: bool = False) -> dict[str, str]:
    """Rich styles for answers' Markdown from a theme's ``md*`` tokens, as Pi draws them.

    Headings bold in ``mdHeading`` (h1 also underlined), links underlined in ``mdLink`` with their
    address in ``mdLinkUrl``, inline code in ``mdCode`` with no background. Under ``NO_COLOR``
    (``colorless``) the muted parts (addresses, fences, quote bars, rules) are dim instead.
    """

    def color(token: str) -> str:
        value = theme.rich(token) if token in theme.colors else "default"
        return "" if value == "default" else value

    def style(*parts: str) -> str:
        return " ".join(p for p in parts if p) or "none"

    dim = "dim" if colorless else ""
    heading = color("mdHeading")
    styles = {
        "markdown.h1": style("bold underline", heading),
        "markdown.h1.border": style(heading),
        "markdown.code": style("bold" if colorless else "", color("mdCode")),
        "markdown.code_block": style(color("mdCodeBlock")),
        "markdown.block_quote": style("italic", color("mdQuote")),
        "markdown.hr": style(dim, color("mdHr")),
        "markdown.link": style("underline", color("mdLink")),
        "markdown.link_url": style("underline", color("mdLink")),
        "markdown.item.bullet": style(color("mdListBullet")),
        "markdown.item.number": style(color("mdListBullet")),
        "markdown.table.border": style(dim, color("mdCodeBlockBorder")),
        "markdown.table.header": style("bold"),
        "markdown.pi_address": style("not underline", dim, color("mdLinkUrl")),
        "markdown.pi_fence": style(dim, color("mdCodeBlockBorder")),
        "markdown.pi_quote_border": style(dim, color("mdQuoteBorder")),
    }
    for level in range(2, 7):
        styles[f"markdown.h{level}"] = style("bold", heading)
    return styles


def session_theme_paths(session: AgentSession) -> list[str]:
    """The session's theme files or folders: this run's (``--theme``, ``--no-themes``), else the
    ``themes`` setting (read again after ``/reload``); then, unless ``--no-themes``, the paths
    extensions returned from ``resources_discover`` (docs/extensions-runtime.md#event-catalogue)."""
    paths = session.theme_paths
    found = [str(p) for p in (paths if paths is not None else session.settings.themes)]
    discovered = session.discovered_paths
    if session.discover_themes and discovered is not None:
        for path in [*discovered.package_themes, *discovered.themes]:
            if str(path) not in found:
                found.append(str(path))
    return found


def session_themes(session: AgentSession) -> ThemeController:
    """A controller with the session's theme loaded (the ``theme`` setting, ``dark`` when unset),
    not yet attached to an app. ``.pi/themes`` counts only in a trusted project; ``--no-themes``
    (``session.discover_themes`` False) leaves only the built-in themes and the run's paths."""
    trust = session.project_trust
    trusted = trust is None or trust.trusted
    themes = ThemeController(
        None,
        session.cwd if trusted else None,  # None: no .pi/themes
        extra_paths=session_theme_paths(session),
        discover=session.discover_themes,
        painted=session.settings.paint_background,
    )
    themes.use(session.settings.theme or "dark")
    return themes


class ThemeController:
    """The app's current Pi theme: loading by name, applying, previewing and hot reload.

    Args:
        app: The Textual app to style; None until :meth:`attach` (a theme chosen before is
            applied then).
        cwd: Project folder (for ``.pi/themes``).
        extra_paths: More theme files or folders (the ``themes`` setting).
        discover: False skips the config and ``.pi/themes`` folders (``--no-themes``).
        painted: Paint the theme's page background (the ``paint_background`` setting).
        on_warning: Called with a message when a theme cannot be loaded or reloaded; without it
            the messages wait in ``attach``'s result.
    """

    def __init__(
        self,
        app: App[Any] | None = None,
        cwd: str | None = None,
        *,
        extra_paths: Iterable[str] = (),
        discover: bool = True,
        painted: bool = False,
        on_warning: Callable[[str], Any] | None = None,
    ) -> None:
        self.app = app
        self.painted = painted
        self.colorless = no_color()
        """``NO_COLOR``: no colour anywhere (and no painted page)."""
        self.cwd = cwd
        self.extra_paths = list(extra_paths)
        self.discover = discover
        self.last_warning: str | None = None
        """The warning of the last ``use`` (None when it loaded)."""
        self.on_warning = on_warning
        self._early_warnings: list[str] = []
        self.theme: Theme | None = None
        """The theme in use (a preview shows another one without changing this)."""
        self.name: str = "dark"
        """The configured name (``auto`` stays ``auto``)."""
        self._shown: Theme | None = None
        self._failed_mtime: float | None = None
        self._timer: Timer | None = None
        self._markdown_theme_pushed = False

    # ------------------------------------------------------------------ loading

    def attach(self, app: App[Any], *, on_warning: Callable[[str], Any] | None = None) -> list[str]:
        """Style ``app`` from now on (applying the theme chosen so far); returns the warnings
        reported before, when there was no ``on_warning``."""
        self.app = app
        if on_warning is not None:
            self.on_warning = on_warning
        if self._shown is not None:
            self.apply(self._shown)
        warnings, self._early_warnings = self._early_warnings, []
        return warnings

    def available(self) -> list[ThemeInfo]:
        """Every theme that can be chosen, sorted by name."""
        return list_themes(self.cwd, extra_paths=self.extra_paths, discover=self.discover)

    def load(self, name: str) -> Theme:
        """Load a theme by name (or path).

        Raises:
            ThemeError: Unknown or invalid theme.
        """
        return load_theme(name, self.cwd, extra_paths=self.extra_paths, discover=self.discover)

    @property
    def follows_terminal(self) -> bool:
        """The theme depends on the terminal's background (``system``, a ``light/dark`` pair, ``auto``)."""
        return self.name in ("system", "auto") or ("/" in self.name and not self.name.endswith(".json"))

    def terminal_background(self, light: bool) -> None:
        """The terminal reported its background: load the pair's theme that suits it (or rebuild
        ``system`` for it)."""
        from pi_coder.resources.themes import set_terminal_appearance

        set_terminal_appearance("light" if light else "dark")
        if self.follows_terminal and self._shown is self.theme:  # not in the middle of a preview
            self.use(self.name)

    def use(self, name: str) -> str | None:
        """Load and apply ``name``; on failure apply ``dark`` and return the warning."""
        warning = None
        try:
            theme = self.load(name)
        except ThemeError as exc:
            warning = f"{exc}; using the dark theme"
            theme = load_theme("dark")
            self._warn(warning)
        self.last_warning = warning
        self.name = name
        self.theme = theme
        self._failed_mtime = None
        self.apply(theme)
        return warning

    # ------------------------------------------------------------------ applying

    def _warn(self, text: str) -> None:
        if self.on_warning is not None:
            self.on_warning(text)
        else:
            self._early_warnings.append(text)

    @property
    def native_colors(self) -> bool:
        """True when the terminal's own colours show (``App(ansi_color=...)``): always but on a painted page."""
        return self.colorless or not self.painted

    def set_painted(self, painted: bool) -> None:
        """Paint the page (or let the terminal's background show) from now on."""
        self.painted = painted
        if self.app is not None:
            self.app.ansi_color = True if self.native_colors else None
        if self._shown is not None:
            self.apply(self._shown)

    def apply(self, theme: Theme) -> None:
        """Register ``theme`` with the app and make it the active one (on ``attach`` without an app)."""
        self._shown = theme
        if self.app is None:
            return
        textual = textual_theme(theme, painted=self.painted, colorless=self.colorless)
        self.app.set_class(self.colorless, "-no-color")
        self._restyle_markdown(theme)
        self.app.register_theme(textual)
        if self.app.theme == textual.name:
            if self.app.is_running:
                self.app.refresh_css(animate=False)
        else:
            self.app.theme = textual.name

    def _restyle_markdown(self, theme: Theme) -> None:
        """Answers' Markdown styles (Rich's ``markdown.*`` names) from the theme's ``md*`` tokens,
        on the app's console; answers drawn before are drawn again."""
        if self.app is None:
            return
        from rich.theme import Theme as RichTheme

        console = self.app.console
        if self._markdown_theme_pushed:
            console.pop_theme()
        console.push_theme(RichTheme(markdown_styles(theme, colorless=self.colorless)))
        self._markdown_theme_pushed = True
        from pi_coder.tui.widgets.markdown_view import StreamingMarkdown

        if self.app.is_running:
            for widget in self.app.query(StreamingMarkdown):
                widget.restyle()

    def preview(self, name: str) -> bool:
        """Show ``name`` without making it current; False if it cannot be loaded."""
        try:
            theme = self.load(name)
        except ThemeError:
            return False
        self.apply(theme)
        return True

    def end_preview(self) -> None:
        """Show the current theme again after ``preview``."""
        if self.theme is not None and self._shown is not self.theme:
            self.apply(self.theme)

    @property
    def shown(self) -> Theme | None:
        """The theme on screen (the previewed one while previewing)."""
        return self._shown

    def rich(self, token: str) -> str:
        """A Rich colour for ``token`` in the theme on screen (``default`` when unknown)."""
        theme = self._shown or self.theme
        if theme is None or token not in theme.colors:
            return "default"
        return theme.rich(token)

    # ------------------------------------------------------------------ hot reload

    def watch(self, interval: float = 1.0) -> None:
        """Poll the current theme file every ``interval`` seconds and reload it when it changes."""
        if self._timer is None and self.app is not None:
            self._timer = self.app.set_interval(interval, self.check_reload, name="theme-reload")

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def check_reload(self) -> bool:
        """Reload the current theme if its file changed; True when a new version was applied.

        An invalid file (often a half-saved edit) is reported once per modification and the
        previous colours stay.
        """
        theme = self.theme
        if theme is None or theme.path is None or not theme.changed_on_disk():
            return False
        try:
            mtime = theme.path.stat().st_mtime
        except OSError:
            return False
        if mtime == self._failed_mtime:
            return False
        try:
            fresh = load_theme_file(theme.path, theme.source)
        except ThemeError as exc:
            self._failed_mtime = mtime
            self._warn(f"Theme not reloaded: {exc}")
            return False
        self._failed_mtime = None
        previewing = self._shown is not theme
        self.theme = fresh
        if not previewing:
            self.apply(fresh)
        return True
