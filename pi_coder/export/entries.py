"""One ``<article>`` per session entry, read through the transcript block model.

Every piece of session text is escaped (Markdown is rendered with raw HTML off). Tool calls and
thinking are ``<details>`` (closed); an assistant message ends with its model, tokens and cost.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from html import escape
from typing import Any

from pi_coder.core import transcript as tx
from pi_coder.export.markup import code_html, markdown_html

__all__ = ["EntryView", "lazy", "render_entry", "shorten"]

_BASE64 = re.compile(r"^[A-Za-z0-9+/=\s]*$")
_SCRIPT_END = re.compile(r"</(script)|<!--", re.IGNORECASE)


def lazy(html: str) -> str:
    """``html`` kept as inert text until the page's script shows it (the browser does not build
    elements for it on load, which keeps a large page fast to open)."""
    safe = _SCRIPT_END.sub(lambda m: "&lt;/" + m.group(1) if m.group(1) else "&lt;!--", html)
    return f'<script type="text/x-pi-lazy">{safe}</script>'


@dataclass(frozen=True, slots=True)
class EntryView:
    kind: str
    """CSS class of the article: user, assistant, bash, summary, custom, note; "" for none."""
    body: str
    """The article's inner HTML; "" when the entry shows nothing (labels, tool results, ...)."""
    label: str
    """A one-line preview for the tree; "" when the entry has no row there."""


def shorten(text: str, width: int) -> str:
    """One line of at most ``width`` characters (code fences and backticks dropped)."""
    flat = " ".join(text.replace("```", " ").replace("`", "").split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _when(iso: Any) -> str:
    try:
        return (
            datetime.fromisoformat(str(iso).replace("Z", "+00:00")).astimezone().strftime("%Y-%m-%d %H:%M:%S")
        )
    except ValueError:
        return ""


def _head(role: str, timestamp: Any, extra: str = "") -> str:
    when = _when(timestamp)
    stamp = f"<time>{escape(when)}</time>" if when else ""
    return f'<div class="role"><span>{escape(role)}</span>{extra}{stamp}</div>'


def render_entry(entry: Mapping[str, Any], results: Mapping[str, Any]) -> EntryView:
    """The view of one entry (JSON form); tool results come from ``results`` by call id."""
    kind = entry.get("type")
    stamp = entry.get("timestamp")
    if kind == "message":
        message = entry.get("message")
        return _message(message, results, stamp) if isinstance(message, Mapping) else EntryView("", "", "")
    if kind == "model_change":
        name = f"{entry.get('provider')}/{entry.get('modelId')}"
        return EntryView("note", f"Model: {escape(name)}", f"model {name}")
    if kind == "thinking_level_change":
        level = str(entry.get("thinkingLevel"))
        return EntryView("note", f"Thinking level: {escape(level)}", f"thinking {level}")
    if kind == "compaction":
        summary = str(entry.get("summary", ""))
        return EntryView(
            "summary", _summary("Compaction summary", summary, entry.get("tokensBefore"), stamp), "compaction"
        )
    if kind == "branch_summary":
        summary = str(entry.get("summary", ""))
        return EntryView("summary", _summary("Branch summary", summary, None, stamp), "branch summary")
    if kind == "custom_message" and entry.get("display", True):
        custom = str(entry.get("customType", "custom"))
        text = tx.content_text(entry.get("content"))
        body = _head(custom, stamp) + f'<div class="md">{_content(entry.get("content"), breaks=True)}</div>'
        return EntryView("custom", body, f"[{custom}] {text}")
    return EntryView("", "", "")


def _summary(title: str, summary: str, tokens: Any, stamp: Any) -> str:
    label = f"{title} ({int(tokens):,} tokens before)" if isinstance(tokens, int) else title
    return (
        _head(title, stamp)
        + f'<details class="sum"><summary>{escape(label)}</summary><div class="md">{markdown_html(summary)}</div></details>'
    )


def _image(block: Mapping[str, Any]) -> str:
    mime = str(block.get("mimeType", block.get("mime_type", "image/png")))
    data = str(block.get("data", ""))
    if not re.fullmatch(r"image/[A-Za-z0-9.+-]+", mime) or not _BASE64.match(data):
        return '<div class="note">(an image that could not be shown)</div>'
    return f'<img alt="image" src="data:{mime};base64,{data}">'


def _content(content: Any, *, breaks: bool) -> str:
    if isinstance(content, str):
        return markdown_html(content, breaks=breaks)
    parts: list[str] = []
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, Mapping):
            continue
        if block.get("type") == "text":
            parts.append(markdown_html(str(block.get("text", "")), breaks=breaks))
        elif block.get("type") == "image":
            parts.append(_image(block))
    return "".join(parts)


def _message(message: Mapping[str, Any], results: Mapping[str, Any], stamp: Any) -> EntryView:
    role = message.get("role")
    if role == "assistant":
        return _assistant(message, results, stamp)
    for block in tx.message_blocks(message, results):
        match block:
            case tx.UserBlock(text=text, content=content):
                body = _head("User", stamp) + f'<div class="md">{_content(content, breaks=True)}</div>'
                return EntryView("user", body, text or "(image)")
            case tx.BashBlock():
                return _bash(block, stamp)
            case tx.CustomBlock(custom_type=custom_type, text=text, content=content):
                body = _head(custom_type, stamp) + f'<div class="md">{_content(content, breaks=True)}</div>'
                return EntryView("custom", body, f"[{custom_type}] {text}")
            case tx.SummaryBlock(kind=kind, summary=summary, tokens_before=tokens):
                title = "Compaction summary" if kind == "compaction" else "Branch summary"
                return EntryView("summary", _summary(title, summary, tokens, stamp), title.lower())
    return EntryView("", "", "")  # a tool result: shown under its call


