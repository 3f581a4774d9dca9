"""The ``openai-completions`` API: OpenAI Chat Completions (and compatible servers) over SSE.

Content deltas become text blocks; ``reasoning_content`` / ``reasoning`` / ``reasoning_text``
deltas become thinking blocks whose signature records the field name (so a replay to the same
model can send it back in that field); ``tool_calls`` deltas become tool-call blocks keyed by
``index``, a new block starting whenever a new non-empty id arrives. Usage comes from the
``stream_options.include_usage`` chunk; finish reasons become Pi's stop reasons (``stop``, ``length``, ``toolUse``); a content filter or an
unknown reason ends the stream with an ``error`` event.

``model.compat`` switches, camelCase or snake_case keys:
``supportsStore``, ``supportsDeveloperRole``, ``supportsReasoningEffort``,
``supportsUsageInStreaming``, ``maxTokensField``, ``requiresToolResultName``,
``requiresAssistantAfterToolResult``, ``requiresThinkingAsText``, ``thinkingFormat``,
``reasoningEffortMap``, ``toolChoice`` (see ``_tool_choice``). Defaults are Pi's for
api.openai.com; for any other server they are the conservative ones local servers accept
(``system`` role, no ``store``, ``max_tokens``).
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Mapping, Sequence
from typing import TypedDict

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
from pi_coder.ai.providers._tool_choice import forced_tool_choice
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

__all__ = ["Compat", "build_payload", "resolve_compat", "stream"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
OUTPUT_CAP = 32_000
REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")
TOOL_IMAGES_TEXT = "Attached image(s) from tool result:"
ASSISTANT_BRIDGE_TEXT = "I have processed the tool results."

_FINISH_REASONS = {"stop": "stop", "end": "stop", "length": "length", "tool_calls": "toolUse", "function_call": "toolUse"}
_XHIGH = re.compile(r"gpt-5\.[2-9]|gpt-[6-9]", re.IGNORECASE)
_BAD_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")


def stream(model: Model, context: Context, options: StreamOptions | None = None) -> AssistantMessageEventStream:
    """Stream one response from a Chat Completions endpoint.

    Must be called inside a running event loop; returns at once and fills the stream from a
    task. Never raises: failures end the stream with an ``error`` event.

    Args:
        model: A model whose ``api`` is ``openai-completions``.
        context: The transcript (system messages carry the prompt and tool declarations).
        options: Key, signal, reasoning level, retries, timeouts, hooks.

    Returns:
        The event stream.
    """
    opts = options if options is not None else StreamOptions()
    return run_provider(model, opts, lambda writer: _run(writer, model, context, opts))


class Compat(TypedDict):
    """The effective ``model.compat`` switches (``resolve_compat``): every one set."""

    supportsStore: bool
    supportsDeveloperRole: bool
    supportsReasoningEffort: bool
    supportsUsageInStreaming: bool
    maxTokensField: str
    requiresToolResultName: bool
    requiresAssistantAfterToolResult: bool
    requiresThinkingAsText: bool
    thinkingFormat: str
    reasoningEffortMap: Mapping[str, JsonValue]


def resolve_compat(model: Model) -> Compat:
    """The effective compat switches of ``model`` (defaults filled in).

    A switch is on when its value is truthy; a name or a format that is not a string is read as
    its text.
    """
    raw = model.compat or {}

    def get(name: str) -> JsonValue:
        snake = re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()
        return raw.get(name, raw.get(snake))

    def switch(name: str, default: bool) -> bool:
        value = get(name)
        return default if value is None else bool(value)

    def text(name: str, default: str) -> str:
        value = get(name)
        return default if value is None else str(value)

    official = "api.openai.com" in (model.base_url or DEFAULT_BASE_URL)
    effort_map = get("reasoningEffortMap")
    return {
        "supportsStore": switch("supportsStore", official),
        "supportsDeveloperRole": switch("supportsDeveloperRole", official),
        "supportsReasoningEffort": switch("supportsReasoningEffort", True),
        "supportsUsageInStreaming": switch("supportsUsageInStreaming", True),
        "maxTokensField": text("maxTokensField", "max_completion_tokens" if official else "max_tokens"),
        "requiresToolResultName": switch("requiresToolResultName", False),
        "requiresAssistantAfterToolResult": switch("requiresAssistantAfterToolResult", False),
        "requiresThinkingAsText": switch("requiresThinkingAsText", False),
        "thinkingFormat": text("thinkingFormat", "openai"),
        "reasoningEffortMap": effort_map if isinstance(effort_map, dict) else {},
    }


def normalize_tool_call_id(call_id: str, model: Model | None = None, source: AssistantMessage | None = None) -> str:
    """An id OpenAI accepts: at most 40 characters of ``[a-zA-Z0-9_-]``."""
    head = call_id.split("|", 1)[0]
    cleaned = _BAD_ID_CHARS.sub("_", head)[:40]
    return cleaned or "call"


# ---------------------------------------------------------------------------- request


def _image_part(image: ImageContent) -> JsonObject:
    return {"type": "image_url", "image_url": {"url": f"data:{image.mime_type};base64,{image.data}"}}


def _user_content(content: str | Sequence[TextContent | ImageContent], model: Model) -> str | list[JsonValue] | None:
    if isinstance(content, str):
        return content if content.strip() else None
    parts: list[JsonValue] = []
    for block in content:
        if isinstance(block, TextContent):
            if block.text.strip():
                parts.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageContent):
            if "image" in model.input:
                parts.append(_image_part(block))
            else:
                parts.append({"type": "text", "text": "(image omitted: this model does not accept images)"})
    if not parts:
        return None
    texts = [p["text"] for p in parts if isinstance(p, dict) and p["type"] == "text"]
    if len(texts) == len(parts):
        return "\n".join(t for t in texts if isinstance(t, str))
    return parts


def _compact_json(value: object) -> str:
    # JSON.stringify's form (what Pi sends and what models emit): no spaces, UTF-8 kept.
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _assistant_message(message: AssistantMessage, compat: Compat) -> JsonObject | None:
    texts: list[str] = []
    reasoning: dict[str, list[str]] = {}
    calls: list[JsonValue] = []
    for block in message.content:
        if isinstance(block, TextContent):
            if block.text.strip():
                texts.append(block.text)
        elif isinstance(block, ThinkingContent):
            if block.redacted or not block.thinking.strip():
                continue
            if compat["requiresThinkingAsText"]:
                texts.append(block.thinking)
            elif block.thinking_signature in REASONING_FIELDS:
                reasoning.setdefault(block.thinking_signature, []).append(block.thinking)
        elif isinstance(block, ToolCall):
            calls.append(
                {
                    "id": block.id,
                    "type": "function",
                    "function": {"name": block.name, "arguments": _compact_json(block.arguments)},
                }
            )
    if not texts and not calls and not reasoning:
        return None
    out: JsonObject = {"role": "assistant", "content": "\n".join(texts) if texts else (None if calls else "")}
    for field, parts in reasoning.items():
        out[field] = "\n".join(parts)
    if calls:
        out["tool_calls"] = calls
    return out


def convert_messages(messages: Sequence[LlmMessage], model: Model, compat: Compat) -> list[JsonValue]:
    """Pi messages (system messages excluded) as Chat Completions ``messages``."""
    out: list[JsonValue] = []
    images: list[JsonValue] = []
    after_tool = False

    def flush_images() -> None:
        if images:
            out.append({"role": "user", "content": [{"type": "text", "text": TOOL_IMAGES_TEXT}, *images]})
            images.clear()

    for message in transform_messages(messages, model, normalize_tool_call_id):
        if message.role == "toolResult":
            text = "\n".join(b.text for b in message.content if isinstance(b, TextContent))
            for block in message.content:
                if isinstance(block, ImageContent) and "image" in model.input:
                    images.append(_image_part(block))
            tool_msg: JsonObject = {
                "role": "tool",
                "tool_call_id": message.tool_call_id,
                "content": text or ("(see attached image)" if images else "(no output)"),
            }
            if compat["requiresToolResultName"]:
                tool_msg["name"] = message.tool_name
            out.append(tool_msg)
            after_tool = True
            continue
        flush_images()
        if message.role == "user":
            content = _user_content(message.content, model)
            if content is None:
                continue
            if after_tool and compat["requiresAssistantAfterToolResult"]:
                out.append({"role": "assistant", "content": ASSISTANT_BRIDGE_TEXT})
            out.append({"role": "user", "content": content})
        elif message.role == "assistant":
            converted = _assistant_message(message, compat)
            if converted is not None:
                out.append(converted)
        after_tool = False
    flush_images()
    return out


def _reasoning_effort(model: Model, level: str, compat: Compat) -> str | None:
    level_map = model.thinking_level_map or {}
    if level in level_map:
        return level_map[level]
    mapped = compat["reasoningEffortMap"].get(level)
    if mapped and isinstance(mapped, str):
        return mapped
    if level in ("xhigh", "max"):
        return "xhigh" if _XHIGH.search(model.id) else "high"
    return level


def build_payload(model: Model, context: Context, options: StreamOptions) -> JsonObject:
    """The request body for ``context``.

    Args:
        model: Target model (``compat`` switches apply).
        context: The transcript.
        options: Stream options (reasoning, max_tokens, temperature).

    Returns:
        The JSON payload.
    """
    compat = resolve_compat(model)
    messages = list(context.messages)
    prompt = render_system_prompt(get_current_system_message(messages))
    tools = get_current_tools(messages)
    conversation = convert_messages([m for m in messages if m.role != "system"], model, compat)
    if prompt:
        role = "developer" if model.reasoning and compat["supportsDeveloperRole"] else "system"
        conversation.insert(0, {"role": role, "content": prompt})
    payload: JsonObject = {"model": model.id, "messages": conversation, "stream": True}
    if compat["supportsUsageInStreaming"]:
        payload["stream_options"] = {"include_usage": True}
    if compat["supportsStore"]:
        payload["store"] = False
    payload[compat["maxTokensField"]] = options.max_tokens or min(model.max_tokens, OUTPUT_CAP)
    if options.temperature is not None:
        payload["temperature"] = options.temperature
    official = "api.openai.com" in (model.base_url or DEFAULT_BASE_URL)
    if official and resolve_cache_retention(options.cache_retention) == "long":
        payload["prompt_cache_retention"] = "24h"  # PI_CACHE_RETENTION=long
    if tools:
        payload["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters or {"type": "object", "properties": {}},
                },
            }
            for tool in tools
        ]
        choice = forced_tool_choice(model, messages, [tool.name for tool in tools], "openai-completions")
        if choice is not None:
            payload["tool_choice"] = choice
    level = options.reasoning if options.reasoning != "off" else None
    if model.reasoning:
        fmt = compat["thinkingFormat"]
        if fmt in ("zai", "qwen"):
            payload["enable_thinking"] = level is not None
        elif fmt == "qwen-chat-template":
            payload["chat_template_kwargs"] = {"enable_thinking": level is not None}
        elif level is not None and compat["supportsReasoningEffort"]:
            effort = _reasoning_effort(model, level, compat)
            if effort:
                payload["reasoning_effort"] = effort
    return payload


def _headers(model: Model, options: StreamOptions, key: str | None) -> dict[str, str]:
    headers = {"content-type": "application/json", "accept": "text/event-stream"}
    if key:
        headers["authorization"] = f"Bearer {key}"
    headers.update(model.headers or {})
    headers.update(options.headers or {})
    return headers


# ---------------------------------------------------------------------------- response

_NONE, _TEXT, _THINKING, _TOOL = 0, 1, 2, 3


class _Parser:
    """Turns Chat Completions chunks into writer calls; blocks are emitted one at a time."""

    __slots__ = ("w", "kind", "index", "tool_slot", "finish_reason", "done", "seen_id")

    def __init__(self, writer: StreamWriter) -> None:
        self.w = writer
        self.kind = _NONE
        self.index = -1
        self.tool_slot: int | None = None
        """The ``index`` of the tool call the open block belongs to."""
        self.finish_reason: str | None = None
        self.done = False
        self.seen_id = False

    def handle(self, events: list[ServerSentEvent]) -> None:
        loads = jiter.from_json
        text_delta = self.w.text_delta
        text_index = self.index if self.kind == _TEXT else -1
        for event in events:
            raw = event.raw
            if raw == b"[DONE]":
                self.done = True
                continue
            chunk = loads(raw)
            if event.event == "error":  # `event: error` with any data shape
                self._error(chunk.get("error", chunk) if isinstance(chunk, dict) else chunk)
            if not self.seen_id:
                self._identity(chunk)
            choices = chunk.get("choices")
            if choices:
                choice = choices[0]
                delta = choice.get("delta")
                if delta:
                    content = delta.get("content")
                    size = len(delta)
                    if text_index >= 0 and content and (size == 1 or (size == 2 and "role" in delta)):
                        text_delta(text_index, content)  # the common case: more text
                    else:
                        self._delta(delta)
                        text_index = self.index if self.kind == _TEXT else -1
                if choice.get("finish_reason"):
                    self.finish_reason = choice["finish_reason"]
            usage = chunk.get("usage")
            if usage:
                self._usage(usage)
            elif not choices and "error" in chunk:
                self._error(chunk["error"])

    def _error(self, error: object) -> None:
        message = error.get("message") if isinstance(error, dict) else str(error)
        raise ProviderResponseError(f"{provider_label(self.w.model)} API error: {message or 'stream error'}")

    def _identity(self, chunk: Mapping[str, object]) -> None:
        self.seen_id = True
        output = self.w.output
        if response_id := wire_text(chunk.get("id")):
            output.response_id = response_id
        if response_model := wire_text(chunk.get("model")):
            output.response_model = response_model

    def _delta(self, delta: Mapping[str, object]) -> None:
        w = self.w
        for field in REASONING_FIELDS:
            text = wire_text(delta.get(field))
            if text:
                if self.kind != _THINKING:
                    self._close()
                    self.kind, self.index = _THINKING, w.start_thinking(signature=field)
                w.thinking_delta(self.index, text)
                break
        content = wire_text(delta.get("content"))
        if content:
            if self.kind != _TEXT:
                self._close()
                self.kind, self.index = _TEXT, w.start_text()
            w.text_delta(self.index, content)
        calls = delta.get("tool_calls")
        if calls and isinstance(calls, list):
            for call in calls:
                if isinstance(call, dict):
                    self._tool_delta(call)

    def _tool_delta(self, call: Mapping[str, object]) -> None:
        w = self.w
        slot = call.get("index", 0)
        if not isinstance(slot, int):
            slot = None
        call_id = wire_text(call.get("id"))
        function = wire_object(call.get("function"))
        name = wire_text(function.get("name"))
        block = w.output.content[self.index] if self.kind == _TOOL else None
        if not isinstance(block, ToolCall) or slot != self.tool_slot or (call_id and block.id and call_id != block.id):
            self._close()
            self.kind, self.index, self.tool_slot = _TOOL, w.start_tool_call(call_id, name), slot
        else:
            if call_id:
                block.id = call_id
            if name:
                block.name = name
        arguments = wire_text(function.get("arguments"))
        if arguments:
            w.tool_call_delta(self.index, arguments)

    def _close(self) -> None:
        kind, index = self.kind, self.index
        if kind == _TEXT:
            self.w.end_text(index)
        elif kind == _THINKING:
            self.w.end_thinking(index)
        elif kind == _TOOL:
            block = self.w.output.content[index]
            assert isinstance(block, ToolCall)
            if not block.id:  # some local servers omit ids; the loop needs one
                block.id = f"call_{secrets.token_hex(6)}"
            self.w.end_tool_call(index)
        self.kind, self.index, self.tool_slot = _NONE, -1, None

    def _usage(self, raw: Mapping[str, object]) -> None:
        usage = self.w.new_usage()
        prompt = wire_count(raw.get("prompt_tokens"))
        cached = wire_count(wire_object(raw.get("prompt_tokens_details")).get("cached_tokens"))
        usage.input = max(0, prompt - cached)
        usage.cache_read = cached
        usage.output = wire_count(raw.get("completion_tokens"))
        reasoning = wire_count(wire_object(raw.get("completion_tokens_details")).get("reasoning_tokens"))
        if reasoning:
            usage.reasoning = reasoning
        self.w.update_cost()

    def finish(self) -> None:
        self._close()
        raw = self.finish_reason
        if raw is None and not self.done:
            raise ProviderConnectionError("Connection error: the stream ended before the response was complete")
        self.w.output.raw_stop_reason = raw
        if raw == "content_filter":
            raise ProviderResponseError("The response was blocked by the provider's content filter")
        reason = "stop" if raw is None else _FINISH_REASONS.get(raw)
        if reason is None:
            raise ProviderResponseError(f"Unknown finish reason from {provider_label(self.w.model)}: {raw}")
        self.w.finish(reason)


async def _run(writer: StreamWriter, model: Model, context: Context, options: StreamOptions) -> None:
    key = require_api_key(model, options)
    writer.secret = key
    payload = build_payload(model, context, options)
    url = (model.base_url or DEFAULT_BASE_URL).rstrip("/") + "/chat/completions"
    await post_and_stream(
        writer, options, url=url, payload=payload, headers=_headers(model, options, key), make_parser=_Parser
    )
