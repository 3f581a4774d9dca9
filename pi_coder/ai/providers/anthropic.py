"""The ``anthropic-messages`` API: Anthropic's Messages endpoint over httpx and SSE.

Request shape and stream events follow https://docs.anthropic.com/en/api/messages-streaming.
No SDK is imported. Streaming events become Pi's protocol: text,
thinking (with signatures; redacted thinking as a complete redacted block), tool_use with
``input_json_delta`` arguments parsed while streaming, usage with cache read/write, and
Pi's stop reasons (``end_turn`` -> ``stop``, ``max_tokens`` -> ``length``, ``tool_use`` ->
``toolUse``; a refusal or safety stop ends the stream with an ``error`` event).
"""

from __future__ import annotations

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
    ToolResultMessage,
)
from pi_coder.json_types import JsonObject, JsonValue

__all__ = ["API_VERSION", "DEFAULT_THINKING_BUDGETS", "build_payload", "normalize_tool_call_id", "stream"]

API_VERSION = "2023-06-01"
DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_THINKING_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
"""Thinking token budgets per level for models without adaptive thinking."""
OUTPUT_CAP = 32_000
"""Base ``max_tokens`` when the caller sets none: min(model.max_tokens, OUTPUT_CAP)."""
MIN_OUTPUT_TOKENS = 1024
REDACTED_PLACEHOLDER = "[Reasoning redacted]"

_STOP_REASONS = {
    "end_turn": "stop",
    "max_tokens": "length",
    "tool_use": "toolUse",
    "pause_turn": "stop",
    "stop_sequence": "stop",
}
_ERROR_STOP_REASONS = {
    "refusal": "The model declined to respond (stop_reason: refusal)",
    "sensitive": "The response was stopped by the provider's safety filter (stop_reason: sensitive)",
}
_ADAPTIVE = re.compile(r"(opus|sonnet)-4[-.]([6-9])|(opus|sonnet)-[5-9]", re.IGNORECASE)
_MAX_EFFORT = re.compile(r"opus-4[-.]([6-9])|opus-[5-9]", re.IGNORECASE)
_BAD_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")


def stream(model: Model, context: Context, options: StreamOptions | None = None) -> AssistantMessageEventStream:
    """Stream one response from the Messages API.

    Must be called inside a running event loop; returns at once and fills the stream from a
    task. Never raises: failures end the stream with an ``error`` event.

    Args:
        model: A model whose ``api`` is ``anthropic-messages``.
        context: The transcript (system messages carry the prompt and tool declarations).
        options: Key, signal, reasoning level, budgets, retries, timeouts, hooks.

    Returns:
        The event stream.
    """
    opts = options if options is not None else StreamOptions()
    return run_provider(model, opts, lambda writer: _run(writer, model, context, opts))


def normalize_tool_call_id(call_id: str, model: Model | None = None, source: AssistantMessage | None = None) -> str:
    """An id Anthropic accepts (``^[a-zA-Z0-9_-]{1,64}$``), stable for a given input."""
    cleaned = _BAD_ID_CHARS.sub("_", call_id)[:64]
    return cleaned or "tool_call"


# ---------------------------------------------------------------------------- request


def _cache_control(model: Model, options: StreamOptions) -> JsonObject | None:
    retention = resolve_cache_retention(options.cache_retention)
    if retention == "none":
        return None
    if retention == "long" and "api.anthropic.com" in (model.base_url or DEFAULT_BASE_URL):
        return {"type": "ephemeral", "ttl": "1h"}
    return {"type": "ephemeral"}


def _image_block(image: ImageContent, model: Model) -> JsonObject:
    if "image" not in model.input:
        return {"type": "text", "text": "(image omitted: this model does not accept images)"}
    return {"type": "image", "source": {"type": "base64", "media_type": image.mime_type, "data": image.data}}


def _user_blocks(content: str | Sequence[TextContent | ImageContent], model: Model) -> list[JsonValue]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content.strip() else []
    blocks: list[JsonValue] = []
    for block in content:
        if isinstance(block, TextContent):
            if block.text.strip():
                blocks.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageContent):
            blocks.append(_image_block(block, model))
    return blocks


