"""``/thinking [level]`` and ``/scoped-models``.

``/thinking`` without an argument lists the levels the current model supports (the saved
default marked); Enter sets the level for this session, Ctrl+S also saves it as
``default_thinking_level``, as Pi's picker does. ``/thinking <level>`` sets this session's level
only; a level the model cannot do is clamped to the nearest one it can. ``/scoped-models`` opens :class:`ScopedModelsScreen`: changes
apply to this session's Ctrl+P cycle at once, Ctrl+S also saves them to ``enabled_models``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.binding import Binding, BindingType

from pi_coder.core.thinking import LEVEL_DESCRIPTIONS, THINKING_LEVELS
from pi_coder.tui.screens.dialogs import ChoiceDialog

if TYPE_CHECKING:
    from pi_coder.ai.types import Model
    from pi_coder.tui.context import CommandContext

__all__ = ["LEVEL_DESCRIPTIONS", "ThinkingLevelDialog", "scoped_models_command", "thinking_command"]



class ThinkingLevelDialog(ChoiceDialog):
    """The ``/thinking`` picker: Enter picks for this session, Ctrl+S picks and saves it as the
    default (``save_default`` tells the caller which)."""

    CSS_PATH = "screens/dialogs.tcss"  # relative to this module's folder
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save_default", show=False, priority=True),
    ]

    save_default = False

    def action_save_default(self) -> None:
        from textual.widgets import OptionList

        options = self.query_one("#dialog-choices", OptionList)
        if options.highlighted is None:
            return
        self.save_default = True
        self.dismiss(options.get_option_at_index(options.highlighted).id)


def _applied(app: CommandContext) -> str:
    level = str(app.session.thinking_level)
    app.editor.set_thinking_level(level)
    app.refresh_footer()
    return level


async def thinking_command(app: CommandContext, args: str) -> None:
    session = app.session
    model = session.model
    levels = list(session.available_thinking_levels())
    wanted = args.strip().lower()
    if not wanted:
        if model is None or levels == ["off"]:
            await app.notice("The current model does not support thinking", "warning")
            return
        current = session.thinking_level
        default = session.settings.default_thinking_level
        choices = [
            (level, f"{level:<8} {LEVEL_DESCRIPTIONS.get(level, '')}" + (" · default" if level == default else ""))
            for level in levels
        ]
        dialog = ThinkingLevelDialog(
            "Thinking level", choices, message=f"Levels of {model.id}", initial=current,
            hint="↑↓ move · Enter select · Ctrl+S set as default · Esc cancel",
        )  # fmt: skip
        chosen = await app.push_screen_wait(dialog)
        if chosen is None:
            return
        if dialog.save_default:
            session.set_thinking_level(str(chosen), save_default=True)
            await app.notice(f"Default thinking level: {_applied(app)}")
            return
        wanted = str(chosen)
    if wanted not in THINKING_LEVELS:
        await app.notice(f'Unknown thinking level "{wanted}". Levels: {", ".join(THINKING_LEVELS)}', "error")
        return
    session.set_thinking_level(wanted, save_default=False)  # this session only, as Pi
    level = _applied(app)
    if level != wanted:
        name = model.id if model is not None else "the current model"
        await app.notice(f"Thinking level: {level} ({name} does not support {wanted})")
    else:
        await app.notice(f"Thinking level: {level}")


async def scoped_models_command(app: CommandContext, args: str) -> None:
    from pi_coder.tui.screens.model_picker import reload_models
    from pi_coder.tui.screens.scoped_models import ScopedModelsScreen

    session = app.session
    error = reload_models(app)
    if error:
        await app.notice(error, "error")
    models = list(session.available_models())
    if not models:
        await app.notice("No models with an API key (see /login)", "warning")
        return
    scope: list[tuple[Model, str | None]] = list(session.scoped_models)

    def apply(chosen: list[tuple[Model, str | None]]) -> None:
        session.scoped_models = chosen

    def save(patterns: list[str]) -> None:
        session.save_settings({"enabled_models": patterns})

    await app.push_screen_wait(ScopedModelsScreen(models, scope, on_change=apply, on_save=save))
    count = len(session.scoped_models)
    if count:
        await app.notice(f"Ctrl+P cycles {count} model{'s' if count != 1 else ''}")
    else:
        await app.notice("Ctrl+P cycles all models with a key")
