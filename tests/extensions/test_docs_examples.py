"""Every ```python block of docs/extensions.md loads in a real ``pi`` and does what its check says."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.modes.pirun import PiHome, RpcClient
from tests.support.sse_server import Text, ToolCall, Turn

DOC = Path(__file__).resolve().parents[2] / "docs" / "extensions.md"
BLOCK = re.compile(r"<!-- check: (\{.*?\}) -->\n```python\n(.*?)```", re.S)


def _examples() -> list[tuple[str, dict[str, Any], str]]:
    text = DOC.read_text(encoding="utf-8")
    found = [(json.loads(check), code) for check, code in BLOCK.findall(text)]
    assert len(found) == text.count("```python"), "every python block needs a check comment"
    return [(f"ex{i:02d}", check, code) for i, (check, code) in enumerate(found)]


EXAMPLES = _examples()


def _turn(spec: list[Any]) -> Turn:
    return Turn([ToolCall(spec[1], spec[2])]) if spec[0] == "tool" else Turn([Text(spec[1])])


@pytest.mark.parametrize(("name", "check", "code"), EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_doc_example(pi: PiHome, name: str, check: dict[str, Any], code: str) -> None:
    if "replace_base_url" in check:
        code = code.replace(check["replace_base_url"], pi.server.openai_base_url)
    ext = pi.project / f"{name}.py"
    ext.write_text(code, encoding="utf-8")
    (pi.project / "hello.txt").write_text("hello-file-contents\n", encoding="utf-8")
    if "command" in check or "rpc" in check:
        client = RpcClient(pi, "--no-session", "-e", str(ext))
        try:
            commands = client.call({"type": "get_commands"})["data"]["commands"]
            if "rpc" in check:
                reply = client.call(check["rpc"])
                assert check["rpc_has"] in json.dumps(reply), reply
        finally:
            client.close()
        assert "failed in" not in (err := client.stderr()), err
        if "command" in check:
            assert check["command"] in [c["name"] for c in commands]
    if "prompt" not in check:
        return
    pi.server.enqueue(*[_turn(t) for t in check.get("turns", [])])
    run = pi.run("--no-session", "-e", str(ext), *check.get("args", []), "-p", check["prompt"])
    assert run.returncode == 0, run.stderr
    assert "failed in" not in run.stderr, run.stderr
    bodies = [json.dumps(r.json) for r in pi.server.requests]
    if "tool" in check or "no_tool" in check:
        names = [
            t.get("name") or t.get("function", {}).get("name") for t in pi.server.requests[0].json["tools"]
        ]
        if "tool" in check:
            assert check["tool"] in names
        if "no_tool" in check:
            assert check["no_tool"] not in names
    if "request_has" in check:
        assert any(check["request_has"] in body for body in bodies), bodies
    if "stdout_has" in check:
        assert check["stdout_has"] in run.stdout
    if "stderr_has" in check:
        assert check["stderr_has"] in run.stderr
