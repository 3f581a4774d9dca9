"""``PI_CACHE_RETENTION=long``: Anthropic's 1-hour cache and OpenAI's 24-hour retention on the official APIs."""

from __future__ import annotations

import pytest

from pi_coder.ai.options import StreamOptions, resolve_cache_retention
from pi_coder.ai.providers import anthropic, openai_completions
from pi_coder.ai.types import Context, SystemMessage, UserMessage
from tests.support.sse_server import SSEServer, Text, Turn

pytestmark = pytest.mark.usefixtures("close_shared_clients")


def _context() -> Context:
    return Context(messages=[SystemMessage(content="You are terse."), UserMessage(content="hi")])


def _system_cache(payload: dict[str, object]) -> object:
    system = payload["system"]
    assert isinstance(system, list)
    return system[-1]["cache_control"]


def test_variable_sets_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    """An explicit option wins; otherwise PI_CACHE_RETENTION=long, else short."""
    monkeypatch.delenv("PI_CACHE_RETENTION", raising=False)
    assert resolve_cache_retention(None) == "short"
    monkeypatch.setenv("PI_CACHE_RETENTION", "long")
    assert resolve_cache_retention(None) == "long"
    assert resolve_cache_retention("none") == "none"


def test_anthropic_gets_a_one_hour_ttl(monkeypatch: pytest.MonkeyPatch, sse_server: SSEServer) -> None:
    """On api.anthropic.com the cache markers carry ttl 1h with the variable set, and not without it."""
    model = sse_server.model("anthropic-messages", base_url="https://api.anthropic.com")
    monkeypatch.delenv("PI_CACHE_RETENTION", raising=False)
    assert _system_cache(anthropic.build_payload(model, _context(), StreamOptions())[0]) == {"type": "ephemeral"}
    monkeypatch.setenv("PI_CACHE_RETENTION", "long")
    payload, _ = anthropic.build_payload(model, _context(), StreamOptions())
    assert _system_cache(payload) == {"type": "ephemeral", "ttl": "1h"}


async def test_other_anthropic_servers_keep_the_default_cache(
    monkeypatch: pytest.MonkeyPatch, sse_server: SSEServer
) -> None:
    """A compatible server (here the local one, over HTTP) gets no ttl it may not understand."""
    monkeypatch.setenv("PI_CACHE_RETENTION", "long")
    sse_server.enqueue(Turn([Text("ok")]))
    stream = anthropic.stream(sse_server.model("anthropic-messages"), _context(), StreamOptions(api_key="k"))
    await stream.result()
    assert _system_cache(sse_server.requests[0].json) == {"type": "ephemeral"}


def test_openai_gets_24h_retention(monkeypatch: pytest.MonkeyPatch, sse_server: SSEServer) -> None:
    """api.openai.com gets prompt_cache_retention=24h with the variable; other servers never do."""
    official = sse_server.model("openai-completions", base_url="https://api.openai.com/v1")
    local = sse_server.model("openai-completions")
    monkeypatch.delenv("PI_CACHE_RETENTION", raising=False)
    assert "prompt_cache_retention" not in openai_completions.build_payload(official, _context(), StreamOptions())
    monkeypatch.setenv("PI_CACHE_RETENTION", "long")
    assert openai_completions.build_payload(official, _context(), StreamOptions())["prompt_cache_retention"] == "24h"
    assert "prompt_cache_retention" not in openai_completions.build_payload(local, _context(), StreamOptions())
