"""The whole page: header, tree sidebar, articles, embedded data, inline CSS and script.

Nothing is fetched: styles and the script are inline, images are data URIs, and a Content
Security Policy allows only the page's own script (by hash), so text from the session can never
run as code even if it slipped past escaping.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping
from functools import lru_cache
from html import escape
from importlib import resources
from typing import Any

from pi_coder.core import transcript as tx
from pi_coder.export.entries import EntryView, lazy, render_entry, shorten
from pi_coder.export.redact import Redactor
from pi_coder.export.style import theme_css
from pi_coder.export.tree import PageTree, build_tree
from pi_coder.resources.themes import Theme
from pi_coder.session.store import SessionStore

__all__ = ["render_page"]

_MAX_INDENT = 14
_EAGER = 40
"""Articles of the shown path built on load; the others are parsed when scrolled near."""


@lru_cache(maxsize=2)
def _asset(name: str) -> str:
    return resources.files("pi_coder.export").joinpath("assets", name).read_text(encoding="utf-8")


def _json_for_script(value: Any) -> str:
    """JSON that cannot end its ``<script>`` element early."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _totals(entries: list[dict[str, Any]]) -> tuple[int, int, float, list[str]]:
    tokens_in = tokens_out = 0
    cost = 0.0
    models: dict[str, None] = {}
    for entry in entries:
        message = entry.get("message")
        if not isinstance(message, Mapping) or message.get("role") != "assistant":
            continue
        if message.get("model"):
            models[f"{message.get('provider')}/{message.get('model')}"] = None
        usage = message.get("usage")
        if isinstance(usage, Mapping):
            for key in ("input", "cacheRead"):
                value = usage.get(key)
                tokens_in += value if isinstance(value, int) else 0
            value = usage.get("output")
            tokens_out += value if isinstance(value, int) else 0
            total = usage.get("cost", {}).get("total") if isinstance(usage.get("cost"), Mapping) else None
            cost += total if isinstance(total, int | float) else 0.0
    return tokens_in, tokens_out, cost, list(models)


def _views(tree: PageTree) -> list[EntryView]:
    results = tx.tool_results(e.get("message") for e in tree.entries if isinstance(e.get("message"), Mapping))
    views: list[EntryView] = []
    for entry in tree.entries:
        try:
            views.append(render_entry(entry, results))
        except (TypeError, ValueError, AttributeError, KeyError):  # a hand-edited or damaged entry
            views.append(EntryView("note", "(an entry of this session could not be read)", "(unreadable)"))
    return views


def _preview(tree: PageTree, views: list[EntryView], index: int) -> str:
    """Label of ``index`` or of its first descendant that has one."""
    at = index
    while not views[at].label and tree.children[at]:
        at = tree.children[at][0]
    return shorten(views[at].label, 60) or "(empty)"


def _article(tree: PageTree, views: list[EntryView], i: int, eager: bool) -> str:
    view, kids = views[i], tree.children[i]
    if not view.body and len(kids) < 2:
        return ""
    hidden = "" if tree.on_path[i] else " hidden"
    css = (f"e {view.kind}" if eager else f"e {view.kind} lz") if view.body else "e stub"
    label = tree.labels[i]
    tag = f'<span class="tag">{escape(label)}</span>' if label else ""
    parts = [f'<article class="{css}" id="e{i}" data-i="{i}"{hidden}>']
    if view.body:
        parts.append(f'<div class="b">{tag}{view.body if eager else lazy(view.body)}</div>')
    if len(kids) > 1:
        buttons = "".join(
            f'<button data-c="{c}"{" class=on" if tree.on_path[c] else ""}>{n}. {escape(_preview(tree, views, c))}</button>'
            for n, c in enumerate(kids, 1)
        )
        parts.append(f'<nav class="fork" data-i="{i}"><span>{len(kids)} branches</span>{buttons}</nav>')
    parts.append("</article>")
    return "".join(parts)


def _tree_rows(tree: PageTree, views: list[EntryView]) -> str:
    rows: list[str] = []
    for i, view in enumerate(views):
        if not view.label:
            continue
        css = ["r", view.kind]
        if tree.on_path[i]:
            css.append("on")
        if i == tree.leaf:
            css.append("leaf")
        if len(tree.children[i]) > 1:
            css.append("fk")
        depth = min(tree.depths[i], _MAX_INDENT)
        style = f' style="padding-left:{0.4 + depth * 0.9:.1f}em"' if depth else ""
        rows.append(
            f'<div class="{" ".join(css)}" data-i="{i}"{style}>{escape(shorten(view.label, 90))}</div>'
        )
    return "".join(rows)


def render_page(store: SessionStore, theme: Theme, redactor: Redactor | None = None) -> str:
    """The viewer page for every entry of ``store``, the current leaf's path shown first."""
    redactor = redactor or Redactor()
    tree = build_tree(store)
    tree.entries = [redactor.value(entry) for entry in tree.entries]
    tree.labels = [redactor.text(label) if label else label for label in tree.labels]
    views = _views(tree)
    header = store.header
    title = redactor.text(store.name or next((v.label for v in views if v.kind == "user"), "") or "Session")
    tokens_in, tokens_out, cost, models = _totals(tree.entries)
    branches = sum(1 for kids in tree.children if len(kids) > 1)
    meta = [
        f"<span>Session {escape(header.id)}</span>",
        f"<span>{escape(redactor.text(header.cwd))}</span>",
        f"<span>{len(tree.entries):,} entries, {branches:,} branch point{'s' if branches != 1 else ''}</span>",
    ]
    if models:
        meta.append(f"<span>{escape(', '.join(models))}</span>")
    if tokens_in or tokens_out:
        meta.append(f"<span>{tokens_in:,} in / {tokens_out:,} out tokens</span>")
    if cost:
        meta.append(f"<span>${cost:.4f}</span>")
    script = _asset("viewer.js")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    csp = f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'sha256-{digest}'"
    data = {"p": tree.parents, "o": tree.file_order, "leaf": tree.leaf}
    articles: list[str] = []
    shown = 0
    for i in range(len(views)):
        articles.append(_article(tree, views, i, tree.on_path[i] and shown < _EAGER))
        shown += tree.on_path[i] and bool(views[i].body)
    return "".join(
        [
            '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n',
            f'<meta http-equiv="Content-Security-Policy" content="{csp}">\n',
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
            f"<title>{escape(shorten(title, 80))}</title>\n",
            f"<style>{theme_css(theme)}\n{_asset('viewer.css')}</style>\n</head>\n<body>\n",
            '<aside id="side"><div class="side-head">Session tree</div>',
            f'<div id="tree">{_tree_rows(tree, views)}</div></aside>\n',
            '<main id="main"><header>',
            f"<h1>{escape(shorten(title, 200))}</h1>",
            f'<div class="meta">{"".join(meta)}</div>',
            '<div class="bar"><input id="q" type="search" placeholder="Search messages (Enter: next)" autocomplete="off">',
            '<span id="hits"></span><button id="t-tools" type="button">Expand tools</button>',
            '<button id="t-think" type="button">Expand thinking</button>',
            '<button id="t-tree" type="button">Tree</button></div></header>\n',
            f'<div id="log">{"".join(articles)}</div>\n</main>\n',
            f'<script type="application/json" id="pi-data">{_json_for_script(data)}</script>\n',
            f"<script>{script}</script>\n</body>\n</html>\n",
        ]
    )
