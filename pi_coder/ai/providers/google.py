"""The ``google-generative-ai`` API: Gemini's ``models/{id}:streamGenerateContent?alt=sse``.

Each SSE event is a ``GenerateContentResponse`` whose first candidate carries a few parts:
``text`` (``thought: true`` marks thinking), ``functionCall`` (complete, never split across
events) and an optional ``thoughtSignature``. Signatures are kept where Pi 1.6 keeps them
(``thinkingSignature`` on thinking, ``textSignature`` on text, ``thoughtSignature`` on the
tool call) and sent back on replay to the same model, which Gemini 3 requires for function
calling with thinking. Usage: ``promptTokenCount`` includes ``cachedContentTokenCount``;
output is ``candidatesTokenCount + thoughtsTokenCount``.

Thinking (Pi 1.6's request shapes): Gemini 3 models take ``thinkingLevel`` (``LOW``,
``HIGH``, ...), Gemini 2.5 models a ``thinkingBudget`` per level, any other reasoning model
``thinkingBudget: -1`` (the model decides); ``off`` sends ``thinkingBudget: 0``.
"""

from __future__ import annotations

import itertools
import json
import re
import time
from collections.abc import Mapping, Sequence
from urllib.parse import quote

import jiter

from pi_coder.ai._sse import ServerSentEvent
from pi_coder.ai.context import get_current_system_message, get_current_tools, render_system_prompt
from pi_coder.ai.errors import ProviderConnectionError, ProviderResponseError
from pi_coder.ai.events import AssistantMessageEventStream
from pi_coder.ai.options import StreamOptions
from pi_coder.ai.providers._common import (
    StreamWriter,
    post_and_stream,
    provider_label,
    require_api_key,
    run_provider,
    wire_count,
)
from pi_coder.ai.transform import LlmMessage, is_same_model, transform_messages
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

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com/v1beta"
_GEMINI_3 = re.compile(r"gemini-(?:[3-9]|\d\d)", re.IGNORECASE)
_GEMINI_25 = re.compile(r"gemini-2\.5", re.IGNORECASE)
_BUDGETS = {"minimal": 128, "low": 2048, "medium": 8192, "high": 24576, "xhigh": 24576, "max": 24576}
_PRO_BUDGETS = {"minimal": 128, "low": 2048, "medium": 8192, "high": 32768, "xhigh": 32768, "max": 32768}
_FINISH = {"STOP": "stop", "MAX_TOKENS": "length", "FINISH_REASON_UNSPECIFIED": "stop"}
_call_counter = itertools.count(1)


def stream(
    model: Model, context: Context, options: StreamOptions | None = None
) -> AssistantMessageEventStream:
    """Stream one response from Gemini's ``streamGenerateContent``.

    Must be called inside a running event loop; returns at once and fills the stream from a
    task. Never raises: failures end the stream with an ``error`` event.

    Args:
        model: A model whose ``api`` is ``google-generative-ai``.
        context: The transcript (system messages carry the prompt and tool declarations).
        options: Key, signal, reasoning level, timeouts.

    Returns:
        The event stream.
    """
    opts = options if options is not None else StreamOptions()
    return run_provider(model, opts, lambda writer: _run(writer, model, context, opts))


# ---------------------------------------------------------------------------- request


def _inline(image: ImageContent) -> JsonObject:
    return {"inlineData": {"mimeType": image.mime_type, "data": image.data}}


def _user_parts(content: str | Sequence[TextContent | ImageContent], model: Model) -> list[JsonValue]:
    if isinstance(content, str):
        return [{"text": content}] if content.strip() else []
    parts: list[JsonValue] = []
    for block in content:
        if isinstance(block, TextContent):
            if block.text.strip():
                parts.append({"text": block.text})
        elif isinstance(block, ImageContent):
            if "image" in model.input:
                parts.append(_inline(block))
            else:
                parts.append({"text": "(image omitted: this model does not accept images)"})
    return parts


def _model_parts(message: AssistantMessage, model: Model) -> list[JsonValue]:
    same = is_same_model(message, model)
    parts: list[JsonValue] = []
    for block in message.content:
        if isinstance(block, ThinkingContent):
            if not block.thinking.strip() or block.redacted:
                continue
            part: JsonObject = {"text": block.thinking, "thought": True}
            if same and block.thinking_signature:
                part["thoughtSignature"] = block.thinking_signature
            parts.append(part)
        elif isinstance(block, TextContent):
            if not block.text.strip():
                continue
            part = {"text": block.text}
            if same and block.text_signature:
                part["thoughtSignature"] = block.text_signature
            parts.append(part)
        elif isinstance(block, ToolCall):
            part = {"functionCall": {"name": block.name, "args": block.arguments}}
            if same and block.thought_signature:
                part["thoughtSignature"] = block.thought_signature
            parts.append(part)
    return parts


