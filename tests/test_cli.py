"""The real ``pi`` entry point in print mode against the scripted server (both wire formats)."""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.modes.pirun import PI, PiHome, all_text, user_texts
from tests.support.sse_server import SSEServer, Text, ToolCall, Turn, error_turn

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
PNG_B64 = base64.b64encode(PNG).decode()


@pytest.fixture(params=["anthropic", "openai"])
def pi(request: pytest.FixtureRequest, tmp_path: Path, sse_server: SSEServer) -> PiHome:
    return PiHome(tmp_path, sse_server, request.param)


@pytest.fixture
def pi_a(tmp_path: Path, sse_server: SSEServer) -> PiHome:
    """Anthropic wire format only (for tests about the CLI rather than the wire)."""
    return PiHome(tmp_path, sse_server, "anthropic")


def test_print_runs_a_tool_turn_and_prints_the_answer(pi: PiHome) -> None:
    """-p: the model reads a file through the tool, then answers; only the answer is printed."""
    (pi.project / "a.txt").write_text("hello file\n")
    pi.server.enqueue(
        Turn([Text("Let me look."), ToolCall("read", {"path": "a.txt"}, id="call_1")]),
        Turn([Text("The file says hello.")]),
    )
    run = pi.run("-p", "What is in a.txt?")
    assert run.returncode == 0, run.stderr
    assert run.stdout == "The file says hello.\n"
    assert len(pi.server.requests) == 2
    assert "hello file" in all_text(pi.server.requests[1].json)
    assert len(pi.session_files()) == 1


def test_model_error_goes_to_stderr_with_exit_1(pi: PiHome) -> None:
    pi.server.enqueue(error_turn(400, "prompt is too wobbly"))
    run = pi.run("-p", "hi")
    assert run.returncode == 1
    assert run.stdout == ""
    assert "prompt is too wobbly" in run.stderr
    assert "Traceback" not in run.stderr


def test_several_messages_run_as_consecutive_prompts(pi_a: PiHome) -> None:
    pi_a.server.enqueue(Turn([Text("one done")]), Turn([Text("two done")]))
    run = pi_a.run("-p", "first prompt", "second prompt")
    assert run.returncode == 0, run.stderr
    assert run.stdout == "two done\n"
    assert user_texts(pi_a.server.requests[0].json) == ["first prompt"]
    assert user_texts(pi_a.server.requests[1].json) == ["first prompt", "second prompt"]
    assert "one done" in all_text(pi_a.server.requests[1].json)


def test_continue_sends_the_previous_conversation(pi: PiHome) -> None:
    pi.server.enqueue(Turn([Text("Noted: the colour is teal.")]), Turn([Text("It was teal.")]))
    assert pi.run("-p", "Remember: the colour is teal.").returncode == 0
    run = pi.run("-c", "-p", "What was the colour?")
    assert run.returncode == 0, run.stderr
    assert run.stdout == "It was teal.\n"
    second = pi.server.requests[1].json
    assert user_texts(second) == ["Remember: the colour is teal.", "What was the colour?"]
    assert "Noted: the colour is teal." in all_text(second)
    assert len(pi.session_files()) == 1


def test_session_by_path_and_by_id_prefix(pi_a: PiHome) -> None:
    pi_a.server.enqueue(Turn([Text("first answer")]), Turn([Text("second answer")]), Turn([Text("third answer")]))
    assert pi_a.run("-p", "first question").returncode == 0
    [path] = pi_a.session_files()
    session_id = json.loads(path.read_text().splitlines()[0])["id"]

    by_path = pi_a.run("--session", str(path), "-p", "second question")
    assert by_path.returncode == 0, by_path.stderr
    assert user_texts(pi_a.server.requests[1].json) == ["first question", "second question"]

    by_id = pi_a.run("--session", session_id[:8], "-p", "third question")
    assert by_id.returncode == 0, by_id.stderr
    assert user_texts(pi_a.server.requests[2].json) == ["first question", "second question", "third question"]
    assert pi_a.session_files() == [path]


