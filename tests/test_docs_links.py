"""Every ``docs/<file>.md#<anchor>`` named in the code points at an existing file and heading.

Code comments explain themselves by linking to the design pages under ``docs/``; this keeps those
links from rotting when a page or a heading is renamed. Anchors follow GitHub's rule: the heading
text lower-cased, punctuation other than ``-`` and ``_`` dropped, spaces turned into ``-``.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"docs/([A-Za-z0-9_-]+\.md)#([A-Za-z0-9_-]+)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")


def slug(heading: str) -> str:
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found: set[str] = set()
    in_fence = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_fence = not in_fence
        elif not in_fence and (m := HEADING.match(line)):
            found.add(slug(m.group(1)))
    return found


def code_links() -> list[tuple[str, str, str]]:
    links = []
    for path in sorted((ROOT / "pi_coder").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for m in LINK.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            links.append((f"{path.relative_to(ROOT)}:{line}", m.group(1), m.group(2)))
    return links


def test_slug_follows_githubs_rule() -> None:
    assert slug("Replacement, reload and quit") == "replacement-reload-and-quit"
    assert slug("`ctx` and ctx.ui") == "ctx-and-ctxui"
    assert slug("Start-up cost") == "start-up-cost"


def test_every_docs_link_in_the_code_names_an_existing_page_and_heading() -> None:
    links = code_links()
    assert len(links) > 50  # the code links to the design pages; an empty scan would prove nothing
    broken = []
    cache: dict[str, set[str]] = {}
    for where, page, anchor in links:
        target = ROOT / "docs" / page
        if not target.is_file():
            broken.append(f"{where}: docs/{page} does not exist")
            continue
        if anchor not in cache.setdefault(page, anchors(target)):
            broken.append(f"{where}: docs/{page} has no heading #{anchor}")
    assert not broken, "\n".join(broken)


def test_the_code_has_no_section_numbers_of_an_outside_specification() -> None:
    hits = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in sorted((ROOT / "pi_coder").rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "\u00a7" in line
    ]
    assert not hits, "section signs left (link a heading under docs/ instead): " + ", ".join(hits)


def test_the_design_pages_link_each_other_by_existing_headings() -> None:
    broken = []
    for page in sorted((ROOT / "docs").glob("*.md")):
        for m in re.finditer(r"\]\(([A-Za-z0-9_-]+\.md)(?:#([A-Za-z0-9_-]+))?\)", page.read_text(encoding="utf-8")):
            target = ROOT / "docs" / m.group(1)
            if not target.is_file():
                broken.append(f"{page.name}: {m.group(0)}: no such page")
            elif m.group(2) and m.group(2) not in anchors(target):
                broken.append(f"{page.name}: {m.group(0)}: no such heading")
    assert not broken, "\n".join(broken)