def convert_contents(messages: Sequence[LlmMessage], model: Model) -> list[JsonValue]:
    """Pi messages (system messages excluded) as Gemini ``contents``."""
    out: list[JsonValue] = []
    results: list[JsonValue] | None = None
    for message in transform_messages(messages, model):
        if message.role == "toolResult":
            text = "\n".join(b.text for b in message.content if isinstance(b, TextContent))
            images = [
                _inline(b) for b in message.content if isinstance(b, ImageContent) and "image" in model.input
            ]
            key = "error" if message.is_error else "output"
            value = text or ("(see attached image)" if images else "(no output)")
            if results is None:
                results = []
                out.append({"parts": results, "role": "user"})
            results.append({"functionResponse": {"name": message.tool_name, "response": {key: value}}})
            results.extend(images)
            continue
        results = None
        if message.role == "user":
            parts = _user_parts(message.content, model)
            if parts:
                out.append({"parts": parts, "role": "user"})
        elif message.role == "assistant":
            parts = _model_parts(message, model)
            if parts:
                out.append({"parts": parts, "role": "model"})
    return out


def _thinking_config(model: Model, level: str) -> JsonObject | None:
    if level == "off":
        return None if _GEMINI_3.search(model.id) else {"thinkingBudget": 0}
    level_map = model.thinking_level_map or {}
    if _GEMINI_3.search(model.id) or any(level_map.values()):
        mapped = level_map.get(level, level)
        if mapped is None:  # a level this model lacks: the nearest it has, upwards then down
            order = ["minimal", "low", "medium", "high", "xhigh", "max"]
            start = order.index(level) if level in order else 3
            candidates = order[start:] + order[:start][::-1]
            mapped = next(
                (level_map.get(name, name) for name in candidates if level_map.get(name, name)), "high"
            )
            if mapped in ("xhigh", "max"):
                mapped = "high"
        return {"includeThoughts": True, "thinkingLevel": str(mapped).upper()}
    if _GEMINI_25.search(model.id):
        budgets = _PRO_BUDGETS if "pro" in model.id.lower() else _BUDGETS
        return {"includeThoughts": True, "thinkingBudget": budgets.get(level, budgets["medium"])}
    return {"includeThoughts": True, "thinkingBudget": -1}


def build_payload(model: Model, context: Context, options: StreamOptions) -> JsonObject:
    """The request body for ``context`` (Pi 1.6's shape).

    Args:
        model: Target model.
        context: The transcript.
        options: Stream options (reasoning, max_tokens, temperature).

    Returns:
        The JSON payload.
    """
    messages = list(context.messages)
    prompt = render_system_prompt(get_current_system_message(messages))
    tools = get_current_tools(messages)
    payload: JsonObject = {
        "contents": convert_contents([m for m in messages if m.role != "system"], model)
    }
    if prompt:
        payload["systemInstruction"] = {"parts": [{"text": prompt}], "role": "user"}
    if tools:
        payload["tools"] = [
            {
                "functionDeclarations": [
                    {
                        "name": tool.name,
                        "description": tool.description,
                        "parametersJsonSchema": tool.parameters or {"type": "object", "properties": {}},
                    }
                    for tool in tools
                ]
            }
        ]
        if _GEMINI_3.search(model.id):
            payload["toolConfig"] = {"functionCallingConfig": {"mode": "VALIDATED"}}
    config: JsonObject = {"maxOutputTokens": options.max_tokens or model.max_tokens}
    if options.temperature is not None:
        config["temperature"] = options.temperature
    if model.reasoning:
        thinking = _thinking_config(model, options.reasoning or "off")
        if thinking is not None:
            config["thinkingConfig"] = thinking
    payload["generationConfig"] = config
    return payload


def _headers(model: Model, options: StreamOptions, key: str | None) -> dict[str, str]:
    headers = {"content-type": "application/json", "accept": "text/event-stream"}
    if key:
        headers["x-goog-api-key"] = key
    headers.update(model.headers or {})
    headers.update(options.headers or {})
    return headers


# ---------------------------------------------------------------------------- response

_NONE, _TEXT, _THINKING = 0, 1, 2


def _string(value: object) -> str | None:
    """``value`` when the server sent a string there, else None."""
    return value if isinstance(value, str) else None


