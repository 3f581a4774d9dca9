"""Rich Markdown, drawn as Pi draws it.

- headings left-aligned; from h3 on they keep their marker (``### Title``);
- links keep their address: ``text (https://…)``, unless the text is the address; the address
  has its own style (``markdown.pi_address``); bare ``http(s)://`` addresses are links too;
- ordered lists keep their period (``1. item``);
- block quotes muted italic behind a bar (``│ ``), each source line on its own row;
- a horizontal rule is ``─`` across the width, at most 80 columns;
- code blocks between muted ```` ```lang ```` fence lines, the code indented (Pi's
  ``markdown.code_block_indent``), no padding rows;
- tables in a box, no blank rows above and below; lines between the rows with
  ``markdown.table_row_separators``.

Colours come from the console's ``markdown.*`` styles, which ``tui/theming.py`` sets from the
theme's ``md*`` tokens.

Built on first use: importing markdown-it and Rich's Markdown is not free.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from typing import Any, ClassVar

__all__ = ["markdown_class"]

_BARE_URL = re.compile(r"https?://[^\s<>()\[\]]*[^\s<>()\[\].,;:!?'\"*_]")
RULE_MAX = 80
"""A horizontal rule is at most this wide, as in Pi."""


def _link_tokens(href: str, shown: str, *, address: bool) -> list[Any]:
    from markdown_it.token import Token

    inner = [Token("text", "", 0, content=shown)]
    if address:  # an inline style of its own (PiMarkdown.inlines), inside the link
        inner = [Token("pi_address_open", "pi_address", 1), *inner, Token("pi_address_close", "pi_address", -1)]
    return [Token("link_open", "a", 1, attrs={"href": href}), *inner, Token("link_close", "a", -1)]


def _bare_urls(text: str) -> list[Any]:
    """``text`` as text tokens with each bare ``http(s)://`` address made a link."""
    from markdown_it.token import Token

    out: list[Any] = []
    position = 0
    for match in _BARE_URL.finditer(text):
        if match.start() > position:
            out.append(Token("text", "", 0, content=text[position : match.start()]))
        out.extend(_link_tokens(match.group(), match.group(), address=False))
        position = match.end()
    if position < len(text):
        out.append(Token("text", "", 0, content=text[position:]))
    return out


def _pi_inline(tokens: Iterable[Any]) -> None:
    """Pi's inline rules on parsed tokens: after each link whose text differs from its address add
    `` (address)`` (a second link, in the address style); make bare addresses links; keep the line
    breaks of block quotes."""
    from markdown_it.token import Token

    quote_depth = 0
    for token in tokens:
        if token.type == "blockquote_open":
            quote_depth += 1
        elif token.type == "blockquote_close":
            quote_depth -= 1
        children = token.children
        if not children:
            continue
        out: list[Any] = []
        href, text = "", ""
        for child in children:
            if child.type == "softbreak" and quote_depth:
                out.append(Token("hardbreak", "br", 0))
                continue
            if child.type == "text" and not href and "://" in child.content:
                out.extend(_bare_urls(child.content))
                continue
            out.append(child)
            if child.type == "link_open":
                href, text = str(child.attrs.get("href", "")), ""
            elif child.type in ("text", "code_inline") and href:
                text += child.content
            elif child.type == "link_close" and href:
                shown = href.removeprefix("mailto:")
                if text.strip() != shown:
                    out.append(Token("text", "", 0, content=" ("))
                    out.extend(_link_tokens(href, shown, address=True))
                    out.append(Token("text", "", 0, content=")"))
                href = ""
        token.children = out