def _usage(message: Mapping[str, Any]) -> str:
    parts: list[str] = []
    if message.get("model"):
        parts.append(
            f'<span class="model">{escape(str(message.get("provider", "")))}/{escape(str(message["model"]))}</span>'
        )
    usage = message.get("usage")
    if isinstance(usage, Mapping):
        names = (
            ("input", "in"),
            ("output", "out"),
            ("cacheRead", "cache read"),
            ("cacheWrite", "cache write"),
        )
        for key, name in names:
            count = int(_number(usage.get(key)))
            if count:
                parts.append(f"<span>{count:,} {name}</span>")
        cost = usage.get("cost")
        total = _number(cost.get("total")) if isinstance(cost, Mapping) else 0.0
        if total:
            parts.append(f'<span class="cost">${total:.4f}</span>')
    stop = message.get("stopReason")
    if isinstance(stop, str) and stop not in ("stop", "toolUse"):
        parts.append(f"<span>{escape(stop)}</span>")
    return f'<footer class="meta">{"".join(parts)}</footer>' if parts else ""


def _assistant(message: Mapping[str, Any], results: Mapping[str, Any], stamp: Any) -> EntryView:
    parts: list[str] = []
    label_text: list[str] = []
    tools: list[str] = []
    for block in tx.message_blocks(message, results):
        match block:
            case tx.AssistantTextBlock(text=text):
                parts.append(f'<div class="md">{markdown_html(text)}</div>')
                label_text.append(text)
            case tx.ThinkingBlock(text=text, redacted=redacted):
                inner = '<p class="dim">[redacted thinking]</p>' if redacted else markdown_html(text)
                parts.append(
                    f'<details class="thinking"><summary>Thinking</summary><div class="md">{inner}</div></details>'
                )
            case tx.ToolBlock():
                parts.append(_tool(block))
                tools.append(block.name)
            case tx.NoticeBlock(text=text, level=level):
                parts.append(f'<div class="notice {escape(level)}">{escape(text)}</div>')
                label_text = label_text or [text]
    label = " ".join(label_text) or ("→ " + ", ".join(tools) if tools else "(no text)")
    return EntryView("assistant", _head("Assistant", stamp) + "".join(parts) + _usage(message), label)


def _args_summary(tool: str, args: Mapping[str, Any]) -> str:
    if tool == "bash" and "command" in args:
        return f"$ {args['command']}"
    if "path" in args:
        extra = [f"{k}={args[k]}" for k in ("offset", "limit", "pattern") if k in args]
        return " ".join([str(args["path"]), *extra])
    if "pattern" in args:
        return str(args["pattern"])
    return json.dumps(dict(args), ensure_ascii=False)


def _tool(call: tx.ToolBlock) -> str:
    tool, args, result = call.name, call.args, call.result
    state = "pending" if result is None else "err" if result.is_error else "ok"
    lines = result.text.count("\n") + 1 if result is not None and result.text else 0
    status = {"pending": "no result", "err": "error", "ok": "ok"}[state]
    if lines:
        status += f" · {lines:,} line{'s' if lines != 1 else ''}"
    head = (
        f'<summary><span class="tn">{escape(tool)}</span> <code>{escape(shorten(_args_summary(tool, args), 160))}</code>'
        f'<span class="ts">{escape(status)}</span></summary>'
    )
    body: list[str] = []
    if tool == "write" and isinstance(args.get("content"), str):
        body.append(f'<div class="lbl">{escape(str(args.get("path", "")))}</div>')
        body.append(code_html(args["content"], filename=str(args.get("path", ""))))
        rest = {k: v for k, v in args.items() if k != "content"}
    else:
        rest = dict(args)
    body.append(
        f'<div class="lbl">arguments</div><pre class="args">{escape(json.dumps(rest, ensure_ascii=False, indent=2))}</pre>'
    )
    if result is not None:
        details = result.details
        diff = details.get("diff") if isinstance(details, Mapping) else None
        body.append('<div class="lbl">result</div>')
        if isinstance(diff, str) and diff and not result.is_error:
            body.append(_diff(diff))
        elif tool == "read" and not result.is_error and "path" in args:
            body.append(code_html(result.text, filename=str(args["path"])))
        else:
            body.append(f'<pre class="out">{escape(result.text)}</pre>')
        content = result.content
        if isinstance(content, list):
            body.extend(_image(b) for b in content if isinstance(b, Mapping) and b.get("type") == "image")
    return f'<details class="tool {state}">{head}<div class="tb">{"".join(body)}</div></details>'


def _diff(diff: str) -> str:
    rows: list[str] = []
    for line in diff.split("\n"):
        css = "add" if line.startswith("+") else "del" if line.startswith("-") else ""
        rows.append(f'<span class="{css}">{escape(line)}</span>' if css else escape(line) + "\n")
    return f'<pre class="diff">{"".join(rows)}</pre>'


def _bash(block: tx.BashBlock, stamp: Any) -> EntryView:
    status = (
        " (cancelled)"
        if block.cancelled
        else f" (exit {block.exit_code})"
        if block.exit_code not in (0, None)
        else ""
    )
    role = "User shell" + (" (not sent)" if block.exclude_from_context else "")
    body = (
        _head(role, stamp)
        + f'<div class="cmd">$ {escape(block.command)}{escape(status)}</div>'
        + (f'<pre class="out">{escape(block.output)}</pre>' if block.output else "")
    )
    return EntryView("bash", body, f"$ {block.command}")
