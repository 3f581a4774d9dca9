"""Export a session as one self-contained HTML page (``pi --export``, the TUI's ``/export``).

The page shows the current branch of the session: user and assistant messages, thinking
(collapsed in ``<details>``), each tool call with its result (edit diffs coloured, long output
collapsed), user shell commands, compaction and branch summaries, and model changes. Styles
are inline, images are data URIs, and there is no script, so the file can be mailed or
archived as is. Rendering works on the JSON form of the entries, so files written by Pi or by
any version of pi_coder render the same way.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from html import escape
from pathlib import Path
from typing import Any

from pi_coder.core import transcript as tx
from pi_coder.session.store import SessionStore

__all__ = ["default_export_path", "export_session_html", "export_store_html", "render_session_html"]

_COLLAPSE_LINES = 20

_CSS = """
:root { --bg:#fafafa; --fg:#1f2328; --muted:#656d76; --card:#fff; --border:#d0d7de; --user:#eef4ff;
  --add:#1a7f37; --add-bg:#e6ffec; --del:#cf222e; --del-bg:#ffebe9; --code:#f6f8fa; --err:#cf222e; }
@media (prefers-color-scheme: dark) { :root { --bg:#0d1117; --fg:#e6edf3; --muted:#8d96a0; --card:#161b22;
  --border:#30363d; --user:#172033; --add:#3fb950; --add-bg:#12261e; --del:#f85149; --del-bg:#2d1517;
  --code:#1c2128; --err:#f85149; } }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--fg);
  font:15px/1.55 -apple-system,BlinkMacSystemFont,"Segoe UI",Helvetica,Arial,sans-serif; }
main { max-width:900px; margin:0 auto; padding:24px 16px 64px; }
header h1 { font-size:1.35em; margin:0 0 4px; word-break:break-word; }
.meta { color:var(--muted); font-size:.85em; margin-bottom:20px; }
.meta span { margin-right:14px; }
.msg { background:var(--card); border:1px solid var(--border); border-radius:8px; padding:10px 14px; margin:12px 0; }
.msg.user { background:var(--user); }
.role { font-size:.75em; text-transform:uppercase; letter-spacing:.05em; color:var(--muted); margin-bottom:4px; }
.text { white-space:pre-wrap; word-wrap:break-word; }
pre { background:var(--code); border:1px solid var(--border); border-radius:6px; padding:8px 10px; margin:6px 0;
  overflow-x:auto; font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace; white-space:pre; }
code { font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace; font-size:.92em; }
details > summary { cursor:pointer; color:var(--muted); }
.thinking pre { white-space:pre-wrap; color:var(--muted); }
.tool { border-left:3px solid var(--border); padding:4px 0 4px 10px; margin:8px 0; }
.tool .name { font-weight:600; font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace; }
.tool.error { border-left-color:var(--err); }
.tool.error .result pre { color:var(--err); }
.diff .add { color:var(--add); background:var(--add-bg); display:block; }
.diff .del { color:var(--del); background:var(--del-bg); display:block; }
.note { color:var(--muted); font-size:.85em; text-align:center; margin:10px 0; }
.error-text { color:var(--err); white-space:pre-wrap; }
img { max-width:100%; border-radius:6px; border:1px solid var(--border); }
"""


def default_export_path(
    session_file: str | os.PathLike[str], cwd: str | os.PathLike[str] | None = None
) -> Path:
    """``pi-session-<file name without .jsonl>.html`` in ``cwd`` (Pi's default)."""
    stem = Path(session_file).name.removesuffix(".jsonl")
    return Path(cwd if cwd is not None else os.getcwd()) / f"pi-session-{stem}.html"


def export_session_html(
    session_file: str | os.PathLike[str],
    output: str | os.PathLike[str] | None = None,
    *,
    cwd: str | os.PathLike[str] | None = None,
) -> Path:
    """Write ``session_file`` as HTML.

    Args:
        session_file: A session JSONL file (any version; it is opened like ``--session`` would).
        output: The HTML file; default :func:`default_export_path`.
        cwd: Folder for the default output path; default the process's.

    Returns:
        The path written.

    Raises:
        UserError: The file is not a session file (``InvalidSessionFileError``).
        OSError: The output cannot be written.
    """
    store = SessionStore.open(session_file)
    target = Path(output) if output is not None else default_export_path(session_file, cwd)
    return export_store_html(store, target)


def export_store_html(store: SessionStore, output: str | os.PathLike[str]) -> Path:
    """Write the current branch of ``store`` to ``output`` (parents created); returns the path."""
    path = Path(output).expanduser().absolute()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_session_html(store), encoding="utf-8")
    return path


def render_session_html(store: SessionStore) -> str:
    """The HTML page for the current branch of ``store``."""
    header = store.header
    entries = [entry.to_json_dict() for entry in store.get_branch()]
    results = _tool_results(entries)
    body: list[str] = []
    models: list[str] = []
    for entry in entries:
        try:
            body.append(_render_entry(entry, results, models))
        except (TypeError, ValueError, AttributeError, KeyError):  # a hand-edited or damaged entry
            body.append('<div class="note">(an entry of this session could not be read)</div>')
    title = store.name or _first_user_text(entries) or "Session"
    return "".join(
        [
            '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n',
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
            f"<title>{escape(_shorten(title, 80))}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n<main>\n",
            "<header>",
            f"<h1>{escape(_shorten(title, 200))}</h1>",
            _meta(header.id, header.cwd, header.timestamp, models, entries),
            "</header>\n",
            "\n".join(part for part in body if part),
            "\n</main>\n</body>\n</html>\n",
        ]
    )


# ---------------------------------------------------------------------------- pieces


def _shorten(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _first_user_text(entries: Iterable[Mapping[str, Any]]) -> str | None:
    for entry in entries:
        message = entry.get("message")
        if entry.get("type") == "message" and isinstance(message, Mapping) and message.get("role") == "user":
            text = _plain_text(message.get("content"))
            if text.strip():
                return text
    return None


def _plain_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", "")) for b in content if isinstance(b, Mapping) and b.get("type") == "text"
        )
    return ""


def _tool_results(entries: Iterable[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    found: dict[str, Mapping[str, Any]] = {}
    for entry in entries:
        message = entry.get("message")
        if isinstance(message, Mapping) and message.get("role") == "toolResult":
            found[str(message.get("toolCallId"))] = message
    return found


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _meta(
    session_id: str, cwd: str, created: str, models: list[str], entries: Sequence[Mapping[str, Any]]
) -> str:
    tokens_in = tokens_out = 0
    cost = 0.0
    for entry in entries:
        message = entry.get("message")
        usage = message.get("usage") if isinstance(message, Mapping) else None
        if isinstance(usage, Mapping):
            tokens_in += int(_number(usage.get("input")) + _number(usage.get("cacheRead")))
            tokens_out += int(_number(usage.get("output")))
            total = usage.get("cost", {}).get("total") if isinstance(usage.get("cost"), Mapping) else None
            cost += _number(total)
    parts = [
        f"<span>Session {escape(session_id)}</span>",
        f"<span>{escape(cwd)}</span>",
        f"<span>{escape(_when(created))}</span>",
    ]
    if models:
        parts.append(f"<span>{escape(', '.join(dict.fromkeys(models)))}</span>")
    if tokens_in or tokens_out:
        parts.append(f"<span>{tokens_in:,} in / {tokens_out:,} out tokens</span>")
    if cost:
        parts.append(f"<span>${cost:.4f}</span>")
    return f'<div class="meta">{"".join(parts)}</div>'


def _when(iso: str) -> str:
    try:
        return datetime.fromisoformat(iso.replace("Z", "+00:00")).astimezone().strftime("%Y-%m-%d %H:%M")
    except (ValueError, AttributeError):
        return str(iso)


def _render_entry(
    entry: Mapping[str, Any], results: Mapping[str, Mapping[str, Any]], models: list[str]
) -> str:
    kind = entry.get("type")
    if kind == "message":
        message = entry.get("message")
        return _render_message(message, results, models) if isinstance(message, Mapping) else ""
    if kind == "model_change":
        name = f"{entry.get('provider')}/{entry.get('modelId')}"
        models.append(name)
        return f'<div class="note">Model: {escape(name)}</div>'
    if kind == "thinking_level_change":
        return f'<div class="note">Thinking: {escape(str(entry.get("thinkingLevel")))}</div>'
    if kind == "compaction":
        return _summary_block("Compaction summary", str(entry.get("summary", "")), entry.get("tokensBefore"))
    if kind == "branch_summary":
        return _summary_block("Branch summary", str(entry.get("summary", "")), None)
    if kind == "custom_message" and entry.get("display", True):
        return _block("custom", str(entry.get("customType", "custom")), _content_html(entry.get("content")))
    return ""


def _block(css: str, role: str, inner: str) -> str:
    return f'<div class="msg {css}"><div class="role">{escape(role)}</div>{inner}</div>'


def _summary_block(title: str, summary: str, tokens: Any) -> str:
    label = f"{title} ({int(tokens):,} tokens before)" if isinstance(tokens, int) else title
    return (
        f'<div class="msg summary"><details><summary>{escape(label)}</summary>'
        + _text(summary)
        + "</details></div>"
    )


def _text(text: str) -> str:
    """Escaped text with ``` fenced blocks as <pre>."""
    out: list[str] = []
    chunks = text.split("```")
    for index, chunk in enumerate(chunks):
        if index % 2 == 1 and index < len(chunks) - 1:
            _, newline, code = chunk.partition("\n")
            out.append(f"<pre><code>{escape(code if newline else chunk)}</code></pre>")
        elif chunk.strip():
            joined = chunk if index % 2 == 0 else "```" + chunk
            out.append(f'<div class="text">{escape(joined.strip(chr(10)))}</div>')
    return "".join(out)


def _image(block: Mapping[str, Any]) -> str:
    mime = str(block.get("mimeType", "image/png"))
    if not mime.startswith("image/"):
        return ""
    return f'<img alt="image" src="data:{escape(mime)};base64,{escape(str(block.get("data", "")))}">'


def _content_html(content: Any) -> str:
    if isinstance(content, str):
        return _text(content)
    parts: list[str] = []
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, Mapping):
            continue
        if block.get("type") == "text":
            parts.append(_text(str(block.get("text", ""))))
        elif block.get("type") == "image":
            parts.append(_image(block))
    return "".join(parts)


def _render_message(
    message: Mapping[str, Any], results: Mapping[str, Mapping[str, Any]], models: list[str]
) -> str:
    if message.get("role") == "assistant":
        return _render_assistant(message, results, models)
    parts: list[str] = []
    for block in tx.message_blocks(message, results):  # tool results show under their call
        match block:
            case tx.UserBlock(content=content):
                parts.append(_block("user", "user", _content_html(content)))
            case tx.BashBlock(message=bash):
                parts.append(_render_bash(bash))
            case tx.CustomBlock(custom_type=custom_type, content=content):
                parts.append(_block("custom", custom_type, _content_html(content)))
            case tx.SummaryBlock(kind=kind, summary=summary, tokens_before=tokens):
                title = "Compaction summary" if kind == "compaction" else "Branch summary"
                parts.append(_summary_block(title, summary, tokens))
    return "".join(parts)


def _render_assistant(
    message: Mapping[str, Any], results: Mapping[str, Mapping[str, Any]], models: list[str]
) -> str:
    name = f"{message.get('provider')}/{message.get('model')}"
    if message.get("provider"):
        models.append(name)
    parts: list[str] = []
    for block in tx.message_blocks(message, results):
        match block:
            case tx.AssistantTextBlock(text=text):
                parts.append(_text(text))
            case tx.ThinkingBlock(text=text, redacted=redacted):
                text = "[redacted]" if redacted else text
                parts.append(
                    f'<details class="thinking"><summary>Thinking</summary><pre>{escape(text)}</pre></details>'
                )
            case tx.ToolBlock():
                parts.append(_render_tool(block))
            case tx.NoticeBlock(stop_reason=reason, error_message=error) if reason in ("error", "aborted"):
                parts.append(f'<div class="error-text">{escape(error or f"Request {reason}")}</div>')
    return _block("assistant", f"assistant · {name}" if message.get("model") else "assistant", "".join(parts))


def _args_summary(tool: str, args: Mapping[str, Any]) -> str:
    if tool == "bash" and "command" in args:
        return f"$ {args['command']}"
    if "path" in args:
        extra = [f"{k}={args[k]}" for k in ("offset", "limit", "pattern") if k in args]
        return " ".join([str(args["path"]), *extra])
    if "pattern" in args:
        return str(args["pattern"])
    return json.dumps(dict(args), ensure_ascii=False)


def _render_tool(call: tx.ToolBlock) -> str:
    tool, args, result = call.name, call.args, call.result
    is_error = result.is_error if result is not None else False
    head = f'<div class="name">{escape(tool)} <code>{escape(_shorten(_args_summary(tool, args), 300))}</code></div>'
    body: list[str] = []
    if tool == "write" and isinstance(args.get("content"), str):
        body.append(_collapsible("content", args["content"]))
    details = result.details if result is not None else None
    diff = details.get("diff") if isinstance(details, Mapping) else None
    if isinstance(diff, str) and diff and not is_error:
        body.append(_diff(diff))
    elif result is not None:
        text = _plain_text(result.content)
        blocks = result.content
        images = (
            [b for b in blocks if isinstance(b, Mapping) and b.get("type") == "image"]
            if isinstance(blocks, list)
            else []
        )
        if text:
            body.append(f'<div class="result">{_collapsible("output", text)}</div>')
        body.extend(_image(b) for b in images)
    else:
        body.append('<div class="note">(no result)</div>')
    css = "tool error" if is_error else "tool"
    return f'<div class="{css}">{head}{"".join(body)}</div>'


def _collapsible(label: str, text: str) -> str:
    lines = text.count("\n") + 1
    pre = f"<pre>{escape(text)}</pre>"
    if lines <= _COLLAPSE_LINES:
        return pre
    return f"<details><summary>{escape(label)} ({lines} lines)</summary>{pre}</details>"


def _diff(diff: str) -> str:
    rows: list[str] = []
    for line in diff.split("\n"):
        css = "add" if line.startswith("+") else "del" if line.startswith("-") else ""
        rows.append(f'<span class="{css}">{escape(line)}</span>' if css else escape(line) + "\n")
    return f'<pre class="diff">{"".join(rows)}</pre>'


def _render_bash(message: Mapping[str, Any]) -> str:
    command = str(message.get("command", ""))
    output = str(message.get("output", ""))
    code = message.get("exitCode")
    status = (
        " (cancelled)" if message.get("cancelled") else f" (exit {code})" if code not in (0, None) else ""
    )
    head = f'<div class="name">$ {escape(command)}{escape(status)}</div>'
    css = "tool error" if status and not message.get("cancelled") else "tool"
    inner = f'<div class="{css}">{head}{_collapsible("output", output) if output else ""}</div>'
    return _block("bash", "user shell" + (" (not sent)" if message.get("excludeFromContext") else ""), inner)