def test_no_session_writes_nothing(pi_a: PiHome) -> None:
    pi_a.server.enqueue(Turn([Text("ok")]))
    run = pi_a.run("--no-session", "-p", "hi")
    assert run.returncode == 0, run.stderr
    assert pi_a.session_files() == []


def test_file_args_and_piped_stdin_join_the_first_prompt(pi: PiHome) -> None:
    """@file text comes first, then stdin, then the message; piped stdin implies print mode."""
    (pi.project / "notes.txt").write_text("alpha\n")
    (pi.project / "dot.png").write_bytes(PNG)
    pi.server.enqueue(Turn([Text("seen")]))
    run = pi.run("@notes.txt", "@dot.png", "Explain.", input="piped words\n")
    assert run.returncode == 0, run.stderr
    assert run.stdout == "seen\n"
    [text] = user_texts(pi.server.requests[0].json)
    notes, dot = pi.project / "notes.txt", pi.project / "dot.png"
    assert text == f'<file name="{notes}">\nalpha\n\n</file>\n<file name="{dot}"></file>\npiped words\n\nExplain.'
    assert PNG_B64 in pi.server.requests[0].body.decode()


def test_stdin_alone_is_the_prompt(pi_a: PiHome) -> None:
    pi_a.server.enqueue(Turn([Text("fine")]))
    run = pi_a.run(input="just stdin")
    assert run.returncode == 0, run.stderr
    assert user_texts(pi_a.server.requests[0].json) == ["just stdin"]