class _Parser:
    __slots__ = ("w", "kind", "index", "finish_reason", "seen_id")

    def __init__(self, writer: StreamWriter) -> None:
        self.w = writer
        self.kind = _NONE
        self.index = -1
        self.finish_reason: str | None = None
        self.seen_id = False

    def handle(self, events: list[ServerSentEvent]) -> None:
        loads = jiter.from_json
        for event in events:
            if not event.raw or event.raw == b"[DONE]":
                continue
            chunk = loads(event.raw)
            if not isinstance(chunk, dict):
                continue
            error = chunk.get("error")
            if error:
                message = error.get("message") if isinstance(error, dict) else str(error)
                status = error.get("status") if isinstance(error, dict) else None
                detail = f" ({status})" if status else ""
                raise ProviderResponseError(f"{provider_label(self.w.model)} API error{detail}: {message}")
            if not self.seen_id:
                self.seen_id = True
                if chunk.get("responseId"):
                    self.w.output.response_id = chunk["responseId"]
                if chunk.get("modelVersion"):
                    self.w.output.response_model = chunk["modelVersion"]
            blocked = (chunk.get("promptFeedback") or {}).get("blockReason")
            if blocked:
                raise ProviderResponseError(
                    f"The prompt was blocked by {provider_label(self.w.model)}: {blocked}"
                )
            candidates = chunk.get("candidates")
            if candidates:
                candidate = candidates[0]
                for part in (candidate.get("content") or {}).get("parts") or ():
                    self._part(part)
                if candidate.get("finishReason"):
                    self.finish_reason = candidate["finishReason"]
            usage = chunk.get("usageMetadata")
            if usage:
                self._usage(usage)

    def _part(self, part: Mapping[str, object]) -> None:
        w = self.w
        signature = _string(part.get("thoughtSignature"))
        call = part.get("functionCall")
        if isinstance(call, dict):
            self._close()
            name = _string(call.get("name")) or ""
            call_id = _string(call.get("id")) or f"{name}_{time.time_ns() // 1_000_000}_{next(_call_counter)}"
            index = w.start_tool_call(call_id, name)
            w.tool_call_delta(index, json.dumps(call.get("args") or {}, ensure_ascii=False))
            block = w.output.content[index]
            if signature and isinstance(block, ToolCall):
                block.thought_signature = signature
            w.end_tool_call(index)
            return
        text = part.get("text")
        if not isinstance(text, str):
            if signature and self.kind != _NONE:  # a signature in a part of its own
                self._sign(signature)
            return
        kind = _THINKING if part.get("thought") else _TEXT
        if kind != self.kind:
            self._close()
            self.kind = kind
            self.index = w.start_thinking() if kind == _THINKING else w.start_text()
        if text:
            if kind == _THINKING:
                w.thinking_delta(self.index, text)
            else:
                w.text_delta(self.index, text)
        if signature:
            self._sign(signature)

    def _sign(self, signature: str) -> None:
        block = self.w.output.content[self.index]
        if isinstance(block, ThinkingContent):
            block.thinking_signature = signature
        elif isinstance(block, TextContent):
            block.text_signature = signature

    def _close(self) -> None:
        if self.kind == _TEXT:
            self.w.end_text(self.index)
        elif self.kind == _THINKING:
            self.w.end_thinking(self.index)
        self.kind, self.index = _NONE, -1

    def _usage(self, raw: Mapping[str, object]) -> None:
        usage = self.w.new_usage()
        cached = wire_count(raw.get("cachedContentTokenCount"))
        thoughts = wire_count(raw.get("thoughtsTokenCount"))
        usage.input = max(0, wire_count(raw.get("promptTokenCount")) - cached)
        usage.cache_read = cached
        usage.output = wire_count(raw.get("candidatesTokenCount")) + thoughts
        if thoughts:
            usage.reasoning = thoughts
        self.w.update_cost()

    def finish(self) -> None:
        self._close()
        raw = self.finish_reason
        w = self.w
        if raw is None:
            raise ProviderConnectionError(
                "Connection error: the stream ended before the response was complete"
            )
        w.output.raw_stop_reason = raw
        reason = _FINISH.get(raw)
        if reason is None:
            raise ProviderResponseError(f"{provider_label(w.model)} stopped the response: {raw}")
        if reason == "stop" and w.output.tool_calls():
            reason = "toolUse"
        w.finish(reason)


async def _run(writer: StreamWriter, model: Model, context: Context, options: StreamOptions) -> None:
    key = require_api_key(model, options)
    writer.secret = key
    payload = build_payload(model, context, options)
    base = (model.base_url or DEFAULT_BASE_URL).rstrip("/")
    url = f"{base}/models/{quote(model.id, safe='')}:streamGenerateContent?alt=sse"
    await post_and_stream(
        writer, options, url=url, payload=payload, headers=_headers(model, options, key), make_parser=_Parser
    )
