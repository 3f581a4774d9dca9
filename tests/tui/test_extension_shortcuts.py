"""Extension shortcuts in the TUI: bound as keys, run their handler, listed in /hotkeys (pilot)."""

from __future__ import annotations

from pathlib import Path

from pi_coder.tui.app import PiApp
from tests.tui.helpers import type_text, wait_until
from tests.tui.screens_support import make_app_with_extensions

EXT = """
def extension(pi):
    def hit(ctx):
        ctx.ui.set_editor_text("shortcut ran")

    pi.register_shortcut("ctrl+alt+h", hit, description="Fill the editor")
    pi.register_shortcut("ctrl+c", hit, description="Taken by pi")
"""


async def test_shortcut_runs_handler_and_is_listed(make_session, project: Path) -> None:
    session, _ = make_session([])
    app = make_app_with_extensions(session, project, ["ext.py"], {"ext.py": EXT})
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: bool(getattr(app, "extension_shortcut_list", None)), what="bound")
        assert [key for key, _ in app.extension_shortcut_list] == [
            "alt+ctrl+h"
        ]  # sorted like Textual; ctrl+c stays pi's
        await pilot.press("alt+ctrl+h")
        await wait_until(pilot, lambda: app.editor.text == "shortcut ran", what="handler ran")
        app.editor.text = ""
        await type_text(pilot, "/hotkeys")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "Fill the editor" in _transcript(app), what="/hotkeys row")


async def test_plan_mode_shortcut(make_session, project: Path) -> None:
    session, _ = make_session([])
    app = make_app_with_extensions(session, project, ["builtin:plan-mode"], {"ext.py": EXT})
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: bool(getattr(app, "extension_shortcut_list", None)), what="bound")
        assert [key for key, _ in app.extension_shortcut_list] == ["alt+ctrl+p"]
        ui = session.extensions.ui
        await pilot.press("alt+ctrl+p")
        await wait_until(pilot, lambda: ui.statuses.get("plan") == "plan mode", what="plan mode on")


async def test_permissions_alt_m_cycles_mode(make_session, project: Path, monkeypatch) -> None:
    from pi_coder.permissions import gate
    from pi_coder.permissions.policy import Policy
    from pi_coder.permissions.rules import RuleSet

    policy = Policy("auto", RuleSet(), str(project))
    monkeypatch.setattr(gate, "_policy", policy)
    session, _ = make_session([])
    app = make_app_with_extensions(session, project, ["builtin:permissions"], {"ext.py": EXT})
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: bool(getattr(app, "extension_shortcut_list", None)), what="bound")
        assert [key for key, _ in app.extension_shortcut_list] == ["alt+m"]
        await pilot.press("alt+m")
        await wait_until(pilot, lambda: policy.mode != "auto", what="mode cycled")


def _transcript(app: PiApp) -> str:
    return "\\n".join(
        str(getattr(w, "source", "")) + str(getattr(w, "_markdown", "")) for w in app.query("*")
    )