def test_ctrl_c_aborts_the_run_and_keeps_the_session(pi_a: PiHome) -> None:
    pi_a.server.enqueue(Turn([Text("a slow answer that never ends " * 50)], delay=0.2, delta_chars=2))
    proc = subprocess.Popen(
        [*PI, "-p", "tell me slowly"],
        cwd=pi_a.project,
        env=pi_a.env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert pi_a.server.wait_for_requests(1, timeout=30)
        time.sleep(0.5)  # some deltas arrive
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert b"Traceback" not in err
    [path] = pi_a.session_files()
    roles = [json.loads(line).get("message", {}).get("role") for line in path.read_text().splitlines()]
    assert "user" in roles and "assistant" in roles


# ---------------------------------------------------------------------------- user mistakes


def _one_line_error(run: subprocess.CompletedProcess[str]) -> str:
    assert run.returncode != 0
    assert "Traceback" not in run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    return lines[0]


def test_unknown_flag(pi_a: PiHome) -> None:
    assert "Unknown option: --frobnicate" in _one_line_error(pi_a.run("--frobnicate", "-p", "x"))


def test_option_without_value(pi_a: PiHome) -> None:
    assert "--model needs a value" in _one_line_error(pi_a.run("-p", "x", "--model"))


def test_invalid_mode(pi_a: PiHome) -> None:
    assert 'Invalid mode "yaml"' in _one_line_error(pi_a.run("--mode", "yaml", "x"))


def test_unknown_model_says_how_to_list_models(pi_a: PiHome) -> None:
    line = _one_line_error(pi_a.run("--model", "nonexistent-zz9", "-p", "x"))
    assert 'Model "nonexistent-zz9" not found' in line and "--list-models" in line


def test_missing_key_names_the_variable(pi_a: PiHome) -> None:
    line = _one_line_error(pi_a.run("--model", "anthropic/claude-sonnet-4-5", "-p", "x"))
    assert "ANTHROPIC_API_KEY" in line and "models.toml" in line


def test_unknown_session(pi_a: PiHome) -> None:
    assert "No session found matching 'zz99'" in _one_line_error(pi_a.run("--session", "zz99", "-p", "x"))


def test_missing_file_argument(pi_a: PiHome) -> None:
    line = _one_line_error(pi_a.run("@nope.txt", "-p", "x"))
    assert f"File not found: {pi_a.project / 'nope.txt'}" in line


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_file_argument_that_is_not_a_regular_file(pi_a: PiHome, kind: str) -> None:
    """`pi -p @fifo hi` (no writer on the FIFO) and `@/dev/zero`: one line and exit 1, at once."""
    if kind == "fifo":
        path = pi_a.project / "pipe"
        os.mkfifo(path)
        expected = f"Not a regular file: {path} (a FIFO); @ takes regular files only"
    else:
        path = Path("/dev/zero")
        expected = "Not a regular file: /dev/zero (a character device); @ takes regular files only"
    started = time.monotonic()
    run = pi_a.run(f"@{path}", "-p", "hi", timeout=30)
    line = _one_line_error(run)
    assert run.returncode == 1
    assert time.monotonic() - started < 20
    assert expected in line
    assert pi_a.server.requests == []


def test_api_key_without_model(pi_a: PiHome) -> None:
    assert "--api-key needs a model" in _one_line_error(pi_a.run("--api-key", "sk-secret", "-p", "x"))


def test_no_key_at_all_explains_the_three_ways(pi_a: PiHome) -> None:
    (pi_a.home / "models.toml").unlink()
    run = pi_a.run("-p", "hello")
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    assert "ANTHROPIC_API_KEY" in run.stderr and "models.toml" in run.stderr and "base_url" in run.stderr


def test_invalid_models_toml_is_one_line(pi_a: PiHome) -> None:
    (pi_a.home / "models.toml").write_text("[providers.local\n")
    line = _one_line_error(pi_a.run("-p", "x"))
    assert "models.toml" in line


def test_invalid_settings_values_warn_but_run(pi_a: PiHome) -> None:
    (pi_a.home / "settings.toml").write_text('theme = "dark"\ndefault_project_trust = "sometimes"\n')
    pi_a.server.enqueue(Turn([Text("still fine")]))
    run = pi_a.run("-p", "x")
    assert run.returncode == 0
    assert run.stdout == "still fine\n"
    assert "settings.toml" in run.stderr and "line 2" in run.stderr and "Traceback" not in run.stderr


def test_a_settings_file_that_does_not_parse_stops_pi(pi_a: PiHome) -> None:
    """None of it would apply (permission mode, sandbox...): one line and exit 1, not a run on defaults."""
    (pi_a.home / "settings.toml").write_text("theme = [unclosed\n")
    line = _one_line_error(pi_a.run("-p", "x"))
    assert "settings.toml: invalid TOML" in line and "line 1" in line


def test_nothing_to_do(pi_a: PiHome) -> None:
    assert "Nothing to do" in _one_line_error(pi_a.run("-p"))


# ---------------------------------------------------------------------------- info commands


def test_version_and_help(pi_a: PiHome) -> None:
    version = pi_a.run("--version")
    assert version.returncode == 0 and version.stdout.strip()[0].isdigit()
    short = pi_a.run("-v")
    assert short.stdout == version.stdout
    help_run = pi_a.run("--help")
    assert help_run.returncode == 0
    for flag in ("--print", "--mode", "--continue", "--session-dir", "--list-models", "--export", "--thinking"):
        assert flag in help_run.stdout


def test_list_models_table(pi_a: PiHome) -> None:
    run = pi_a.run("--list-models")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].split() == ["provider", "model", "context", "max-out", "thinking", "images", "input", "output", "cache-read"]
    assert ["local", "test-model", "32.8K", "4.1K", "no", "yes", "-", "-", "-"] in [line.split() for line in lines]
    assert not any(line.startswith("anthropic") for line in lines)  # no key, not listed
    filtered = pi_a.run("--list-models", "test")
    assert "test-model" in filtered.stdout
    none = pi_a.run("--list-models", "zzqqxx")
    assert none.returncode == 0 and 'No models match "zzqqxx"' in none.stdout


def test_export_writes_html(pi_a: PiHome) -> None:
    (pi_a.project / "a.txt").write_text("<b>bold</b> file\n")
    pi_a.server.enqueue(
        Turn([Text("Reading."), ToolCall("read", {"path": "a.txt"}, id="call_1")]),
        Turn([Text("It contains bold text.")]),
    )
    assert pi_a.run("-p", "read a.txt").returncode == 0
    [session] = pi_a.session_files()
    out = pi_a.project / "out.html"
    run = pi_a.run("--export", str(session), str(out))
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == f"Exported to: {out}"
    html = out.read_text()
    assert "It contains bold text." in html and "read a.txt" in html
    assert "&lt;b&gt;bold&lt;/b&gt; file" in html  # tool output, escaped
    default = pi_a.run("--export", str(session))
    expected = pi_a.project / f"pi-session-{session.stem}.html"
    assert default.stdout.strip() == f"Exported to: {expected}" and expected.exists()
    missing = pi_a.run("--export", "nope.jsonl")
    assert "Session file not found" in _one_line_error(missing)