def _assistant_blocks(message: AssistantMessage) -> list[JsonValue]:
    blocks: list[JsonValue] = []
    for block in message.content:
        if isinstance(block, TextContent):
            if block.text.strip():
                blocks.append({"type": "text", "text": block.text})
        elif isinstance(block, ThinkingContent):
            if block.redacted:
                if block.thinking_signature:
                    blocks.append({"type": "redacted_thinking", "data": block.thinking_signature})
            elif block.thinking_signature:
                blocks.append(
                    {"type": "thinking", "thinking": block.thinking, "signature": block.thinking_signature}
                )
            elif block.thinking.strip():
                # Unsigned thinking (an interrupted stream) cannot be replayed as thinking.
                blocks.append({"type": "text", "text": block.thinking})
        elif isinstance(block, ToolCall):
            blocks.append({"type": "tool_use", "id": block.id, "name": block.name, "input": block.arguments})
    return blocks


def _texts(blocks: list[JsonValue]) -> list[str] | None:
    """The texts of ``blocks`` when every one is a text block, else None."""
    texts = [b["text"] for b in blocks if isinstance(b, dict) and b["type"] == "text"]
    return [t for t in texts if isinstance(t, str)] if len(texts) == len(blocks) else None


def _tool_result_block(message: ToolResultMessage, model: Model) -> JsonObject:
    content = _user_blocks(message.content, model)
    result: JsonObject = {"type": "tool_result", "tool_use_id": message.tool_call_id}
    texts = _texts(content)
    if content and texts is not None:
        result["content"] = "\n".join(texts)
    elif content:
        result["content"] = content
    else:
        result["content"] = "(no output)"
    if message.is_error:
        result["is_error"] = True
    return result


def convert_messages(messages: Sequence[LlmMessage], model: Model) -> list[JsonValue]:
    """Pi messages (system messages excluded) as Messages API ``messages``."""
    out: list[JsonValue] = []
    merge_into: list[JsonValue] | None = None  # the content of the user message holding the latest tool results
    for message in transform_messages(messages, model, normalize_tool_call_id):
        if message.role == "user":
            blocks = _user_blocks(message.content, model)
            if not blocks:
                continue
            if merge_into is not None:
                merge_into.extend(blocks)
            else:
                out.append({"role": "user", "content": blocks})
            merge_into = None
        elif message.role == "assistant":
            merge_into = None
            blocks = _assistant_blocks(message)
            if blocks:
                out.append({"role": "assistant", "content": blocks})
        elif message.role == "toolResult":
            if merge_into is None:
                merge_into = []
                out.append({"role": "user", "content": merge_into})
            merge_into.append(_tool_result_block(message, model))
    return out


def _thinking(model: Model, options: StreamOptions, base_max: int) -> tuple[JsonObject, int, bool]:
    """(thinking/output_config params, max_tokens, budget thinking used) for the level."""
    level = options.reasoning
    if not model.reasoning:
        return {}, base_max, False
    if not level or level == "off":
        return {"thinking": {"type": "disabled"}}, base_max, False
    mapped = (model.thinking_level_map or {}).get(level, level)
    if mapped is None:
        return {"thinking": {"type": "disabled"}}, base_max, False
    if _ADAPTIVE.search(model.id):
        if mapped in ("minimal", "low"):
            effort = "low"
        elif mapped in ("xhigh", "max"):
            effort = "max" if _MAX_EFFORT.search(model.id) else "high"
        else:
            effort = mapped
        # Newer models (Opus 4.7+) omit the thinking text unless asked; Pi 1.6 always asks.
        return {"thinking": {"type": "adaptive", "display": "summarized"}, "output_config": {"effort": effort}}, base_max, False
    budgets = {**DEFAULT_THINKING_BUDGETS, **(options.thinking_budgets or {})}
    clamped = "high" if mapped in ("xhigh", "max") and mapped not in budgets else mapped
    budget = budgets.get(clamped, budgets["medium"])
    max_tokens = min(base_max + budget, model.max_tokens)
    if max_tokens <= budget:
        budget = max_tokens - MIN_OUTPUT_TOKENS
    if budget < 1024:  # the API's minimum budget; no room to think
        return {"thinking": {"type": "disabled"}}, max_tokens, False
    return {"thinking": {"type": "enabled", "budget_tokens": budget, "display": "summarized"}}, max_tokens, True


