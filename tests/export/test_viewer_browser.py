"""The exported page in headless Chromium: load time for 5,000 entries, branches, search, escaping.

Needs Chromium (Debian's ``chromium`` package, installed by ``.ci/run``); skipped, saying so,
where it is missing. The page reports its own timings (``piViewer.ready``): from the navigation
start, when DOMContentLoaded fired and when the first frame after the script's set-up was drawn.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_coder.export.html import export_session_html
from tests.export.cdp import Browser, find_chromium
from tests.export.sessions import large_session, small_session

CHROMIUM = find_chromium()
pytestmark = [
    pytest.mark.skipif(
        CHROMIUM is None, reason="headless Chromium not installed (Debian: apt-get install chromium)"
    ),
    pytest.mark.timeout(600),  # building and exporting 5,000 entries on a busy machine
]
LOAD_BUDGET_MS = 1000.0


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert CHROMIUM is not None
    chromium = Browser(CHROMIUM, timeout=120)
    try:
        yield chromium
    finally:
        chromium.close()


@pytest.fixture(scope="module")
def large_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("large")
    store = large_session(folder, 5000)
    assert store.session_file is not None
    started = time.perf_counter()
    page = export_session_html(store.session_file, folder / "large.html")
    seconds = time.perf_counter() - started
    print(f"\n5,000 entries: exported in {seconds:.2f} s, {page.stat().st_size / 1e6:.2f} MB")
    return page


def _visible(browser: Browser, text: str) -> bool:
    """Whether a message containing ``text`` is shown: its article is neither hidden (another
    branch) nor filtered out by a search. (Not asked of the layout: forcing it for thousands of
    ``content-visibility: auto`` articles takes minutes.) Messages not built yet keep their text
    in an inert script element, so ``textContent`` still finds it."""
    script = """((needle) => [...document.querySelectorAll('#log article > .b')].some(
        b => !b.parentNode.hidden && !b.parentNode.classList.contains('nomatch') && b.textContent.includes(needle)))(%s)"""
    return bool(browser.js(script % json.dumps(text)))


def _display(browser: Browser, selector: str) -> str:
    return str(browser.js(f"getComputedStyle(document.querySelector({json.dumps(selector)})).display"))


def _wait(browser: Browser, expression: str, timeout: float = 30.0) -> object:
    deadline = time.monotonic() + timeout
    while True:
        value = browser.js(expression)
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.05)


def test_5000_entries_open_within_a_second(browser: Browser, large_page: Path) -> None:
    """DOMContentLoaded to the first drawn frame: under 1 s on every load. From the navigation
    start (reading and parsing the 8 MB file included): under 1 s on one of up to five loads, as
    the machine is shared and a busy neighbour can stall any single load."""
    runs = []
    for _ in range(5):
        browser.open(large_page)
        runs.append(browser.js("piViewer.ready"))
        if runs[-1]["renderedMs"] < LOAD_BUDGET_MS:
            break
    print("load timings (ms):", [{k: round(v) for k, v in run.items()} for run in runs])
    assert all(run["dclToRenderedMs"] < LOAD_BUDGET_MS for run in runs), runs
    assert min(run["renderedMs"] for run in runs) < LOAD_BUDGET_MS, runs
    # The first screen shows the start of the current branch; every entry has a row in the tree.
    assert _visible(browser, "Turn 1: please look at")
    assert browser.js("document.querySelectorAll('#tree .r').length") > 3000


def test_branch_points_switch_the_shown_path(browser: Browser, large_page: Path) -> None:
    browser.open(large_page)
    browser.js("piViewer.ready")
    leaf = browser.js("piViewer.leaf()")
    assert not _visible(browser, "Alternative 100:")
    assert _visible(browser, "Turn 100:") and _visible(browser, "Turn 101:")
    assert (
        _display(browser, "#log article[hidden]") == "none" and _display(browser, "#log article") == "block"
    )
    # The fork under turn 99's answer: the second button is the alternative branch.
    browser.js("document.querySelector('.fork button:not(.on)').click()")
    assert _visible(browser, "Alternative 100:")
    assert not _visible(browser, "Turn 100:") and not _visible(browser, "Turn 101:")
    assert _visible(browser, "Turn 99:")  # the common part of both paths stays
    assert browser.js("piViewer.leaf()") != leaf
    assert browser.js("document.querySelector('#tree .r.leaf').textContent").startswith("mod100.py defines")
    # A row of the tree switches back: the main line's turn 1000, shown with its answer.
    browser.js(
        "[...document.querySelectorAll('#tree .r')].find(r => r.textContent.startsWith('Turn 1000:')).click()"
    )
    assert _visible(browser, "Turn 1000:") and _visible(browser, "Turn 100:")
    assert not _visible(browser, "Alternative 100:")
    assert browser.js("piViewer.leaf()") == leaf  # the current leaf lies under that row


def _search(browser: Browser, query: str, expected_hits: str) -> None:
    """Type ``query`` into the search box and wait for the count it should give."""
    browser.js(
        "(q => { const box = document.getElementById('q'); box.value = q; box.dispatchEvent(new Event('input')); })"
        f"({json.dumps(query)})"
    )
    check = f"document.getElementById('hits').textContent === {json.dumps(expected_hits)}"
    assert _wait(browser, check), browser.js("document.getElementById('hits').textContent")


def test_search_filters_and_highlights(browser: Browser, large_page: Path) -> None:
    browser.open(large_page)
    browser.js("piViewer.ready")
    _search(browser, "Alternative 200:", "0 in this branch, 1 in the session")
    assert browser.js("document.querySelectorAll('#tree .r:not(.miss)').length") == 1
    # Text inside a collapsed tool result far down the page (not yet built) is found and shown.
    _search(browser, "F9_1001(", "1 in this branch, 1 in the session")
    marks = browser.js("[...document.querySelectorAll('mark')].map(m => m.textContent)")
    assert "".join(marks) == "f9_1001(" and len(marks) == 2  # the function name and the "(" token
    assert browser.js("document.querySelector('mark').closest('details.tool').open") is True
    assert _visible(browser, "f9_1001(") and not _visible(browser, "Turn 1: please")  # filtered out
    assert _display(browser, "#log article.nomatch") == "none"
    # Enter scrolls to the match.
    browser.js("document.getElementById('q').dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter'}))")
    assert browser.js("document.querySelector('mark.cur') !== null")
    _search(browser, "", "")
    assert _visible(browser, "Turn 1: please") and browser.js("document.querySelectorAll('mark').length") == 0
    assert browser.js("document.querySelectorAll('#tree .r.miss').length") == 0


def test_hostile_text_is_shown_not_run(browser: Browser, tmp_path: Path) -> None:
    store = small_session(tmp_path)
    assert store.session_file is not None
    page = export_session_html(store.session_file, tmp_path / "small.html")
    browser.open(page)
    browser.js("piViewer.ready")
    assert browser.js("typeof window.__pwned") == "undefined"
    assert browser.js("document.querySelectorAll('script:not([type])').length") == 1  # the viewer's own
    assert (
        browser.js(
            'document.querySelectorAll(\'[onerror], #log script:not([type="text/x-pi-lazy"]), #log img:not([src^="data:"])\').length'
        )
        == 0
    )
    assert _visible(
        browser, 'Fix <script>window.__pwned=1</script> and <img src=x onerror="window.__pwned=2"> please'
    )
    assert browser.js("document.querySelectorAll('a[href^=\"javascript\"]').length") == 0
    # Both answers to the first message are reachable: the fork lists them, the second is the other answer.
    assert not _visible(browser, "needle-in-branch")
    browser.js("document.querySelector('.fork button:not(.on)').click()")
    assert _visible(browser, "needle-in-branch")
    # Collapsible tool calls: closed, opened by the toolbar button.
    assert browser.js("[...document.querySelectorAll('details.tool')].some(d => d.open)") is False
    browser.js("document.querySelector('.fork button:not(.on)').click()")
    browser.js("document.getElementById('t-tools').click()")
    assert browser.js("[...document.querySelectorAll('details.tool')].every(d => d.open)") is True
