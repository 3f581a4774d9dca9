"""Provider records and the API registry (wire protocol id -> stream function).

Stream functions are registered by dotted string and imported on first use, so importing
``pi_coder.ai`` does not import httpx or any provider module.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeAlias

from pi_coder.ai.events import AssistantMessageEventStream
from pi_coder.ai.options import StreamOptions
from pi_coder.ai.types import Context, Model

__all__ = [
    "API_STREAMS",
    "Provider",
    "StreamFunction",
    "load_stream_function",
]

StreamFunction: TypeAlias = Callable[
    [Model, Context, StreamOptions | None],
    AssistantMessageEventStream | Awaitable[AssistantMessageEventStream],
]

API_STREAMS: dict[str, str] = {
    "anthropic-messages": "pi_coder.ai.providers.anthropic:stream",
    "openai-completions": "pi_coder.ai.providers.openai_completions:stream",
    "openai-responses": "pi_coder.ai.providers.openai_responses:stream",
    "google-generative-ai": "pi_coder.ai.providers.google:stream",
}
"""Built-in wire protocols and the ``module:function`` that streams each one."""

_loaded: dict[str, StreamFunction] = {}


def load_stream_function(target: str | StreamFunction) -> StreamFunction:
    """Import a ``"package.module:function"`` target (cached), or return a callable as is.

    Raises:
        ImportError: The module cannot be imported.
        AttributeError: The module has no such function.
    """
    if not isinstance(target, str):
        return target
    fn = _loaded.get(target)
    if fn is None:
        module_name, _, attr = target.partition(":")
        fn = getattr(importlib.import_module(module_name), attr or "stream")
        _loaded[target] = fn
    return fn


@dataclass(kw_only=True)
class Provider:
    """A provider as the ``Models`` collection knows it.

    ``Models.set_provider(provider)`` registers one (replacing any provider of the same name).
    Built-in providers and models.toml providers are ``Provider`` objects too; so is what
    ``faux_provider()`` returns.
    """

    name: str
    """Provider id, e.g. ``anthropic``; models refer to it by ``Model.provider``."""
    api: str
    """Default wire protocol of the provider's models (``anthropic-messages``, ``openai-completions``)."""
    base_url: str = ""
    api_key: str | None = None
    """Configured key: a literal, ``$ENV``/``${ENV}`` or ``!command`` (see ``resolve_config_value``)."""
    headers: dict[str, str] | None = None
    """Extra request headers; values are resolved like ``api_key``."""
    models: list[Model] = field(default_factory=list)
    stream: StreamFunction | str | None = None
    """Stream function (or ``module:function`` string) for this provider's models; when None,
    the function registered for ``model.api`` is used."""
    env_vars: tuple[str, ...] = ()
    """Environment variables that may hold the key, first match wins."""
    requires_key: bool = True
    """False for providers that work without a key (faux, keyless local servers)."""
    builtin: bool = False

    def get_model(self, model_id: str) -> Model | None:
        """The model with this id, or None."""
        for model in self.models:
            if model.id == model_id:
                return model
        return None

    def upsert_model(self, model: Model) -> None:
        """Replace the model with the same id, or append it."""
        for i, existing in enumerate(self.models):
            if existing.id == model.id:
                self.models[i] = model
                return
        self.models.append(model)

    def __repr__(self) -> str:  # never show the key
        return f"Provider(name={self.name!r}, api={self.api!r}, base_url={self.base_url!r}, models={len(self.models)})"