@cache
def markdown_class() -> type:
    """Rich's ``Markdown`` with Pi's elements (see the module docstring)."""
    from rich import box
    from rich.console import Console, ConsoleOptions, RenderResult
    from rich.markdown import (
        BlockQuote,
        CodeBlock,
        Heading,
        HorizontalRule,
        ListItem,
        Markdown,
        TableElement,
    )
    from rich.segment import Segment
    from rich.syntax import Syntax
    from rich.table import Table
    from rich.text import Text

    class LeftHeading(Heading):
        def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
            text = self.text.copy()
            text.justify = "left"
            level = int(self.tag[1:]) if self.tag[1:].isdigit() else 1
            if level >= 3:  # Pi keeps the marker from h3 on
                marker = Text("#" * level + " ", style=console.get_style(f"markdown.{self.tag}", default="bold"))
                text = marker + text
            yield text

    class PiRule(HorizontalRule):
        def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
            style = console.get_style("markdown.hr", default="none")
            yield Text("─" * min(RULE_MAX, options.max_width), style=style)

    class PiListItem(ListItem):
        def render_number(
            self, console: Console, options: ConsoleOptions, number: int, last_number: int
        ) -> RenderResult:
            width = len(str(last_number)) + 2
            lines = console.render_lines(
                self.elements, options.update(width=options.max_width - width), style=self.style
            )
            number_style = console.get_style("markdown.item.number", default="none")
            numeral = Segment(f"{number}.".ljust(width), number_style)
            padding = Segment(" " * width)
            for index, line in enumerate(lines):
                yield numeral if index == 0 else padding
                yield from line
                yield Segment.line()

    class PiQuote(BlockQuote):
        def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
            style = console.get_style("markdown.block_quote", default="italic")
            lines = console.render_lines(
                self.elements, options.update(width=options.max_width - 2), style=style
            )
            bar = Segment("│ ", console.get_style("markdown.pi_quote_border", default="dim"))
            for line in lines:
                yield bar
                yield from line
                yield Segment.line()

    class PiCodeBlock(CodeBlock):
        indent = "  "

        @classmethod
        def create(cls, markdown: Markdown, token: Any) -> CodeBlock:
            block = super().create(markdown, token)
            block.fence_info = (token.info or "").strip()  # type: ignore[attr-defined]
            block.indent = getattr(markdown, "code_indent", cls.indent)  # type: ignore[attr-defined]
            return block

        def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
            border = console.get_style("markdown.pi_fence", default="dim")
            yield Text("```" + getattr(self, "fence_info", ""), style=border)
            code = str(self.text).rstrip("\n")
            if code:
                indent = len(self.indent)
                yield Syntax(
                    code,
                    self.lexer_name,
                    theme=self.theme,
                    word_wrap=True,
                    padding=(0, 0, 0, indent),
                    background_color="default",
                )
            yield Text("```", style=border)

    class PiTable(TableElement):
        row_lines = False

        @classmethod
        def create(cls, markdown: Markdown, token: Any) -> TableElement:
            table = cls()
            table.row_lines = isinstance(markdown, PiMarkdown) and markdown.table_row_lines
            return table

        def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
            table = Table(
                box=box.SQUARE,
                style=console.get_style("markdown.table.border", default="dim"),
                show_edge=True,
                show_lines=self.row_lines,
                padding=(0, 1),
            )
            if self.header is not None and self.header.row is not None:
                for column in self.header.row.cells:
                    heading = column.content.copy()
                    heading.stylize("bold")
                    table.add_column(heading)
            if self.body is not None:
                for row in self.body.rows:
                    table.add_row(*[cell.content for cell in row.cells])
            yield table

    class PiMarkdown(Markdown):
        elements: ClassVar = {
            **Markdown.elements,
            "heading_open": LeftHeading,
            "list_item_open": PiListItem,
            "blockquote_open": PiQuote,
            "fence": PiCodeBlock,
            "code_block": PiCodeBlock,
            "table_open": PiTable,
            "hr": PiRule,
        }
        inlines = {*Markdown.inlines, "pi_address"}

        def __init__(
            self, markup: str, *, code_indent: str = "  ", table_row_lines: bool = False, **kwargs: Any
        ) -> None:
            super().__init__(markup, **kwargs)
            self.code_indent = code_indent
            self.table_row_lines = table_row_lines
            _pi_inline(self.parsed)

    return PiMarkdown
