"""The rest of ``/settings``: every other setting a user changes while pi runs (Pi's list, pi-product 2.3).

:func:`more_setting_items` adds the settings below to the first lines of ``navigation.setting_items``
(auto-compact, queue modes, thinking, theme, hide thinking, double Esc, tree filter). Each change is
written to the global settings.toml through the session's comment-keeping writer and applied at
once; ``quiet_startup`` is read at start, so it shows from the next start.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_coder.settings import Settings
    from pi_coder.tui.context import CommandContext
    from pi_coder.tui.screens.settings_screen import SettingItem

__all__ = ["more_setting_items"]

ON_OFF = ["on", "off"]
_INDENTS = {"0": "", "2": "  ", "4": "    "}
_IDLE_TIMEOUTS = {"1 min": 60_000, "2 min": 120_000, "5 min": 300_000, "10 min": 600_000, "30 min": 1_800_000, "off": 0}


def _on_off(value: bool) -> str:
    return "on" if value else "off"


def more_setting_items(
    app: CommandContext, settings: Callable[[], Settings], save: Callable[[dict[str, Any]], None]
) -> list[SettingItem]:
    """The lines of ``/settings`` after the first ones; ``settings()`` reads them, ``save`` writes."""
    from pi_coder.tui.screens.settings_screen import SettingItem

    items: list[SettingItem] = []

    def toggle(key: str, label: str, description: str, current: Callable[[Settings], bool],
               then: Callable[[bool], object] | None = None) -> SettingItem:  # fmt: skip
        def apply(choice: str) -> None:
            on = choice == "on"
            save({key: on})
            if then is not None:
                then(on)

        return SettingItem(key, label, description, ON_OFF, lambda: _on_off(current(settings())), apply)

    def number(key: str, label: str, description: str, values: list[int], current: Callable[[Settings], int],
               then: Callable[[int], object]) -> SettingItem:  # fmt: skip
        def apply(choice: str) -> None:
            save({key: int(choice)})
            then(int(choice))

        return SettingItem(
            key, label, description, [str(v) for v in values], lambda: str(current(settings())), apply
        )

    def indent_now() -> str:
        current = settings().markdown.code_block_indent
        return next((name for name, text in _INDENTS.items() if text == current), str(len(current)))

    def set_indent(choice: str) -> None:
        from pi_coder.tui.widgets.markdown_view import set_code_block_indent

        save({"markdown.code_block_indent": _INDENTS[choice]})
        set_code_block_indent(_INDENTS[choice])

    def set_scrollbar(choice: str) -> None:
        save({"fullscreen_scrollbar": choice})
        app.terminal_display.set_scrollbar(choice)

    session = app.session
    items += [
        toggle("images.auto_resize", "Auto-resize images",
               "Shrink images to at most 2000x2000 (and 4.5 MB) before sending them to the model.",
               lambda s: s.images.auto_resize),
        toggle("images.block_images", "Block images",
               "Never send images to the model; each is replaced by a short note.", lambda s: s.images.block_images),
        SettingItem(
            "retry.enabled", "Auto-retry", "Retry automatically after overload, rate-limit and connection errors.",
            ON_OFF, lambda: _on_off(session.auto_retry_enabled),
            lambda choice: session.set_auto_retry(choice == "on"),  # saves retry.enabled itself
        ),
        toggle("enable_skill_commands", "Skill commands", "Offer /skill:name commands for discovered skills in / completion (typed ones still run).",
               lambda s: s.enable_skill_commands),
        toggle("branch_summary.skip_prompt", "Skip branch summary prompt",
               "Leave a branch in /tree without asking whether to summarise it.", lambda s: s.branch_summary.skip_prompt),
        toggle("quiet_startup", "Quiet startup", "Hide the start-up header (from the next start).",
               lambda s: s.quiet_startup),
        number("editor_padding_x", "Editor padding", "Columns of padding inside the editor, left and right.",
               [0, 1, 2, 3], lambda s: s.editor_padding_x, lambda columns: _set_editor_padding(app, columns)),
        toggle("show_hardware_cursor", "Show hardware cursor",
               "Show the terminal's own cursor at the editor's caret instead of the drawn one.",
               lambda s: s.show_hardware_cursor, app.terminal_display.set_hardware_cursor),
        number("output_pad", "Output padding",
               "Columns of padding inside messages, tool output, ! output and summaries.",
               [0, 1], lambda s: s.output_pad, app.terminal_display.set_output_pad),
        toggle("terminal.show_terminal_progress", "Terminal progress",
               "Show the terminal's progress indicator (OSC 9;4, in its tab or title bar) while the agent works.",
               lambda s: s.terminal.show_terminal_progress, app.terminal_display.set_progress),
        number("autocomplete_max_visible", "Autocomplete max items", "Rows the completion list shows before it scrolls.",
               list(range(3, 21)), lambda s: s.autocomplete_max_visible, lambda rows: _set_menu_rows(app, rows)),
        SettingItem("markdown.code_block_indent", "Code block indent",
                    "Spaces before the lines of code blocks in answers (new output).",
                    list(_INDENTS), indent_now, set_indent),
        SettingItem("http_idle_timeout_ms", "HTTP idle timeout",
                    "End a model request after this long without a byte from the API (next request on).",
                    list(_IDLE_TIMEOUTS), lambda: _idle_label(settings().http_idle_timeout_ms),
                    lambda choice: save({"http_idle_timeout_ms": _IDLE_TIMEOUTS[choice]})),
        SettingItem("default_project_trust", "Default project trust",
                    "A project folder with no saved trust decision: ask, always trust or never trust "
                    "(from the next start).",
                    ["ask", "always", "never"], lambda: settings().default_project_trust,
                    lambda choice: save({"default_project_trust": choice})),
        toggle("markdown.table_row_separators", "Table row lines", "A line between the rows of tables (new output).",
               lambda s: s.markdown.table_row_separators, _set_table_rows),
        toggle("paint_background", "Paint background",
               "Paint the theme's page background instead of showing the terminal's (not with NO_COLOR).",
               lambda s: s.paint_background, app.themes.set_painted),
        SettingItem("fullscreen_scrollbar", "Transcript scrollbar",
                    "The transcript's scrollbar: when it overflows, always, or hidden (it still scrolls).",
                    ["auto", "always", "hidden"], lambda: settings().fullscreen_scrollbar, set_scrollbar),
        toggle("fullscreen_copy_on_select", "Copy on select",
               "Copy a mouse selection when the button is released; off: Ctrl+X copies it.",
               lambda s: s.fullscreen_copy_on_select),
        SettingItem("model_thinking_levels", "Default thinking level per model",
                    "The thinking level a model starts with (at start and when switching to it); "
                    "Shift+Tab still cycles in-session.",
                    [], lambda: _per_model_label(settings().model_thinking_levels), lambda _choice: None,
                    choose=lambda done: _choose_model_level(app, settings, save, done)),
        SettingItem("fullscreen_exit_output", "Exit output",
                    "What quitting prints: the conversation then the resume hint, or only the hint.",
                    ["transcript", "resume-hint"], lambda: settings().fullscreen_exit_output,
                    lambda choice: save({"fullscreen_exit_output": choice})),
    ]  # fmt: skip
    return items


def _per_model_label(levels: Mapping[str, str]) -> str:
    return "none" if not levels else f"{len(levels)} model{'s' if len(levels) != 1 else ''}"


def _choose_model_level(
    app: CommandContext, settings: Callable[[], Settings], save: Callable[[dict[str, Any]], None],
    done: Callable[[], object],
) -> None:  # fmt: skip
    """Pi's two steps: a model, then its level (or none: the usual default again)."""
    from pi_coder.core.thinking import LEVEL_DESCRIPTIONS, available_thinking_levels
    from pi_coder.tui.screens.dialogs import ChoiceDialog

    async def flow() -> None:
        levels: dict[str, str] = dict(settings().model_thinking_levels)
        models = [m for m in app.session.available_models() if m.reasoning]
        if not models:
            await app.notice("No model with thinking has an API key", "warning")
            return
        choices = [(f"{m.provider}/{m.id}", f"{m.id} [{m.provider}]  {levels.get(f'{m.provider}/{m.id}', '')}".rstrip())
                   for m in models]  # fmt: skip
        key = await app.push_screen_wait(
            ChoiceDialog("Default thinking level per model", choices, message="Step 1/2 · the model")
        )
        if key is None:
            return
        model = next(m for m in models if f"{m.provider}/{m.id}" == key)
        options = [("none", "none     the default thinking level")]
        options += [(lv, f"{lv:<8} {LEVEL_DESCRIPTIONS.get(lv, '')}") for lv in available_thinking_levels(model)]
        level = await app.push_screen_wait(
            ChoiceDialog(f"Thinking level for {model.id}", options, message="Step 2/2 · its level",
                         initial=levels.get(key, "none"))
        )  # fmt: skip
        if level is None:
            return
        if level == "none":
            levels.pop(key, None)
        else:
            levels[key] = str(level)
        save({"model_thinking_levels": levels})
        done()

    app.run_worker(flow(), group="dialog", exit_on_error=False)  # as navigation.run_dialog


def _idle_label(ms: int) -> str:
    return next((label for label, value in _IDLE_TIMEOUTS.items() if value == ms), f"{ms} ms")


def _set_table_rows(on: bool) -> None:
    from pi_coder.tui.widgets.markdown_view import set_table_row_separators

    set_table_row_separators(on)


def _set_editor_padding(app: Any, columns: int) -> None:
    app.editor.styles.padding = (0, 1 + columns)


def _set_menu_rows(app: Any, rows: int) -> None:
    from pi_coder.tui.widgets.completion_menu import CompletionMenu

    menu = app.query_one(CompletionMenu)
    menu.max_visible = rows
    menu.styles.max_height = rows + 1
