"""A small stdio (or streamable-HTTP) MCP server for the tests, on the SDK's server side.

``python tiny_server.py [stdio|http PORT] [--garbage] [--marker FILE] [--init-delay S]``: ``--garbage``
prints non-JSON lines on stdout before serving; ``--marker`` writes a file at start; ``--init-delay``
sleeps S seconds before serving (a server slow to initialize); ``--json`` (http) answers with JSON bodies, not SSE;
``--pid-file FILE`` writes the pid there; ``--announce-during-list`` adds a tool while answering the first tools/list; ``--ignore-eof`` (stdio) stays alive after stdin ends (only a signal stops it).
"""

from __future__ import annotations

import asyncio
import base64
import os
import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ImageContent, TextContent

PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
    )
).decode()

class AnnouncingServer(MCPServer):
    """``--announce-during-list``: the first tools/list adds the tool ``late`` and sends
    tools/list_changed before answering (with the list as it was when the request came)."""

    announced = False

    async def _handle_list_tools(self, ctx, params):  # type: ignore[no-untyped-def]
        if self.announced:
            return await super()._handle_list_tools(ctx, params)
        self.announced = True
        answer = await super()._handle_list_tools(ctx, params)
        self.add_tool(late, name="late")
        await ctx.session.send_tool_list_changed()
        await asyncio.sleep(0.2)  # the notification goes out well before the answer
        return answer


def late() -> str:
    """A tool added while the first tools/list was answered."""
    return "late"


server = (AnnouncingServer if "--announce-during-list" in sys.argv else MCPServer)("tiny")


@server.tool()
def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


@server.tool()
def echo(text: str) -> str:
    """Echo the text."""
    return text


@server.tool()
def picture() -> list[TextContent | ImageContent]:
    """A caption and a 1x1 PNG."""
    return [TextContent(type="text", text="a dot"), ImageContent(type="image", data=PNG, mime_type="image/png")]


@server.tool()
def big(size: int = 50000) -> str:
    """A long text."""
    return "".join(chr(ord("a") + i % 26) for i in range(size))


@server.tool()
def fail() -> str:
    """Always fails."""
    raise ValueError("this tool always fails")


@server.tool()
async def slow(seconds: float, ctx: Context) -> str:
    """Sleep, reporting progress; writes its pid's cancel marker if cancelled."""
    steps = max(1, int(seconds * 10))
    try:
        for i in range(steps):
            await ctx.report_progress(i, steps, "working")
            await asyncio.sleep(seconds / steps)
    except BaseException:
        marker = os.environ.get("TINY_CANCEL_MARKER")
        if marker:
            os.close(os.open(marker, os.O_CREAT | os.O_WRONLY))
        raise
    return "slept"


@server.tool()
def crash() -> str:
    """Exit the process mid-call."""
    os._exit(3)


@server.resource("tiny://dot.png", mime_type="image/png")
def dot() -> bytes:
    """A 1x1 PNG resource."""
    return base64.b64decode(PNG)


@server.resource("tiny://data.bin", mime_type="application/octet-stream")
def data() -> bytes:
    """Four bytes of binary data."""
    return bytes([0, 1, 2, 255])


@server.resource("ui://tiny/app", mime_type="text/html;profile=mcp-app")
def app() -> str:
    """An MCP App's page (pi leaves these out)."""
    return "<html></html>"


@server.prompt()
def review(path: str, focus: str = "bugs") -> str:
    """Review one file."""
    return f"Review {path} for {focus}."


@server.tool()
def pid() -> str:
    """The server's pid."""
    return str(os.getpid())


def main() -> None:
    args = sys.argv[1:]
    if "--marker" in args:
        path = args[args.index("--marker") + 1]
        with open(path, "w") as fh:
            fh.write("ran")
    if "--pid-file" in args:
        with open(args[args.index("--pid-file") + 1], "w") as fh:
            fh.write(str(os.getpid()))
    if "--garbage" in args:
        sys.stdout.write("this is not JSON\n{broken\n")
        sys.stdout.flush()
    if "--init-delay" in args:
        import time

        time.sleep(float(args[args.index("--init-delay") + 1]))
    print(f"tiny server {os.getpid()} starting", file=sys.stderr, flush=True)
    if args and args[0] == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(args[1]), json_response="--json" in args)
    else:
        server.run("stdio")
        if "--ignore-eof" in args:
            import time

            while True:
                time.sleep(1)


if __name__ == "__main__":
    main()