def test_print_mode_never_imports_textual(pi_a: PiHome) -> None:
    pi_a.server.enqueue(Turn([Text("ok")]))
    run = pi_a.run("--no-session", "-p", "hi", PYTHONPROFILEIMPORTTIME="1")
    assert run.returncode == 0
    imported = {line.split("|")[-1].strip() for line in run.stderr.splitlines() if line.startswith("import time:")}
    assert "pi_coder.modes.print_mode" in imported
    top = {name.split(".")[0] for name in imported}
    assert not top & {"textual", "typer", "rich", "anthropic", "openai", "click"}, top & {"textual", "typer", "rich"}


def test_help_imports_no_textual_or_providers(pi_a: PiHome) -> None:
    run = pi_a.run("--help", PYTHONPROFILEIMPORTTIME="1")
    imported = {line.split("|")[-1].strip() for line in run.stderr.splitlines() if line.startswith("import time:")}
    assert "typer" in imported
    assert not {m for m in imported if m.startswith(("textual", "pi_coder.ai.providers", "httpx"))}


def test_interactive_is_not_started_when_stdout_is_piped_with_empty_stdin(pi_a: PiHome) -> None:
    """Non-terminal stdin means print mode (Pi), so a script never hangs in the TUI."""
    run = pi_a.run(input=b"")
    assert "Nothing to do" in _one_line_error(run)


def test_session_of_another_folder_is_forked_here(pi_a: PiHome, tmp_path: Path) -> None:
    pi_a.server.enqueue(Turn([Text("from elsewhere")]), Turn([Text("continued here")]))
    other = tmp_path / "other-project"
    other.mkdir()
    assert pi_a.run("-p", "asked elsewhere", cwd=other).returncode == 0
    [source] = pi_a.session_files()
    session_id = json.loads(source.read_text().splitlines()[0])["id"]
    run = pi_a.run("--session", session_id[:8], "-p", "asked here")
    assert run.returncode == 0, run.stderr
    assert "forking" in run.stderr
    assert user_texts(pi_a.server.requests[1].json) == ["asked elsewhere", "asked here"]
    forked = [p for p in pi_a.session_files() if p != source]
    assert len(forked) == 1
    header = json.loads(forked[0].read_text().splitlines()[0])
    assert header["cwd"] == str(pi_a.project) and header["parentSession"] == str(source)


def test_tools_flags_choose_the_declared_tools(pi_a: PiHome) -> None:
    pi_a.server.enqueue(Turn([Text("a")]), Turn([Text("b")]), Turn([Text("c")]))
    assert pi_a.run("--no-session", "-p", "x").returncode == 0
    assert pi_a.run("--no-session", "--tools", "read,ls,bogus", "-p", "x").returncode == 0
    run = pi_a.run("--no-session", "--no-tools", "-p", "x")
    assert run.returncode == 0
    names = [sorted(t["name"] for t in r.json.get("tools", [])) for r in pi_a.server.requests]
    assert names == [["bash", "edit", "read", "task", "write"], ["ls", "read"], []]


def test_unknown_provider(pi_a: PiHome) -> None:
    line = _one_line_error(pi_a.run("--provider", "nowhere", "--model", "x", "-p", "hi"))
    assert 'Unknown provider "nowhere"' in line


def test_provider_alone_picks_its_model(pi_a: PiHome) -> None:
    pi_a.server.enqueue(Turn([Text("ok")]))
    run = pi_a.run("--provider", "local", "--no-session", "-p", "hi")
    assert run.returncode == 0, run.stderr
    assert pi_a.server.requests[0].json["model"] == "test-model"
