"""The ``openai-responses`` API: OpenAI's Responses endpoint (``POST {base}/responses``) over SSE.

Requests are stateless (``store: false``): the whole transcript is sent each turn, and
reasoning is carried across turns by asking for ``reasoning.encrypted_content`` and replaying
each reasoning item exactly as it arrived. The stored shapes are Pi 1.6's, so sessions move
between the two programs:

- a thinking block's ``thinkingSignature`` is the reasoning item as compact JSON (id, summary,
  encrypted content); its text is the reasoning summary (parts joined by a blank line);
- a text block's ``textSignature`` is ``{"v":1,"id":"msg_..."}`` (the output message id);
- a tool call's id is ``"<call_id>|<item id>"``; both halves go back on replay.

Usage: ``input_tokens`` includes ``cached_tokens`` (reported as ``cacheRead``, the rest as
``input``); ``output_tokens`` includes ``reasoning_tokens``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence

import jiter

from pi_coder.ai._sse import ServerSentEvent
from pi_coder.ai.context import get_current_system_message, get_current_tools, render_system_prompt
from pi_coder.ai.errors import ProviderConnectionError, ProviderResponseError
from pi_coder.ai.events import AssistantMessageEventStream
from pi_coder.ai.options import StreamOptions, resolve_cache_retention
from pi_coder.ai.providers._common import (
    StreamWriter,
    post_and_stream,
    provider_label,
    require_api_key,
    run_provider,
    wire_count,
    wire_object,
    wire_text,
)
from pi_coder.ai.transform import LlmMessage, transform_messages
from pi_coder.ai.types import (
    AssistantMessage,
    Context,
    ImageContent,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
)
from pi_coder.json_types import JsonObject, JsonValue

__all__ = ["build_payload", "stream"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
TOOL_IMAGES_TEXT = "Attached image(s) from tool result:"
_BAD_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")


def stream(
    model: Model, context: Context, options: StreamOptions | None = None
) -> AssistantMessageEventStream:
    """Stream one response from a Responses endpoint.

    Must be called inside a running event loop; returns at once and fills the stream from a
    task. Never raises: failures end the stream with an ``error`` event.

    Args:
        model: A model whose ``api`` is ``openai-responses``.
        context: The transcript (system messages carry the prompt and tool declarations).
        options: Key, signal, reasoning level, session id (the prompt cache key), timeouts.

    Returns:
        The event stream.
    """
    opts = options if options is not None else StreamOptions()
    return run_provider(model, opts, lambda writer: _run(writer, model, context, opts))


# ---------------------------------------------------------------------------- request


def _normalize_call_id(call_id: str, model: Model | None = None, source: AssistantMessage | None = None) -> str:
    """Another provider's tool-call id as a Responses ``call_id`` (64 safe characters)."""
    head = call_id.split("|", 1)[0]
    return _BAD_ID_CHARS.sub("_", head)[:64] or "call"