def build_payload(model: Model, context: Context, options: StreamOptions) -> tuple[JsonObject, bool]:
    """The request body for ``context``, and whether budget thinking is on.

    Args:
        model: Target model.
        context: The transcript.
        options: Stream options (reasoning, budgets, max_tokens, temperature, cache retention).

    Returns:
        ``(payload, budget_thinking)``.
    """
    messages = list(context.messages)
    system = get_current_system_message(messages)
    prompt = render_system_prompt(system)
    tools = get_current_tools(messages)
    cache = _cache_control(model, options)
    conversation = convert_messages([m for m in messages if m.role != "system"], model)
    if cache is not None:
        for message in reversed(conversation):
            if isinstance(message, dict) and message["role"] == "user":
                content = message["content"]  # never empty
                if isinstance(content, list) and isinstance(content[-1], dict):
                    content[-1]["cache_control"] = cache
                break
    base_max = options.max_tokens or min(model.max_tokens, OUTPUT_CAP)
    thinking, max_tokens, budget_thinking = _thinking(model, options, base_max)
    payload: JsonObject = {"model": model.id, "max_tokens": max_tokens, "stream": True}
    if prompt:
        system_block: JsonObject = {"type": "text", "text": prompt}
        if cache is not None:
            system_block["cache_control"] = cache
        payload["system"] = [system_block]
    payload["messages"] = conversation
    if tools:
        declared: list[JsonObject] = [
            {
                "name": tool.name,
                "description": tool.description,
                "input_schema": tool.parameters or {"type": "object", "properties": {}},
            }
            for tool in tools
        ]
        if cache is not None:
            declared[-1]["cache_control"] = cache
        payload["tools"] = [*declared]
        choice = forced_tool_choice(model, messages, [tool.name for tool in tools], "anthropic-messages")
        if choice is not None:
            payload["tool_choice"] = choice
    payload.update(thinking)
    mode = thinking.get("thinking")
    thinking_on = isinstance(mode, dict) and mode.get("type") in ("enabled", "adaptive")
    if options.temperature is not None and not thinking_on:
        payload["temperature"] = options.temperature
    user_id = (options.metadata or {}).get("user_id")
    if isinstance(user_id, str):
        payload["metadata"] = {"user_id": user_id}
    return payload, budget_thinking


def _url(model: Model) -> str:
    base = (model.base_url or DEFAULT_BASE_URL).rstrip("/")
    return base + ("/messages" if base.endswith("/v1") else "/v1/messages")


def _headers(model: Model, options: StreamOptions, key: str | None, budget_thinking: bool) -> dict[str, str]:
    beta = ["fine-grained-tool-streaming-2025-05-14"]
    if budget_thinking:
        beta.append("interleaved-thinking-2025-05-14")
    headers = {
        "content-type": "application/json",
        "accept": "text/event-stream",
        "anthropic-version": API_VERSION,
        "anthropic-beta": ",".join(beta),
    }
    if key:
        headers["x-api-key"] = key
    headers.update(model.headers or {})
    headers.update(options.headers or {})
    return headers


# ---------------------------------------------------------------------------- response


def _count(value: object) -> int | None:
    """A token count the server sent (None when it is missing or not a number)."""
    return value if isinstance(value, int) else None


