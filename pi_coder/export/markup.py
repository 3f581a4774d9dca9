"""Markdown and code to HTML: markdown-it-py and Pygments, imported on first use.

Raw HTML in Markdown is escaped (``html`` off), links with a ``javascript:``-like scheme are
dropped by markdown-it's link validation, and images become plain links so the page never loads
anything from the network.
"""

from __future__ import annotations

from functools import lru_cache
from html import escape
from typing import Any

__all__ = ["TOKEN_CLASSES", "code_html", "markdown_html"]

TOKEN_CLASSES = {
    "syntaxComment": "c ch cm cp cpf c1 cs",
    "syntaxKeyword": "k kc kd kn kp kr ow",
    "syntaxFunction": "nf fm nd",
    "syntaxVariable": "nv vc vg vi vm na nt",
    "syntaxString": "s sa sb sc dl sd s2 se sh si sx sr s1 ss",
    "syntaxNumber": "m mb mf mh mi mo il",
    "syntaxType": "kt nc nn nb bp ne",
    "syntaxOperator": "o",
    "syntaxPunctuation": "p",
    "toolDiffAdded": "gi",
    "toolDiffRemoved": "gd",
}
"""Pygments' short class names coloured by each theme token; other tokens are left as plain text."""

_COLOURED = frozenset(" ".join(TOKEN_CLASSES.values()).split())
_HIGHLIGHT_LIMIT = 60_000
"""Longer code is shown plain (escaped): highlighting it would make the export slow."""


@lru_cache(maxsize=2)
def _parser(breaks: bool) -> Any:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "breaks": breaks, "highlight": _highlight})
    md.enable(["table", "strikethrough"])

    def image(renderer: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        token = tokens[idx]
        src = escape(str(token.attrGet("src") or ""))
        alt = escape(token.content or "image")
        return f'<a class="img-link" href="{src}">[image: {alt}]</a>'

    md.add_render_rule("image", image)
    return md


def markdown_html(text: str, *, breaks: bool = False) -> str:
    """``text`` rendered as Markdown (fenced code highlighted); raw HTML shows as text."""
    html: str = _parser(breaks).render(text)
    return html


def _highlight(code: str, lang: str, attrs: str) -> str:
    body = _highlighted(code, lang=lang.strip().split(" ")[0].lower() if lang else "")
    return f'<pre class="hl"><code>{body}</code></pre>'


def code_html(code: str, *, lang: str = "", filename: str = "") -> str:
    """A ``<pre>`` block of ``code``, highlighted by language name or file name when known."""
    return f'<pre class="hl"><code>{_highlighted(code, lang=lang, filename=filename)}</code></pre>'


def _highlighted(code: str, *, lang: str = "", filename: str = "") -> str:
    lexer = _lexer(lang, "") if lang else _lexer("", _suffix(filename)) if filename else None
    if lexer is None or len(code) > _HIGHLIGHT_LIMIT:
        return escape(code, quote=False)
    out: list[str] = []
    run_css: str | None = None
    run: list[str] = []
    for ttype, text in lexer.get_tokens(code):
        css = _css_class(ttype)
        if css != run_css and run:
            out.append(_span(run_css, "".join(run)))
            run = []
        run_css = css
        run.append(text)
    if run:
        out.append(_span(run_css, "".join(run)))
    return "".join(out)


def _span(css: str | None, text: str) -> str:
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return f"<span class={css}>{text}</span>" if css else text


@lru_cache(maxsize=1024)
def _css_class(ttype: Any) -> str | None:
    """Pygments' short class of ``ttype`` or of its nearest coloured parent type; None: plain."""
    from pygments.token import STANDARD_TYPES

    while ttype is not None:
        css = str(STANDARD_TYPES.get(ttype, ""))
        if css in _COLOURED:
            return css
        ttype = ttype.parent
    return None


def _suffix(filename: str) -> str:
    name = filename.rsplit("/", 1)[-1]
    return "*." + name.rsplit(".", 1)[-1].lower() if "." in name else name


@lru_cache(maxsize=256)
def _lexer(lang: str, pattern: str) -> Any:
    from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
    from pygments.util import ClassNotFound

    try:
        if lang:
            return get_lexer_by_name(lang, stripnl=False, ensurenl=False)
        return get_lexer_for_filename(pattern.replace("*", "x"), stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None