def _compact(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _image(image: ImageContent) -> JsonObject:
    return {
        "type": "input_image",
        "detail": "auto",
        "image_url": f"data:{image.mime_type};base64,{image.data}",
    }


def _user_item(content: str | Sequence[TextContent | ImageContent], model: Model) -> JsonObject | None:
    if isinstance(content, str):
        parts: list[JsonValue] = [{"type": "input_text", "text": content}] if content.strip() else []
    else:
        parts = []
        for block in content:
            if isinstance(block, TextContent):
                if block.text.strip():
                    parts.append({"type": "input_text", "text": block.text})
            elif isinstance(block, ImageContent):
                if "image" in model.input:
                    parts.append(_image(block))
                else:
                    parts.append(
                        {"type": "input_text", "text": "(image omitted: this model does not accept images)"}
                    )
    return {"role": "user", "content": parts} if parts else None


def _message_id(signature: str | None) -> str | None:
    if not signature:
        return None
    if signature.startswith("{"):
        try:
            data = json.loads(signature)
        except ValueError:
            return None
        value = data.get("id") if isinstance(data, dict) else None
        return value if isinstance(value, str) else None
    return signature if signature.startswith("msg") else None


def _assistant_items(message: AssistantMessage) -> list[JsonValue]:
    items: list[JsonValue] = []
    for block in message.content:
        if isinstance(block, ThinkingContent):
            signature = block.thinking_signature
            if signature and signature.startswith("{"):
                try:
                    item = json.loads(signature)
                except ValueError:
                    continue
                if isinstance(item, dict) and item.get("type") == "reasoning":
                    items.append(item)
        elif isinstance(block, TextContent):
            if not block.text.strip():
                continue
            item = {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": block.text, "annotations": []}],
                "status": "completed",
            }
            msg_id = _message_id(block.text_signature)
            if msg_id:
                item["id"] = msg_id
            items.append(item)
        elif isinstance(block, ToolCall):
            call_id, _, item_id = block.id.partition("|")
            call: JsonObject = {"type": "function_call"}
            if item_id.startswith("fc"):
                call["id"] = item_id
            call.update(call_id=call_id, name=block.name, arguments=_compact(block.arguments))
            items.append(call)
    return items


def convert_input(messages: Sequence[LlmMessage], model: Model) -> list[JsonValue]:
    """Pi messages (system messages excluded) as Responses ``input`` items."""
    out: list[JsonValue] = []
    images: list[JsonValue] = []
    for message in transform_messages(messages, model, _normalize_call_id):
        if message.role == "toolResult":
            text = "\n".join(b.text for b in message.content if isinstance(b, TextContent))
            shown = [
                _image(b) for b in message.content if isinstance(b, ImageContent) and "image" in model.input
            ]
            images.extend(shown)
            out.append(
                {
                    "type": "function_call_output",
                    "call_id": message.tool_call_id.split("|", 1)[0],
                    "output": text or ("(see attached image)" if shown else "(no output)"),
                }
            )
            continue
        if images:
            out.append(
                {"role": "user", "content": [{"type": "input_text", "text": TOOL_IMAGES_TEXT}, *images]}
            )
            images = []
        if message.role == "user":
            item = _user_item(message.content, model)
            if item is not None:
                out.append(item)
        elif message.role == "assistant":
            out.extend(_assistant_items(message))
    if images:
        out.append({"role": "user", "content": [{"type": "input_text", "text": TOOL_IMAGES_TEXT}, *images]})
    return out


def _effort(model: Model, level: str) -> str | None:
    """The ``reasoning.effort`` for a thinking level (None: send no reasoning field)."""
    level_map = model.thinking_level_map
    if level_map is not None and level in level_map:
        return level_map[level]
    if level == "off":
        return "none"
    if level == "max":
        return "xhigh"
    return level


def build_payload(model: Model, context: Context, options: StreamOptions) -> JsonObject:
    """The request body for ``context`` (Pi 1.6's field order).

    Args:
        model: Target model.
        context: The transcript.
        options: Stream options (reasoning, max_tokens, temperature, session_id).

    Returns:
        The JSON payload.
    """
    messages = list(context.messages)
    prompt = render_system_prompt(get_current_system_message(messages))
    tools = get_current_tools(messages)
    items = convert_input([m for m in messages if m.role != "system"], model)
    if prompt:
        items.insert(0, {"role": "developer" if model.reasoning else "system", "content": prompt})
    payload: JsonObject = {"model": model.id, "input": items, "stream": True}
    if options.session_id:
        payload["prompt_cache_key"] = options.session_id
    if (
        "api.openai.com" in (model.base_url or DEFAULT_BASE_URL)
        and resolve_cache_retention(options.cache_retention) == "long"
    ):
        payload["prompt_cache_retention"] = "24h"
    payload["store"] = False
    payload["max_output_tokens"] = options.max_tokens or model.max_tokens
    if options.temperature is not None:
        payload["temperature"] = options.temperature
    if tools:
        payload["tools"] = [
            {
                "type": "function",
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters or {"type": "object", "properties": {}},
            }
            for tool in tools
        ]
    if model.reasoning:
        level = options.reasoning or "off"
        effort = _effort(model, level)
        if effort is not None:
            if effort == "none":
                payload["reasoning"] = {"effort": "none"}
            else:
                payload["reasoning"] = {"effort": effort, "summary": "auto"}
                payload["include"] = ["reasoning.encrypted_content"]
    return payload


def _headers(model: Model, options: StreamOptions, key: str | None) -> dict[str, str]:
    headers = {"content-type": "application/json", "accept": "text/event-stream"}
    if key:
        headers["authorization"] = f"Bearer {key}"
    if options.session_id:
        headers["session-id"] = options.session_id
    headers.update(model.headers or {})
    headers.update(options.headers or {})
    return headers


# ---------------------------------------------------------------------------- response


class _Parser:
    """Turns Responses stream events into writer calls (one open block per output item)."""

    __slots__ = (
        "w",
        "blocks",
        "kinds",
        "open_item",
        "status",
        "incomplete_reason",
        "summary_parts",
        "has_args",
    )

    def __init__(self, writer: StreamWriter) -> None:
        self.w = writer
        self.blocks: dict[str, int] = {}
        """Output item id -> content index."""
        self.kinds: dict[str, str] = {}
        self.open_item: str | None = None
        self.status: str | None = None
        self.incomplete_reason: str | None = None
        self.summary_parts: dict[str, int] = {}
        self.has_args: set[str] = set()

    def handle(self, events: list[ServerSentEvent]) -> None:
        loads = jiter.from_json
        for event in events:
            raw = event.raw
            if not raw or raw == b"[DONE]":
                continue
            data = loads(raw)
            kind = data.get("type") or event.event or ""
            if kind == "response.output_text.delta" or kind == "response.refusal.delta":
                index = self._index(data, "message")
                if index is not None and data.get("delta"):
                    self.w.text_delta(index, data["delta"])
            elif kind == "response.function_call_arguments.delta":
                item_id = data.get("item_id", "")
                index = self.blocks.get(item_id)
                if index is not None and data.get("delta"):
                    self.has_args.add(item_id)
                    self.w.tool_call_delta(index, data["delta"])
            elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
                index = self._index(data, "reasoning")
                if index is not None and data.get("delta"):
                    self.w.thinking_delta(index, data["delta"])
            elif kind == "response.reasoning_summary_part.added":
                item_id = data.get("item_id", "")
                count = self.summary_parts.get(item_id, 0)
                self.summary_parts[item_id] = count + 1
                index = self.blocks.get(item_id)
                if count and index is not None:
                    self.w.thinking_delta(index, "\n\n")
            elif kind == "response.output_item.added":
                self._item_added(data.get("item") or {})
            elif kind == "response.function_call_arguments.done":
                item_id = data.get("item_id", "")
                index = self.blocks.get(item_id)
                if index is not None and item_id not in self.has_args and data.get("arguments"):
                    self.has_args.add(item_id)
                    self.w.tool_call_delta(index, data["arguments"])
            elif kind == "response.output_item.done":
                self._item_done(data.get("item") or {})
            elif kind == "response.created" or kind == "response.in_progress":
                self._identity(data.get("response") or {})
            elif kind in ("response.completed", "response.incomplete", "response.failed"):
                self._end(data.get("response") or {}, kind)
            elif kind == "error":
                message = data.get("message") or (data.get("error") or {}).get("message") or "stream error"
                code = data.get("code") or (data.get("error") or {}).get("code")
                detail = f" ({code})" if code else ""
                raise ProviderResponseError(f"{provider_label(self.w.model)} API error{detail}: {message}")

    def _identity(self, response: Mapping[str, object]) -> None:
        output = self.w.output
        if response_id := wire_text(response.get("id")):
            output.response_id = response_id
        if response_model := wire_text(response.get("model")):
            output.response_model = response_model

    def _index(self, data: Mapping[str, object], kind: str) -> int | None:
        item_id = wire_text(data.get("item_id"))
        index = self.blocks.get(item_id)
        if index is None:  # a delta for an item the server never announced
            self._item_added({"id": item_id, "type": kind})
            index = self.blocks.get(item_id)
        return index

    def _item_added(self, item: Mapping[str, object]) -> None:
        kind = item.get("type")
        item_id = wire_text(item.get("id"))
        if item_id in self.blocks:
            return
        w = self.w
        if kind == "reasoning":
            index = w.start_thinking()
        elif kind == "message":
            index = w.start_text()
        elif kind == "function_call":
            call_id = wire_text(item.get("call_id")) or item_id
            index = w.start_tool_call(f"{call_id}|{item_id}" if item_id else call_id, wire_text(item.get("name")))
            if arguments := wire_text(item.get("arguments")):
                self.has_args.add(item_id)
                w.tool_call_delta(index, arguments)
        else:
            return  # web search calls and other hosted tools: not shown
        self.blocks[item_id] = index
        self.kinds[item_id] = kind

    def _item_done(self, item: Mapping[str, object]) -> None:
        item_id = wire_text(item.get("id"))
        if item_id not in self.blocks:
            self._item_added(item)
        index = self.blocks.pop(item_id, None)
        kind = self.kinds.pop(item_id, None)
        if index is None:
            return
        w = self.w
        block = w.output.content[index]
        if kind == "reasoning" and isinstance(block, ThinkingContent):
            w.flush()
            summary = item.get("summary")
            if not block.thinking and isinstance(summary, list) and summary:
                parts = [wire_text(p.get("text")) for p in summary if isinstance(p, dict)]
                w.thinking_delta(index, "\n\n".join(parts))
            block.thinking_signature = _compact(item)
            w.end_thinking(index)
        elif kind == "message" and isinstance(block, TextContent):
            w.flush()
            if not block.text:
                content = item.get("content")
                text = "".join(
                    wire_text(p.get("text")) or wire_text(p.get("refusal"))
                    for p in (content if isinstance(content, list) else [])
                    if isinstance(p, dict)
                )
                if text:
                    w.text_delta(index, text)
            if item_id:
                block.text_signature = _compact({"v": 1, "id": item_id})
            w.end_text(index)
        elif kind == "function_call" and isinstance(block, ToolCall):
            arguments = wire_text(item.get("arguments"))
            if item_id not in self.has_args and arguments:
                w.tool_call_delta(index, arguments)
            if name := wire_text(item.get("name")):
                block.name = name
            w.end_tool_call(index)

    def _end(self, response: Mapping[str, object], kind: str) -> None:
        self._identity(response)
        self.status = wire_text(response.get("status")) or kind.rsplit(".", 1)[1]
        usage = wire_object(response.get("usage"))
        if usage:
            out = self.w.new_usage()
            cached = wire_count(wire_object(usage.get("input_tokens_details")).get("cached_tokens"))
            out.input = max(0, wire_count(usage.get("input_tokens")) - cached)
            out.cache_read = cached
            out.output = wire_count(usage.get("output_tokens"))
            reasoning = wire_count(wire_object(usage.get("output_tokens_details")).get("reasoning_tokens"))
            if reasoning:
                out.reasoning = reasoning
            self.w.update_cost()
        if kind == "response.failed" or self.status == "failed":
            error = wire_object(response.get("error"))
            message = error.get("message") or "the response failed"
            code = error.get("code")
            detail = f" ({code})" if code else ""
            raise ProviderResponseError(f"{provider_label(self.w.model)} API error{detail}: {message}")
        self.incomplete_reason = wire_text(wire_object(response.get("incomplete_details")).get("reason")) or None

    def finish(self) -> None:
        w = self.w
        for item_id in list(self.blocks):  # items the server never closed
            self._item_done({"id": item_id, "type": self.kinds.get(item_id)})
        status = self.status
        if status is None:
            raise ProviderConnectionError(
                "Connection error: the stream ended before the response was complete"
            )
        w.output.raw_stop_reason = status
        if status == "incomplete":
            if self.incomplete_reason == "content_filter":
                raise ProviderResponseError("The response was blocked by the provider's content filter")
            w.finish("length")
            return
        if status not in ("completed", "in_progress"):
            raise ProviderResponseError(f"Unknown response status from {provider_label(w.model)}: {status}")
        w.finish("toolUse" if w.output.tool_calls() else "stop")


async def _run(writer: StreamWriter, model: Model, context: Context, options: StreamOptions) -> None:
    key = require_api_key(model, options)
    writer.secret = key
    payload = build_payload(model, context, options)
    url = (model.base_url or DEFAULT_BASE_URL).rstrip("/") + "/responses"
    await post_and_stream(
        writer, options, url=url, payload=payload, headers=_headers(model, options, key), make_parser=_Parser
    )
