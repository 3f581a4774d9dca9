"""``pi_coder.core.export_html``: a self-contained page of the session's current branch."""

from __future__ import annotations

import re
from pathlib import Path

from pi_coder.ai.types import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from pi_coder.core.export_html import default_export_path, export_session_html, render_session_html
from pi_coder.session import BashExecutionMessage, SessionStore


def _store(tmp_path: Path) -> SessionStore:
    store = SessionStore.create(str(tmp_path), tmp_path / "sessions")
    store.append_model_change("local", "test-model")
    store.append_message(
        UserMessage(content=[TextContent(text="Fix <script>alert(1)</script> please"), ImageContent(data="AAAA", mime_type="image/png")])
    )
    store.append_message(
        AssistantMessage(
            content=[
                ThinkingContent(thinking="secret plan"),
                TextContent(text="Editing:\n```python\nx = 1 < 2\n```\ndone"),
                ToolCall(id="c1", name="edit", arguments={"path": "a.py", "edits": []}),
                ToolCall(id="c2", name="bash", arguments={"command": "ls"}),
            ],
            api="anthropic-messages",
            provider="local",
            model="test-model",
            stop_reason="toolUse",
        )
    )
    store.append_message(
        ToolResultMessage(
            tool_call_id="c1",
            tool_name="edit",
            content=[TextContent(text="Edited a.py")],
            details={"diff": " 1 keep\n-2 old line\n+2 new line"},
        )
    )
    store.append_message(
        ToolResultMessage(
            tool_call_id="c2",
            tool_name="bash",
            content=[TextContent(text="\n".join(f"file{i}" for i in range(40)))],
            is_error=True,
        )
    )
    store.append_message(BashExecutionMessage(command="git status", output="clean", exit_code=0))
    store.append_message(
        AssistantMessage(api="x", provider="local", model="test-model", stop_reason="error", error_message="overloaded")
    )
    return store


def test_page_contents(tmp_path: Path) -> None:
    html = render_session_html(_store(tmp_path))
    assert html.startswith("<!DOCTYPE html>") and "<script" not in html
    assert "Fix &lt;script&gt;alert(1)&lt;/script&gt; please" in html
    assert 'src="data:image/png;base64,AAAA"' in html
    assert re.search(r"<details class=\"thinking\"><summary>Thinking</summary><pre>secret plan</pre></details>", html)
    assert "<pre><code>x = 1 &lt; 2\n</code></pre>" in html
    assert '<span class="del">-2 old line</span><span class="add">+2 new line</span>' in html
    assert '<div class="tool error">' in html and "output (40 lines)" in html  # long output collapsed
    assert "$ git status" in html and "clean" in html
    assert "overloaded" in html and "local/test-model" in html
    assert "http" not in html.replace("http-equiv", "")  # self-contained: nothing fetched


def test_export_file_and_default_name(tmp_path: Path) -> None:
    store = _store(tmp_path)
    session_file = store.session_file
    assert session_file is not None and session_file.exists()
    out = export_session_html(session_file, tmp_path / "deep" / "page.html")
    assert out == tmp_path / "deep" / "page.html" and "git status" in out.read_text()
    default = export_session_html(session_file, cwd=tmp_path)
    assert default == default_export_path(session_file, tmp_path)
    assert default.name == f"pi-session-{session_file.stem}.html"
