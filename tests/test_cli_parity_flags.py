"""Pi 1.6's command-line flags, each run in a real process against the scripted model server."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.modes.pirun import PiHome, all_text, user_texts
from tests.support.sse_server import SSEServer, Text, Turn


def _tools(request: dict) -> list[str]:  # type: ignore[type-arg]
    return sorted(t["name"] for t in request.get("tools", []))


def test_exclude_tools_short_no_tools_and_offline(tmp_path: Path, sse_server: SSEServer) -> None:
    pi = PiHome(tmp_path, sse_server, "anthropic")
    sse_server.enqueue(Turn([Text("a")]), Turn([Text("b")]))
    done = pi.run("--offline", "-xt", "bash,write", "--no-session", "-p", "hi")
    assert done.returncode == 0, done.stderr
    assert _tools(sse_server.requests[0].json) == ["edit", "read", "task"]
    done = pi.run("-nt", "--no-session", "-p", "hi")
    assert done.returncode == 0, done.stderr
    assert _tools(sse_server.requests[1].json) == []
    help_text = pi.run("--help").stdout
    assert "--exclude-tools" in help_text and "-nt" in help_text and "--offline" in help_text


# --------------------------------------------------------------- sessions: --session-id, --fork, -n


def _headers(pi: PiHome) -> dict[str, Path]:
    return {json.loads(f.read_text().splitlines()[0])["id"]: f for f in pi.session_files()}


def _entries(file: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in file.read_text().splitlines()[1:] if line.strip()]


def test_session_id_starts_then_continues_the_session_with_that_id(tmp_path: Path, sse_server: SSEServer) -> None:
    pi = PiHome(tmp_path, sse_server, "anthropic")
    sse_server.enqueue(Turn([Text("first answer")]), Turn([Text("second answer")]))
    done = pi.run("--session-id", "my-run.1", "-p", "remember kiwi")
    assert done.returncode == 0, done.stderr
    assert list(_headers(pi)) == ["my-run.1"]
    done = pi.run("--session-id", "my-run.1", "-p", "what fruit?")
    assert done.returncode == 0, done.stderr
    assert list(_headers(pi)) == ["my-run.1"]  # the same file, continued
    assert "remember kiwi" in all_text(sse_server.requests[1].json)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--session-id", "-bad"], "Session id must be non-empty"),
        (["--session-id", "a/b"], "Session id must be non-empty"),
        (["--session-id", "ab_"], "start and end with an alphanumeric character"),
        (["--session-id", "a", "-c"], "--session-id cannot be combined with --continue"),
        (["--session-id", "a", "--session", "b"], "--session-id cannot be combined with --session"),
        (["--fork", "x", "-r"], "--fork cannot be combined with --resume"),
        (["--fork", "x", "--no-session"], "--fork cannot be combined with --no-session"),
        (["--fork", "nosuch"], "No session found matching 'nosuch'"),
        (["-t", "read,+grep"], "cannot mix plain names with +name/-name"),
        (["-n"], "Option -n needs a value"),
    ],
)
def test_session_and_tool_option_errors_are_one_line(
    tmp_path: Path, sse_server: SSEServer, args: list[str], message: str
) -> None:
    pi = PiHome(tmp_path, sse_server, "anthropic")
    done = pi.run(*args, "-p", "hi") if args != ["-n"] else pi.run("-p", "hi", *args)
    assert done.returncode == 1
    assert message in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert sse_server.requests == []


def test_fork_copies_a_session_into_a_new_one_with_an_optional_id(tmp_path: Path, sse_server: SSEServer) -> None:
    pi = PiHome(tmp_path, sse_server, "anthropic")
    sse_server.enqueue(Turn([Text("one")]), Turn([Text("two")]), Turn([Text("three")]))
    assert pi.run("--session-id", "origin", "-p", "remember plum").returncode == 0
    origin = _headers(pi)["origin"]
    before = origin.read_text()
    done = pi.run("--fork", "orig", "-p", "what fruit?")  # an id prefix
    assert done.returncode == 0, done.stderr
    forks = {k: v for k, v in _headers(pi).items() if k != "origin"}
    assert len(forks) == 1
    (fork,) = forks.values()
    assert json.loads(fork.read_text().splitlines()[0])["parentSession"] == str(origin)
    assert "remember plum" in all_text(sse_server.requests[1].json)
    assert origin.read_text() == before  # the source is unchanged
    done = pi.run("--fork", str(origin), "--session-id", "chosen-id", "-p", "again")  # a path, and the new id
    assert done.returncode == 0, done.stderr
    assert "chosen-id" in _headers(pi)


def test_name_records_a_session_info_entry(tmp_path: Path, sse_server: SSEServer) -> None:
    pi = PiHome(tmp_path, sse_server, "anthropic")
    sse_server.enqueue(Turn([Text("ok")]))
    done = pi.run("-n", "Refactor auth", "-p", "hi")
    assert done.returncode == 0, done.stderr
    (file,) = pi.session_files()
    infos = [e for e in _entries(file) if e["type"] == "session_info"]
    assert [e["name"] for e in infos] == ["Refactor auth"]


# --------------------------------------------------------------- tools, thinking, prompts


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["-t", "+grep,-write"], ["bash", "edit", "grep", "read", "task"]),  # task: the subagents' tool
        (["-t", "*"], ["bash", "edit", "find", "grep", "ls", "read", "task", "write"]),
        (["--tools", "gr*,ls"], ["grep", "ls"]),
        (["-nbt"], ["task"]),
        (["-nbt", "-t", "read"], ["read"]),
        (["-t", "*", "-xt", "*e*,task"], ["bash", "find", "ls"]),
    ],
)
def test_tool_selection_flags(tmp_path: Path, sse_server: SSEServer, args: list[str], expected: list[str]) -> None:
    pi = PiHome(tmp_path, sse_server, "anthropic")
    sse_server.enqueue(Turn([Text("ok")]))
    done = pi.run(*args, "--no-session", "-p", "hi")
    assert done.returncode == 0, done.stderr
    assert _tools(sse_server.requests[0].json) == expected


_DEEP = (
    "[providers.deep]\n"
    'api = "anthropic-messages"\n'
    'base_url = "{url}"\n'
    'api_key = "none"\n'
    'models = [{{ id = "deep-1", reasoning = true, context_window = 32768, max_tokens = 4096, '
    'thinking_level_map = {{ max = "max" }} }}, {{ id = "mid-1", reasoning = true, context_window = 32768 }}]\n'
)


def test_thinking_max_is_accepted_and_clamped_per_model(tmp_path: Path, sse_server: SSEServer) -> None:
    pi = PiHome(tmp_path, sse_server, "anthropic")
    pi.write_models(_DEEP.format(url=sse_server.anthropic_base_url))
    sse_server.enqueue(Turn([Text("a")]), Turn([Text("b")]), Turn([Text("c")]))
    for model, level in (("deep/deep-1", "max"), ("deep/mid-1", "high"), ("local/test-model", "off")):
        done = pi.run("--model", model, "--thinking", "max", "--verbose", "--no-session", "-p", "hi")
        assert done.returncode == 0, done.stderr
        assert "Invalid thinking level" not in done.stderr
        assert f"[verbose] model: {model} (thinking {level})" in done.stderr
    done = pi.run("--model", "deep/deep-1:max", "--verbose", "--no-session", "-p", "hi")
    assert "(thinking max)" in done.stderr


def _system(request: dict) -> str:  # type: ignore[type-arg]
    system = request.get("system")
    return json.dumps(system) if not isinstance(system, str) else system


def test_append_system_prompt_repeats_and_no_context_files(tmp_path: Path, sse_server: SSEServer) -> None:
    pi = PiHome(tmp_path, sse_server, "anthropic")
    (pi.project / "AGENTS.md").write_text("Project rule: use tabs.\n")
    (pi.project / "extra.md").write_text("Second addition, from a file.\n")
    sse_server.enqueue(Turn([Text("a")]), Turn([Text("b")]))
    done = pi.run(
        "--append-system-prompt", "First addition.", "--append-system-prompt", "extra.md", "--no-session", "-p", "hi"
    )
    assert done.returncode == 0, done.stderr
    system = _system(sse_server.requests[0].json)
    assert system.index("First addition.") < system.index("Second addition, from a file.")
    assert "Project rule: use tabs." in system
    done = pi.run("-nc", "--no-session", "-p", "hi")
    assert done.returncode == 0, done.stderr
    assert "Project rule: use tabs." not in _system(sse_server.requests[1].json)


def test_prompt_template_paths_and_no_prompt_templates(tmp_path: Path, sse_server: SSEServer) -> None:
    pi = PiHome(tmp_path, sse_server, "anthropic")
    (pi.home / "prompts").mkdir()
    (pi.home / "prompts" / "greet.md").write_text("Say hello to $1.\n")
    extra = tmp_path / "review.md"
    extra.write_text("Review $1 with care.\n")
    sse_server.enqueue(*(Turn([Text(str(n))]) for n in range(4)))
    assert pi.run("--prompt-template", str(extra), "--no-session", "-p", "/review src").returncode == 0
    assert "Review src with care." in user_texts(sse_server.requests[0].json)[-1]
    assert pi.run("--no-session", "-p", "/greet Ann").returncode == 0
    assert "Say hello to Ann." in user_texts(sse_server.requests[1].json)[-1]
    assert pi.run("-np", "--no-session", "-p", "/greet Ann").returncode == 0
    assert user_texts(sse_server.requests[2].json)[-1] == "/greet Ann"  # discovered templates are off
    assert pi.run("-np", "--prompt-template", str(extra), "--no-session", "-p", "/review x").returncode == 0
    assert "Review x with care." in user_texts(sse_server.requests[3].json)[-1]


def test_verbose_prints_start_up_diagnostics_to_stderr(tmp_path: Path, sse_server: SSEServer) -> None:
    pi = PiHome(tmp_path, sse_server, "anthropic")
    (pi.project / "AGENTS.md").write_text("rules\n")
    sse_server.enqueue(Turn([Text("the answer")]), Turn([Text("quiet")]))
    done = pi.run("--verbose", "--model", "local/test-model", "--no-session", "-p", "hi", ANTHROPIC_API_KEY="sk-ant-secret-123")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "the answer"  # diagnostics never reach stdout
    lines = [line for line in done.stderr.splitlines() if line.startswith("[verbose] ")]
    text = "\n".join(lines)
    assert f"settings (global): {pi.home / 'settings.toml'} (absent)" in text
    assert "model: local/test-model" in text and "models with a key:" in text
    assert f"context files: {pi.project / 'AGENTS.md'}" in text
    assert "tools: read, bash, edit, write" in text and "session: " in text
    assert re.search(r"start-up took \d+ ms", text)
    assert "sk-ant-secret-123" not in done.stderr
    quiet = pi.run("--no-session", "-p", "hi")
    assert "[verbose]" not in quiet.stderr


def test_help_lists_the_pi_flags(tmp_path: Path, sse_server: SSEServer) -> None:
    help_text = PiHome(tmp_path, sse_server).run("--help").stdout
    for flag in (
        "--session-id", "--fork", "-n, --name", "-t, --tools", "-nbt, --no-builtin-tools", "xhigh, max",
        "-nc, --no-context-files", "--prompt-template", "-np, --no-prompt-templates", "--theme PATH",
        "--use-theme", "--no-themes", "--verbose", "(repeatable)",
    ):
        assert flag in help_text, flag


def test_no_builtin_tools_keeps_extension_tools(tmp_path: Path, sse_server: SSEServer) -> None:
    pi = PiHome(tmp_path, sse_server, "anthropic")
    ext = pi.project / "ext_tool.py"
    ext.write_text(
        "from pydantic import BaseModel\n"
        "from pi_coder.extensions import AgentToolResult, ToolDefinition\n\n"
        "class P(BaseModel):\n    pass\n\n"
        "async def run(*args):\n    return AgentToolResult()\n\n"
        "def extension(pi):\n"
        '    pi.register_tool(ToolDefinition(name="probe", label="probe", description="p", parameters=P, execute=run))\n'
    )
    sse_server.enqueue(Turn([Text("ok")]))
    done = pi.run("-nbt", "-e", str(ext), "--no-session", "-p", "hi")
    assert done.returncode == 0, done.stderr
    assert _tools(sse_server.requests[0].json) == ["probe", "task"]
