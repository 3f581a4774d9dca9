"""Rich Markdown, drawn as Pi draws it.

- headings left-aligned (h1 bold underlined);
- links keep their address: ``text (https://…)``, unless the text is the address;
- ordered lists keep their period (``1. item``);
- block quotes muted italic behind a bar (``│ ``);
- code blocks between muted ```` ```lang ```` fence lines, the code indented (Pi's
  ``markdown.code_block_indent``), no padding rows;
- tables in a box, no blank rows above and below.

Built on first use: importing markdown-it and Rich's Markdown is not free.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any, ClassVar

__all__ = ["markdown_class"]

MUTED = "grey50"


def _link_addresses(tokens: Iterable[Any]) -> None:
    """After each link whose text differs from its address, add `` (address)`` as a second link."""
    from markdown_it.token import Token

    for token in tokens:
        children = token.children
        if not children:
            continue
        out: list[Any] = []
        href, text = "", ""
        for child in children:
            out.append(child)
            if child.type == "link_open":
                href, text = str(child.attrs.get("href", "")), ""
            elif child.type in ("text", "code_inline") and href:
                text += child.content
            elif child.type == "link_close" and href:
                shown = href.removeprefix("mailto:")
                if text.strip() != shown:
                    out.append(Token("text", "", 0, content=" ("))
                    out.append(Token("link_open", "a", 1, attrs={"href": href}))
                    out.append(Token("text", "", 0, content=shown))
                    out.append(Token("link_close", "a", -1))
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
        ListItem,
        Markdown,
        TableElement,
    )
    from rich.segment import Segment
    from rich.style import Style
    from rich.syntax import Syntax
    from rich.table import Table
    from rich.text import Text

    class LeftHeading(Heading):
        def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
            text = self.text.copy()
            text.justify = "left"
            if self.tag == "h1":
                text.stylize("bold underline")
            yield text

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
        style_name = f"italic {MUTED}"

        def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
            style = Style(color=MUTED, italic=True)
            lines = console.render_lines(
                self.elements, options.update(width=options.max_width - 2), style=style
            )
            bar = Segment("│ ", Style(color=MUTED))
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
            border = Style(color=MUTED)
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
        def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
            table = Table(box=box.SQUARE, style=Style(color=MUTED), show_edge=True, padding=(0, 1))
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
        }

        def __init__(self, markup: str, *, code_indent: str = "  ", **kwargs: Any) -> None:
            super().__init__(markup, **kwargs)
            self.code_indent = code_indent
            _link_addresses(self.parsed)

    return PiMarkdown
