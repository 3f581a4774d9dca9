"""The project trust dialog (docs/permissions.md#trust-dialog) and ``/trust``.

At start-up the question comes before the session exists (a trusted folder may move the session
folder), so :func:`ask_project_trust` runs a small app of its own that shows the dialog and ends;
``PiApp`` starts after it with the answer applied. ``/trust`` shows the decision of this run and
saves a new one, which takes effect at the next start.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import App, ComposeResult
from textual.widgets import Static

from pi_coder.permissions.trust import TRUST_CHOICES, TrustChoice, TrustStore, canonical_path
from pi_coder.tui.screens.dialogs import ChoiceDialog

if TYPE_CHECKING:
    from pi_coder.tui.context import CommandContext

__all__ = ["TrustApp", "ask_project_trust", "show_trust", "trust_dialog", "trust_message"]

_TITLE = "Trust this project folder?"
_SAVED_CHOICES: tuple[TrustChoice, ...] = ("trust", "trust_parent", "distrust")


def trust_message(folder: Path, resources: Sequence[str]) -> str:
    """The dialog's text: the folder and what it would load and run once trusted."""
    lines = [str(folder), "", "Trusting it loads and runs:"]
    lines += [f"  • {line}" for line in resources] or ["  (nothing found)"]
    lines += ["", "AGENTS.md and CLAUDE.md are read either way. Esc: don't trust, ask again next time."]
    return "\n".join(lines)


def trust_dialog(
    folder: Path, resources: Sequence[str], choices: Sequence[TrustChoice] | None = None
) -> ChoiceDialog:
    """A dialog returning a ``TrustChoice`` (None for Esc)."""
    labels = dict(TRUST_CHOICES)
    picked = [value for value, _ in TRUST_CHOICES] if choices is None else list(choices)
    return ChoiceDialog(
        _TITLE,
        [(value, labels[value]) for value in picked],
        message=trust_message(folder, resources),
        hint="↑↓ move · Enter select · Esc don't trust (nothing saved)",
    )


class TrustApp(App[str | None]):
    """Shows the trust dialog alone and exits with the answer (``return_value``)."""

    ENABLE_COMMAND_PALETTE = False
    TITLE = "pi"

    def __init__(self, folder: Path, resources: Sequence[str], *, theme_name: str = "dark") -> None:
        from pi_coder.tui.driver import driver_class

        super().__init__(driver_class=driver_class())
        self.folder = folder
        self.resources = list(resources)
        self.animations = True
        from pi_coder.tui.theming import ThemeController

        self.themes = ThemeController(self, None)
        self.themes.use(theme_name)

    def compose(self) -> ComposeResult:
        yield Static("")

    def on_mount(self) -> None:
        self.push_screen(trust_dialog(self.folder, self.resources), self._answered)

    def _answered(self, choice: str | None) -> None:
        self.exit(choice)


def ask_project_trust(folder: Path, resources: Sequence[str]) -> TrustChoice | None:
    """Ask in the terminal whether to trust ``folder``; None when the user pressed Esc."""
    from pi_coder.settings import load_settings

    theme = load_settings(folder, project_trusted=False).settings.theme
    app = TrustApp(folder, resources, theme_name=theme or "dark")
    answer = app.run()
    return _as_choice(answer)


def _as_choice(value: object) -> TrustChoice | None:
    for choice, _ in TRUST_CHOICES:
        if value == choice:
            return choice
    return None


async def show_trust(app: CommandContext) -> None:
    """``/trust``: the decision of this run, the saved entry, and a dialog to save a new one."""
    from pi_coder.permissions.trust import apply_trust_choice, project_resources

    session = app.session
    folder = canonical_path(session.cwd)
    decision = session.project_trust
    now = decision.describe() if decision is not None else "trusted (not checked)"
    warnings: list[str] = []
    saved = TrustStore().lookup(folder, warnings)
    saved_text = "none" if saved is None else f"{saved[0]}: {'trusted' if saved[1] else 'not trusted'}"
    resources = project_resources(folder)
    lines = [
        "**Project trust**",
        "",
        f"- Folder: {folder}",
        f"- This run: {now}",
        f"- Saved decision: {saved_text}",
        "- Would load and run: " + ("; ".join(resources) if resources else "nothing"),
    ]
    await app.show_markdown("\n".join(lines))
    for warning in warnings:
        await app.notice(warning, "warning")
    choice = await app.push_screen_wait(trust_dialog(folder, resources, _SAVED_CHOICES))
    picked = _as_choice(choice)
    if picked is None:
        return
    problems: list[str] = []
    result = apply_trust_choice(folder, picked, problems)
    for problem in problems:
        await app.notice(problem, "error")
    if problems:
        return
    where = result.saved_path or folder
    state = "trusted" if result.trusted else "not trusted"
    await app.notice(f"Saved: {where} is {state}. This takes effect the next time pi starts here.")
