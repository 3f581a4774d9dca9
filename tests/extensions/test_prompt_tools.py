"""Extension tools in the system prompt and ``--tools`` (extensions §3.1), through ``pi -p``."""

from __future__ import annotations

from tests.extensions.conftest import write_ext
from tests.modes.pirun import PiHome
from tests.support.sse_server import Text, Turn

TOOLS = """
from pydantic import BaseModel
from pi_coder.extensions import AgentToolResult, TextContent, ToolDefinition

class Key(BaseModel):
    key: str

async def run(tool_call_id, params, signal, on_update, ctx):
    return AgentToolResult(content=[TextContent(text=params.key)])

def extension(pi):
    pi.register_tool(ToolDefinition(name="git_config", label="Git config", parameters=Key, execute=run,
        description="Read a git config value", prompt_snippet="Read git configuration values",
        prompt_guidelines=["Use git_config rather than bash to read git settings"]))
    pi.register_tool(ToolDefinition(name="quiet", label="Quiet", parameters=Key, execute=run,
        description="A tool with no snippet", prompt_guidelines=["Call quiet when asked to whisper"]))
"""


def _system(pi: PiHome, index: int = 0) -> str:
    system = pi.server.requests[index].json["system"]
    return system if isinstance(system, str) else "".join(block["text"] for block in system)


def _tools(pi: PiHome, index: int = 0) -> list[str]:
    return [t["name"] for t in pi.server.requests[index].json.get("tools", [])]


def test_snippets_and_guidelines_of_active_extension_tools(pi: PiHome) -> None:
    ext = write_ext(pi.project, "tools", TOOLS)
    pi.server.enqueue(Turn([Text("ok")]))
    run = pi.run("-e", str(ext), "-p", "hi")
    assert run.returncode == 0, run.stderr
    system = _system(pi)
    assert "- git_config: Read git configuration values" in system
    assert "- quiet" not in system  # no prompt_snippet: unlisted
    assert "- Use git_config rather than bash to read git settings" in system
    assert "- Call quiet when asked to whisper" in system  # guidelines while active
    assert {"git_config", "quiet", "read", "bash"} <= set(_tools(pi))


def test_tools_option_selects_extension_tools(pi: PiHome) -> None:
    ext = write_ext(pi.project, "tools", TOOLS)
    pi.server.enqueue(Turn([Text("ok")]))
    run = pi.run("-e", str(ext), "--tools", "read,git_config,nope", "-p", "hi")
    assert run.returncode == 0, run.stderr
    assert sorted(_tools(pi)) == ["git_config", "read"]
    system = _system(pi)
    assert "- git_config: Read git configuration values" in system
    assert "Call quiet" not in system  # inactive: its guidelines are gone
    assert "- bash" not in system
    assert 'Unknown tool "nope"' in run.stderr and "git_config" in run.stderr


def test_exclude_tools_removes_an_extension_tool(pi: PiHome) -> None:
    ext = write_ext(pi.project, "tools", TOOLS)
    pi.server.enqueue(Turn([Text("ok")]))
    run = pi.run("-e", str(ext), "-xt", "quiet", "-p", "hi")
    assert run.returncode == 0, run.stderr
    assert "quiet" not in _tools(pi) and "git_config" in _tools(pi)


def test_unknown_tool_without_extensions_warns(pi: PiHome) -> None:
    pi.server.enqueue(Turn([Text("ok")]))
    run = pi.run("--tools", "read,nope", "-p", "hi")
    assert run.returncode == 0, run.stderr
    assert _tools(pi) == ["read"]
    assert 'Unknown tool "nope"' in run.stderr


def test_tool_patterns_and_relative_entries_cover_extension_tools(pi: PiHome) -> None:
    """One selection for built-in and extension tools: ``*`` patterns, ``+``/``-`` and ``-nbt``."""
    ext = write_ext(pi.project, "tools", TOOLS)
    pi.server.enqueue(Turn([Text("ok")]), Turn([Text("ok")]), Turn([Text("ok")]))
    run = pi.run("-e", str(ext), "-t", "git*,re*", "-p", "hi")
    assert run.returncode == 0, run.stderr
    assert sorted(_tools(pi, 0)) == ["git_config", "read"]
    run = pi.run("-e", str(ext), "-t", "-quiet,-bash", "-p", "hi")
    assert run.returncode == 0, run.stderr
    assert sorted(_tools(pi, 1)) == ["edit", "git_config", "read", "task", "write"]
    run = pi.run("-e", str(ext), "-nbt", "-p", "hi")
    assert run.returncode == 0, run.stderr
    assert sorted(_tools(pi, 2)) == ["git_config", "quiet", "task"]
    assert "Unknown tool" not in run.stderr


def test_no_tools_drops_extension_tools_too(pi: PiHome) -> None:
    ext = write_ext(pi.project, "tools", TOOLS)
    pi.server.enqueue(Turn([Text("ok")]))
    run = pi.run("-e", str(ext), "-nt", "-p", "hi")
    assert run.returncode == 0, run.stderr
    assert _tools(pi) == []
