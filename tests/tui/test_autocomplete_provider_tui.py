"""``ctx.ui.add_autocomplete_provider`` in the TUI (pilot): a ``#`` token gets the extension's menu."""

from __future__ import annotations

import textwrap
from pathlib import Path

from pi_coder.tui.widgets.completion_menu import CompletionMenu
from tests.tui.helpers import type_text, wait_until
from tests.tui.screens_support import make_app_with_extensions

EXT = """
from pi_coder.extensions import Completion

ISSUES = {"#2983": "Extension API for autocomplete", "#2990": "Fix the footer", "#3001": "Docs"}

def extension(pi):
    @pi.on("session_start")
    def start(event, ctx):
        def issues(token):
            return [Completion(value=k, description=v) for k, v in ISSUES.items() if k.startswith(token)]

        ctx.ui.add_autocomplete_provider(issues, trigger_characters=["#"])
"""


async def test_a_trigger_character_opens_the_providers_menu(make_session, project: Path) -> None:
    session, _ = make_session([])
    (project / "ext.py").write_text(textwrap.dedent(EXT))
    app = make_app_with_extensions(session, project, ["ext.py"])
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: "#" in app.editor.trigger_characters, what="provider registered")
        await type_text(pilot, "see #29")
        menu = app.query_one(CompletionMenu)
        await wait_until(pilot, lambda: menu.is_open, what="the menu")
        assert [item.label for item in menu.items] == ["#2983", "#2990"]
        await pilot.press("tab")
        await wait_until(pilot, lambda: app.editor.text.startswith("see #2983"), what="the completion applied")
        app.editor.text = ""
        await type_text(pilot, "plain words")
        await pilot.pause()
        assert not menu.is_open


MIXED = """
from pi_coder.extensions import Completion

def extension(pi):
    @pi.on("session_start")
    def start(event, ctx):
        def offer(token):
            return ["$one", {"value": "$two", "label": "two", "description": "a dict"}, Completion(value="$three")]

        ctx.ui.add_autocomplete_provider(offer, trigger_characters=["$"])
"""


async def test_a_provider_may_offer_strings_dicts_and_completions(make_session, project: Path) -> None:
    session, _ = make_session([])
    app = make_app_with_extensions(session, project, ["mixed.py"], {"mixed.py": MIXED})
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: "$" in app.editor.trigger_characters, what="provider registered")
        await type_text(pilot, "x $")
        menu = app.query_one(CompletionMenu)
        await wait_until(pilot, lambda: menu.is_open, what="the menu")
        assert [(i.label, i.replacement, i.description) for i in menu.items] == [
            ("$one", "$one", ""),
            ("two", "$two", "a dict"),
            ("$three", "$three", ""),
        ]
