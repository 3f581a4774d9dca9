"""Find a local OpenAI-compatible server when no provider has a key.

``discover_local()`` asks ``GET /v1/models`` on a few loopback ports (Ollama 11434, llama.cpp
8080, LM Studio 1234, vLLM 8000) at once, all within one time budget (100 ms), and returns what
answered. ``register_found()`` adds each as a keyless ``openai-completions`` provider. Only
127.0.0.1 is ever contacted. ``PI_CODER_DISCOVERY_PORTS`` (tests only) replaces the port list:
``"PORT[=name],..."``.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pi_coder.ai.registry import Provider
from pi_coder.ai.types import Model

if TYPE_CHECKING:
    from pi_coder.ai.models import Models

__all__ = ["DEFAULT_PORTS", "LOOPBACK", "Found", "discover_local", "found_notice", "register_found"]

LOOPBACK = "127.0.0.1"
"""The only host discovery ever contacts."""

DEFAULT_PORTS: dict[int, str] = {11434: "ollama", 8080: "llamacpp", 1234: "lmstudio", 8000: "vllm"}
_LABELS = {"ollama": "Ollama", "llamacpp": "llama.cpp", "lmstudio": "LM Studio", "vllm": "vLLM"}


@dataclass(frozen=True)
class Found:
    """A server that answered ``/v1/models``."""

    name: str
    port: int
    model_ids: tuple[str, ...]

    @property
    def label(self) -> str:
        return _LABELS.get(self.name, self.name)

    @property
    def base_url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}/v1"


def _ports(env: Mapping[str, str]) -> dict[int, str]:
    raw = env.get("PI_CODER_DISCOVERY_PORTS")
    if raw is None:
        return dict(DEFAULT_PORTS)
    ports: dict[int, str] = {}
    for item in raw.split(","):
        port, _, name = item.strip().partition("=")
        if port.isdigit():
            ports[int(port)] = name or DEFAULT_PORTS.get(int(port), "local")
    return ports


async def _probe(port: int) -> tuple[str, tuple[str, ...]] | None:
    reader, writer = await asyncio.open_connection(LOOPBACK, port)
    try:
        writer.write(
            f"GET /v1/models HTTP/1.0\r\nHost: {LOOPBACK}:{port}\r\nAccept: application/json\r\n\r\n".encode()
        )
        await writer.drain()
        raw = await reader.read(1 << 20)
        while raw and not reader.at_eof():
            more = await reader.read(1 << 20)
            if not more:
                break
            raw += more
    finally:
        writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    if len(lines[0].split()) < 2 or lines[0].split()[1] != "200":
        return None
    server = next(
        (ln.split(":", 1)[1].strip().lower() for ln in lines[1:] if ln.lower().startswith("server:")), ""
    )
    data = json.loads(body.decode("utf-8"))
    ids = tuple(str(m["id"]) for m in data.get("data", []) if isinstance(m, dict) and m.get("id"))
    return ("llamacpp" if "llama.cpp" in server else ""), ids


async def _discover(ports: dict[int, str], budget: float) -> list[Found]:
    tasks = {port: asyncio.ensure_future(_probe(port)) for port in ports}
    await asyncio.wait(tasks.values(), timeout=budget)
    found: list[Found] = []
    for port, task in tasks.items():
        if not task.done():
            task.cancel()
            continue
        if task.cancelled() or task.exception() is not None:
            continue
        result = task.result()
        if result and result[1]:
            found.append(Found(name=result[0] or ports[port], port=port, model_ids=result[1]))
    return found


def discover_local(
    *, ports: Mapping[int, str] | None = None, budget: float = 0.1, env: Mapping[str, str] | None = None
) -> list[Found]:
    """The local servers on loopback that list at least one model; never raises, at most ``budget`` s.

    Args:
        ports: Port -> provider name; default ``PI_CODER_DISCOVERY_PORTS`` or ``DEFAULT_PORTS``.
        budget: Total seconds for all probes together.
        env: Environment to read ``PI_CODER_DISCOVERY_PORTS`` from (default ``os.environ``).
    """
    table = dict(ports) if ports is not None else _ports(os.environ if env is None else env)
    if not table:
        return []

    def run() -> list[Found]:
        try:
            return asyncio.run(_discover(table, budget))
        except Exception:  # discovery is a convenience: any failure means "nothing found"
            return []

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return run()
    out: list[list[Found]] = []
    thread = threading.Thread(target=lambda: out.append(run()), daemon=True)
    thread.start()
    thread.join(budget + 0.5)
    return out[0] if out else []


def register_found(models: Models, found: list[Found]) -> None:
    """Register each server as a keyless ``openai-completions`` provider in ``models``."""
    for server in found:
        provider = Provider(
            name=server.name, api="openai-completions", base_url=server.base_url, requires_key=False
        )
        for model_id in server.model_ids:
            provider.upsert_model(
                Model(
                    id=model_id,
                    name=model_id,
                    api="openai-completions",
                    provider=server.name,
                    base_url=server.base_url,
                    context_window=32_768,
                    max_tokens=8_192,
                )
            )
        models.set_provider(provider)


def found_notice(found: list[Found]) -> str:
    """``found llama.cpp at 127.0.0.1:8080 with 1 model`` (one clause per server)."""
    parts = []
    for server in found:
        count = len(server.model_ids)
        parts.append(
            f"{server.label} at {LOOPBACK}:{server.port} with {count} model{'s' if count != 1 else ''}"
        )
    return "Found " + "; ".join(parts) + " (no API key needed; /model to switch)."