class _Parser:
    """Turns Messages API stream events into writer calls."""

    __slots__ = ("w", "blocks", "kinds", "stop_reason", "stopped")

    def __init__(self, writer: StreamWriter) -> None:
        self.w = writer
        self.blocks: dict[int, int] = {}
        """Anthropic block index -> index in ``partial.content``."""
        self.kinds: dict[int, str] = {}
        self.stop_reason: str | None = None
        self.stopped = False

    def handle(self, events: list[ServerSentEvent]) -> None:
        w = self.w
        blocks = self.blocks
        loads = jiter.from_json
        for event in events:
            data = loads(event.raw)
            # The event name wins: llama.cpp sends `event: error` with data {"type": "server_error", ...}.
            name = event.event
            kind = name if name != "message" else data.get("type")
            if kind == "content_block_delta":
                index = blocks.get(data["index"])
                if index is None:
                    continue
                delta = data["delta"]
                dtype = delta.get("type")
                if dtype == "text_delta":
                    w.text_delta(index, delta["text"])
                elif dtype == "input_json_delta":
                    w.tool_call_delta(index, delta["partial_json"])
                elif dtype == "thinking_delta":
                    w.thinking_delta(index, delta["thinking"])
                elif dtype == "signature_delta":
                    w.signature_delta(index, delta["signature"])
            elif kind == "content_block_start":
                self._start_block(data["index"], data["content_block"])
            elif kind == "content_block_stop":
                self._stop_block(data["index"])
            elif kind == "message_start":
                self._message_start(data.get("message") or {})
            elif kind == "message_delta":
                self.stop_reason = (data.get("delta") or {}).get("stop_reason") or self.stop_reason
                self._usage(data.get("usage"))
            elif kind == "message_stop":
                self.stopped = True
            elif kind == "error":
                raise ProviderResponseError(_stream_error_text(provider_label(w.model), data))

    def _start_block(self, anthropic_index: int, block: Mapping[str, object]) -> None:
        w = self.w
        btype = wire_text(block.get("type"))
        if btype == "text":
            index = w.start_text()
            if text := wire_text(block.get("text")):
                w.text_delta(index, text)
        elif btype == "thinking":
            index = w.start_thinking(signature=wire_text(block.get("signature")) or None)
            if thinking := wire_text(block.get("thinking")):
                w.thinking_delta(index, thinking)
        elif btype == "redacted_thinking":
            index = w.start_thinking(REDACTED_PLACEHOLDER, signature=wire_text(block.get("data")), redacted=True)
        elif btype == "tool_use":
            initial = block.get("input")
            index = w.start_tool_call(
                wire_text(block.get("id")), wire_text(block.get("name")), initial if isinstance(initial, dict) else None
            )
        else:  # server tools, citations, ...: not part of Pi's content model
            return
        self.blocks[anthropic_index] = index
        self.kinds[anthropic_index] = btype

    def _stop_block(self, anthropic_index: int) -> None:
        index = self.blocks.pop(anthropic_index, None)
        if index is None:
            return
        kind = self.kinds.pop(anthropic_index)
        if kind == "text":
            self.w.end_text(index)
        elif kind == "tool_use":
            self.w.end_tool_call(index)
        else:
            self.w.end_thinking(index)

    def _message_start(self, message: Mapping[str, object]) -> None:
        output = self.w.output
        if response_id := wire_text(message.get("id")):
            output.response_id = response_id
        if response_model := wire_text(message.get("model")):
            output.response_model = response_model
        self._usage(message.get("usage"))

    def _usage(self, value: object) -> None:
        raw = wire_object(value)
        if not raw:
            return
        usage = self.w.new_usage()
        if (count := _count(raw.get("input_tokens"))) is not None:
            usage.input = count
        if (count := _count(raw.get("output_tokens"))) is not None:
            usage.output = count
        if (count := _count(raw.get("cache_read_input_tokens"))) is not None:
            usage.cache_read = count
        if (count := _count(raw.get("cache_creation_input_tokens"))) is not None:
            usage.cache_write = count
        hour = _count(wire_object(raw.get("cache_creation")).get("ephemeral_1h_input_tokens"))
        if hour:
            usage.cache_write1h = hour
        self.w.update_cost()

    def finish(self) -> None:
        raw = self.stop_reason
        if raw is None:
            raise ProviderConnectionError("Connection error: the stream ended before the response was complete")
        self.w.output.raw_stop_reason = raw
        if raw in _ERROR_STOP_REASONS:
            raise ProviderResponseError(_ERROR_STOP_REASONS[raw])
        reason = _STOP_REASONS.get(raw)
        if reason is None:
            raise ProviderResponseError(f"Unknown stop reason from {provider_label(self.w.model)}: {raw}")
        self.w.finish(reason)


def _stream_error_text(label: str, data: object) -> str:
    """The message of an in-stream ``error`` event, in Anthropic's or llama.cpp's shape."""
    error = data.get("error") if isinstance(data, dict) else None
    if not isinstance(error, dict):
        error = data if isinstance(data, dict) else {"message": str(data)}
    etype = error.get("type") if error.get("type") not in (None, "error") else error.get("code")
    message = error.get("message") or (data.get("message") if isinstance(data, dict) else None)
    code = f" ({etype})" if etype else ""
    return f"{label} API error{code}: {message or 'stream error'}"


async def _run(writer: StreamWriter, model: Model, context: Context, options: StreamOptions) -> None:
    key = require_api_key(model, options)
    writer.secret = key
    payload, budget_thinking = build_payload(model, context, options)
    headers = _headers(model, options, key, budget_thinking)
    await post_and_stream(
        writer, options, url=_url(model), payload=payload, headers=headers, make_parser=_Parser
    )
