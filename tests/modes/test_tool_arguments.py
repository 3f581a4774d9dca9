"""The real ``pi -p``: a tool call whose arguments end as invalid JSON is refused, not run truncated."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.modes.pirun import PiHome
from tests.support.sse_server import SSEServer, Text, ToolCall, Turn


@pytest.fixture(params=["anthropic", "openai"])
def pi(request: pytest.FixtureRequest, tmp_path: Path, sse_server: SSEServer) -> PiHome:
    return PiHome(tmp_path, sse_server, request.param)


def _tool_results(request_json: dict) -> list[tuple[str, bool]]:
    """(text, marked as error) of each tool result a request carries, in either wire format."""
    results = []
    for message in request_json.get("messages", []):
        if message.get("role") == "tool":  # OpenAI has no error flag on the wire
            results.append((message["content"], True))
        elif isinstance(message.get("content"), list):  # Anthropic
            for block in message["content"]:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    results.append((block["content"], block.get("is_error") is True))
    return results


@pytest.mark.parametrize(
    ("tool", "raw", "witness"),
    [
        ("write", '{"path": "out.txt", "content": "the first half of a fi', "out.txt"),
        ("bash", '{"command": "touch ran.txt && echo do not run the rest of thi', "ran.txt"),
        ("edit", '{"path": "keep.txt", "edits": [{"oldText": "keep", "newText": "trunc', None),
    ],
)
def test_truncated_arguments_are_not_run_and_the_model_is_told(
    pi: PiHome, tool: str, raw: str, witness: str | None
) -> None:
    (pi.project / "keep.txt").write_text("keep me\n")
    pi.server.enqueue(
        Turn([Text("On it."), ToolCall(tool, raw, id="call_1")]),  # stop reason: tool use
        Turn([Text("Let me retry.")]),
    )
    run = pi.run("-p", "do it")
    assert run.returncode == 0, run.stderr
    assert "Let me retry." in run.stdout
    if witness is not None:
        assert not (pi.project / witness).exists()
    assert (pi.project / "keep.txt").read_text() == "keep me\n"
    assert len(pi.server.requests) == 2
    ((result, is_error),) = _tool_results(pi.server.requests[1].json)
    assert result.startswith(f'Invalid arguments for tool "{tool}": the arguments are not valid JSON (')
    assert "The tool was not executed" in result and is_error
