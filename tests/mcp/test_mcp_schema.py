"""Arguments are checked against an MCP tool's whole input schema before the call (as Pi 1.6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_coder.mcp.schema import check_arguments
from pi_coder.mcp.tools import params_model
from tests.mcp.conftest import tiny, write_mcp
from tests.mcp.test_mcp_e2e import result_text, script_call
from tests.modes.pirun import PiHome
from tests.support.sse_server import SSEServer

SCHEMA = {
    "type": "object",
    "properties": {
        "count": {"type": "integer", "minimum": 1},
        "ratio": {"type": "number"},
        "flag": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "mode": {"type": "string", "enum": ["fast", "slow"]},
        "note": {"type": "string"},
        "opts": {"type": "object", "properties": {"depth": {"type": "integer"}}},
    },
    "required": ["count"],
}


def test_types_are_checked_and_loose_values_mended() -> None:
    mended, problems = check_arguments(
        SCHEMA, {"count": "3", "ratio": "0.5", "flag": "true", "tags": "one", "note": None, "opts": '{"depth": "2"}'}
    )
    assert problems == []
    assert mended == {"count": 3, "ratio": 0.5, "flag": True, "tags": ["one"], "opts": {"depth": 2}}
    _, problems = check_arguments(SCHEMA, {"count": 0, "mode": "medium", "tags": [{"a": 1}, "x"], "opts": {"depth": "deep"}})
    assert problems == [
        "count: 0 is less than the minimum of 1",
        "mode: 'medium' is not one of ['fast', 'slow']",
        "opts/depth: 'deep' is not of type 'integer'",
        "tags/0: {'a': 1} is not of type 'string'",
    ]
    _, problems = check_arguments(SCHEMA, {})
    assert problems == ["'count' is a required property"]


def test_the_params_model_raises_the_problems() -> None:
    model = params_model(SCHEMA, "mcp__s__t")
    assert model.model_validate({"count": "2"}).model_dump() == {"count": 2}
    with pytest.raises(ValueError, match="ratio: 'much' is not of type 'number'"):
        model.model_validate({"count": 2, "ratio": "much"})
    assert model.model_json_schema() == SCHEMA  # declared verbatim


@pytest.fixture
def pi(tmp_path: Path, sse_server: SSEServer) -> PiHome:
    home = PiHome(tmp_path, sse_server, "anthropic")
    (home.home / "settings.toml").write_text("[mcp]\nstartup_wait = 90\n", encoding="utf-8")
    return home


def test_a_mistyped_call_is_answered_to_the_model_without_calling(pi: PiHome, sse_server: SSEServer) -> None:
    write_mcp(pi.home / "mcp.json", {"tiny": tiny()})
    script_call(sse_server, "mcp__tiny__add", {"a": 2, "b": [3]})
    done = pi.run("-p", "add them")
    assert done.returncode == 0, done.stderr
    result = sse_server.requests[1].json["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and result.get("is_error") is True
    text = result_text(result)
    assert "b: [3] is not of type 'integer'" in text, text
    assert "Error executing tool" not in text  # answered before the server was called
