"""The Models collection: providers, model lookup, key resolution and stream dispatch.

``create_models()`` builds a collection from the built-in catalog, models.toml and the
environment. A provider is a ``Provider`` record (``pi_coder.ai.registry``); ``set_provider``
registers one (``faux_provider()`` returns one too). ``stream``/``stream_simple`` resolve the
API key, then hand the call to the provider's own stream function if it has one, otherwise to
the function registered for ``model.api`` (imported on first use). They never raise: a
missing key or a broken provider becomes a stream holding one ``error`` event.

Precedence: keys come from the runtime override, then the environment, then models.toml.
Base URLs come from ``ANTHROPIC_BASE_URL``/``OPENAI_BASE_URL``, then models.toml, then the
catalog.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import re
import tomllib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Literal, Required, TypeAlias, TypedDict

import pi_coder.ai.keys as keys
import pi_coder.ai.secrets as secrets
from pi_coder.ai.catalog import BUILTIN_PROVIDERS, builtin_models
from pi_coder.ai.cost import calculate_cost
from pi_coder.ai.events import AssistantMessageEventStream, ErrorEvent
from pi_coder.ai.options import StreamOptions
from pi_coder.ai.registry import API_STREAMS, Provider, StreamFunction, load_stream_function
from pi_coder.ai.types import AssistantMessage, Context, Model, ModelCost
from pi_coder.errors import ConfigError
from pi_coder.json_types import JsonObject

__all__ = [
    "ModelTable",
    "Models",
    "ProviderTable",
    "apply_provider_tables",
    "calculate_cost",
    "create_models",
    "error_stream",
    "load_models_toml",
]


def error_stream(model: Model, message: str) -> AssistantMessageEventStream:
    """A stream holding only an ``error`` event (no ``start``) with ``message`` as errorMessage."""
    stream = AssistantMessageEventStream()
    stream.push(ErrorEvent(reason="error", error=_error_message(model, message)))
    return stream


def _error_message(model: Model, message: str) -> AssistantMessage:
    return AssistantMessage(
        api=model.api,
        provider=model.provider,
        model=model.id,
        stop_reason="error",
        error_message=message,
    )


_background: set[asyncio.Task[None]] = set()


def _forward(awaitable: Awaitable[AssistantMessageEventStream], model: Model) -> AssistantMessageEventStream:
    """Adapt a stream function that returns an awaitable of a stream."""
    out = AssistantMessageEventStream()

    async def run() -> None:
        try:
            inner = await awaitable
            async for event in inner:
                out.push(event)
        except Exception as exc:  # providers must not raise; encode it as the protocol says
            out.push(ErrorEvent(reason="error", error=_error_message(model, _describe(exc))))
        out.end()

    task = asyncio.ensure_future(run())
    _background.add(task)
    task.add_done_callback(_background.discard)
    return out


def _describe(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


_DATED = re.compile(r"-\d{8}$")


class Models:
    """A collection of providers and their models.

    Build one with ``create_models()``. ``stream_simple`` (bound) is a valid agent ``StreamFn``.
    """

    def __init__(
        self,
        *,
        env: Mapping[str, str] | None = None,
        api_key_override: Mapping[str, str] | str | None = None,
        models_toml_path: Path | None = None,
    ) -> None:
        self._providers: dict[str, Provider] = {}
        self._env: Mapping[str, str] = os.environ if env is None else env
        self._apis: dict[str, StreamFunction | str] = dict(API_STREAMS)
        self._overrides: dict[str, str] = {}
        self._any_override: str | None = None
        if isinstance(api_key_override, str):
            self._any_override = api_key_override or None
        elif api_key_override:
            self._overrides = {k.lower(): v for k, v in api_key_override.items() if v}
        self.models_toml_path = models_toml_path
        """Where models.toml was looked for (named in missing-key messages)."""
        self.credentials_path: Path | None = (
            models_toml_path.with_name("credentials.json") if models_toml_path is not None else None
        )
        """The stored-keys file (``pi auth login``, ``/login``): beside models.toml; read on first use."""
        self._stored: dict[str, str] | None = None
        self.credentials_problem: str | None = None
        """What is wrong with the credentials file when it exists but cannot be used (names the file)."""

    # ------------------------------------------------------------------ providers

    def set_provider(self, provider: Provider) -> None:
        """Register ``provider``, replacing any provider with the same name."""
        self._providers[provider.name] = provider

    def remove_provider(self, name: str) -> None:
        self._providers.pop(name, None)

    def get_provider(self, name: str) -> Provider | None:
        """The provider with this name (case-insensitive), or None."""
        provider = self._providers.get(name)
        if provider is None:
            lowered = name.lower()
            provider = next((p for p in self._providers.values() if p.name.lower() == lowered), None)
        return provider

    def providers(self) -> list[Provider]:
        """Registered providers, in registration order."""
        return list(self._providers.values())

    def has_api(self, api: str) -> bool:
        """Whether a stream function is registered for ``api`` (built-in or ``register_api``)."""
        return api in self._apis

    def register_api(self, api: str, stream: StreamFunction | str) -> None:
        """Route models whose ``api`` is ``api`` to ``stream`` (a function or ``module:function``)."""
        self._apis[api] = stream

    # ------------------------------------------------------------------ models

    def get_model(self, provider: str, model_id: str) -> Model | None:
        """The model ``model_id`` of ``provider``, or None."""
        record = self.get_provider(provider)
        return record.get_model(model_id) if record is not None else None

    def all_models(self) -> list[Model]:
        """Every model of every provider."""
        return [m for p in self._providers.values() for m in p.models]

    def available_models(self) -> list[Model]:
        """Models whose provider has a key (or needs none)."""
        return [m for p in self._providers.values() if self.has_key(p.name) for m in p.models]

    def find_models(self, pattern: str, *, available_only: bool = False) -> list[Model]:
        """Models matching ``pattern`` on id, name or ``provider/id``, best match first.

        Case-insensitive. Ranking: exact ``provider/id`` or id, then prefix, then substring
        (alias ids before dated ids like ``-20250929``), then name substring; when nothing
        matches as a substring, characters in order (``cs45`` finds ``claude-sonnet-4-5``).
        Ties keep catalog order (newest first).

        Args:
            pattern: What the user typed.
            available_only: Only models whose provider has a key.

        Returns:
            The matches, best first; empty when nothing matches.
        """
        needle = pattern.strip().lower()
        pool = self.available_models() if available_only else self.all_models()
        if not needle:
            return pool
        ranked: list[tuple[int, int, Model]] = []
        for index, model in enumerate(pool):
            rank = _rank(model, needle)
            if rank is not None:
                ranked.append((rank, index, model))
        if not ranked:
            ranked = [(9, i, m) for i, m in enumerate(pool) if _subsequence(needle, _key(m))]
        ranked.sort(key=lambda item: (item[0], item[1]))
        return [m for _, _, m in ranked]

    # ------------------------------------------------------------------ keys

    def set_api_key(self, provider: str, key: str | None) -> None:
        """Set (or clear with None) the runtime key of ``provider``; it beats env and config."""
        secrets.remember(key)
        if key:
            self._overrides[provider.lower()] = key
        else:
            self._overrides.pop(provider.lower(), None)

    def env_vars(self, provider: str) -> tuple[str, ...]:
        """The environment variables that may hold ``provider``'s key."""
        record = self.get_provider(provider)
        if record is not None and record.env_vars:
            return record.env_vars
        return keys.env_vars_for(provider)

    def stored_keys(self) -> dict[str, str]:
        """The keys in the credentials file (read once; an unreadable file counts as empty and
        ``credentials_problem`` says why)."""
        if self._stored is None:
            self._stored = {}
            if self.credentials_path is not None:
                from pi_coder.ai.credentials import load_credentials
                from pi_coder.errors import ConfigError

                try:
                    self._stored = load_credentials(self.credentials_path)
                    self.credentials_problem = None
                except ConfigError as exc:
                    self._stored = {}
                    self.credentials_problem = str(exc)
        return self._stored

    def reload_credentials(self) -> None:
        """Read the credentials file again on next use (after ``/login`` or ``/logout``)."""
        self._stored = None

    def get_api_key(self, provider: str) -> str | None:
        """``provider``'s key: runtime override, then environment variable, then the credentials
        file, then models.toml.

        Returns:
            The key, or None when none is configured.
        """
        key = self._find_api_key(provider)
        secrets.remember(key)  # whatever its shape, it never reaches a file (ai/secrets.py)
        return key

    def _find_api_key(self, provider: str) -> str | None:
        override = self._overrides.get(provider.lower()) or self._any_override
        if override:
            return override
        for name in self.env_vars(provider):
            value = self._env.get(name)
            if value:
                return value
        stored = self.stored_keys().get(provider.lower())
        if stored:
            return stored
        record = self.get_provider(provider)
        if record is not None and record.api_key:
            return keys.resolve_config_value(record.api_key, self._env)
        return None

    def remember_keys(self) -> None:
        """Remember every key value configured without running anything: ``--api-key``, the
        providers' environment variables, ``credentials.json`` and literal models.toml keys."""
        for value in (*self._overrides.values(), self._any_override, *self.stored_keys().values()):
            secrets.remember(value)
        for record in self.providers():
            for name in self.env_vars(record.name):
                secrets.remember(self._env.get(name))
            if record.api_key and not record.api_key.startswith(("$", "!")):
                secrets.remember(record.api_key)

    def load_credentials(self) -> None:
        """(Re-)read the credentials file now (``/login``, ``/logout``)."""
        self.reload_credentials()
        self.stored_keys()

    def reload(self) -> None:
        """Re-read models.toml and the credentials file (``/model``, ``/login`` while running).

        Providers and models added to models.toml appear; ones removed stay until restart.

        Raises:
            ConfigError: models.toml is invalid (nothing is changed then).
        """
        if self.models_toml_path is not None:
            apply_provider_tables(self, load_models_toml(self.models_toml_path), self.models_toml_path)
        self.load_credentials()

    def has_key(self, provider: str) -> bool:
        """Whether ``provider`` can be called: it has a key, or needs none (faux, keyless local)."""
        record = self.get_provider(provider)
        if record is not None and not record.requires_key:
            return True
        return self.get_api_key(provider) is not None

    def missing_key_message(self, provider: str) -> str:
        """The user-facing explanation of a missing key (names the variable, never a key)."""
        names = sorted(self.env_vars(provider), key=lambda n: not n.endswith("_API_KEY"))
        where = f" in {self.models_toml_path}" if self.models_toml_path is not None else " in models.toml"
        record = self.get_provider(provider)
        configured = record.api_key if record is not None else None
        if configured:  # api_key is set but gave nothing: say why, not "add api_key"
            table = f"[providers.{provider}]{where}"
            variable = keys.env_reference(configured)
            if variable is not None:
                return (
                    f'No API key for provider "{provider}": its api_key is ${variable}, which is not set. '
                    f"Export {variable}, or change api_key in {table}."
                )
            if configured.startswith("!"):
                return (
                    f'No API key for provider "{provider}": its api_key command failed or printed nothing. '
                    f"Run the command of api_key in {table} in a shell to see why."
                )
        self.stored_keys()
        if self.credentials_problem is not None:  # the stored key may be there, in a file we cannot use
            return f'No API key for provider "{provider}": {self.credentials_problem}.'
        if names:
            return (
                f'No API key for provider "{provider}". Set {" or ".join(names)}, '
                f"or add api_key to [providers.{provider}]{where}."
            )
        return f'No API key for provider "{provider}". Add api_key to [providers.{provider}]{where}.'

    # ------------------------------------------------------------------ streaming

    def stream(
        self, model: Model, context: Context, options: StreamOptions | None = None
    ) -> AssistantMessageEventStream:
        """Stream one assistant response from ``model``; never raises.

        The key is resolved when ``options.api_key`` is None (the caller's options object is
        not modified). A missing key, an unknown API or a stream function that raises gives a
        stream with a single ``error`` event.

        Args:
            model: The model to call.
            context: The transcript (``Context(messages=...)``).
            options: Stream options (signal, reasoning, api_key, ...).

        Returns:
            The event stream; ``await stream.result()`` gives the final message.
        """
        options = options if options is not None else StreamOptions()
        provider = self.get_provider(model.provider)
        target = provider.stream if provider is not None and provider.stream is not None else None
        if target is None:
            target = self._apis.get(model.api)
            if target is None:
                return error_stream(model, f'No stream function registered for API "{model.api}".')
        if options.api_key is None:
            key = self.get_api_key(model.provider)
            if key is not None:
                options = replace(options, api_key=key)
            elif provider is None or provider.requires_key:
                return error_stream(model, self.missing_key_message(model.provider))
        try:
            fn = load_stream_function(target)
            result = fn(self._with_headers(model, provider), context, options)
        except Exception as exc:  # a stream function must not raise; keep the promise
            return error_stream(model, _describe(exc))
        if inspect.isawaitable(result):
            return _forward(result, model)
        return result

    def stream_simple(
        self, model: Model, context: Context, options: StreamOptions | None = None
    ) -> AssistantMessageEventStream:
        """Same as ``stream`` (``StreamOptions`` already carries ``reasoning``); Pi's name."""
        return self.stream(model, context, options)

    def _with_headers(self, model: Model, provider: Provider | None) -> Model:
        raw = {**((provider.headers or {}) if provider is not None else {}), **(model.headers or {})}
        if not raw:
            return model
        resolved = {k: v for k, v in ((k, keys.resolve_config_value(v, self._env)) for k, v in raw.items()) if v}
        if resolved == model.headers:
            return model
        return model.model_copy(update={"headers": resolved})


def _key(model: Model) -> str:
    return f"{model.provider}/{model.id}".lower()


def _rank(model: Model, needle: str) -> int | None:
    model_id, full, name = model.id.lower(), _key(model), model.name.lower()
    dated = 1 if _DATED.search(model_id) else 0
    if needle in (model_id, full):
        return 0
    if model_id.startswith(needle) or full.startswith(needle):
        return 1 + dated
    if needle in model_id or needle in full:
        return 3 + dated
    if needle in name:
        return 5 + dated
    return None


def _subsequence(needle: str, haystack: str) -> bool:
    it = iter(haystack)
    return all(ch in it for ch in needle)


# ---------------------------------------------------------------------- models.toml

class ModelTable(TypedDict, total=False):
    """A model of a provider table: a ``[[providers.<name>.models]]`` entry of models.toml, or
    one of ``pi.register_provider(models=[...])``."""

    id: Required[str]
    name: str
    api: str
    reasoning: bool
    input: list[Literal["text", "image"]]
    cost: dict[str, float]
    """USD per million tokens: ``input``, ``output``, ``cache_read``, ``cache_write``."""
    context_window: int
    max_tokens: int
    headers: dict[str, str]
    compat: JsonObject
    thinking_level_map: dict[str, str | None]


class ProviderTable(TypedDict, total=False):
    """A provider in models.toml terms: a ``[providers.<name>]`` table, or what an extension's
    ``pi.register_provider`` gives (keys it left out are absent)."""

    api: str
    base_url: str
    api_key: str
    headers: dict[str, str]
    models: list[ModelTable]
    compat: JsonObject


_PROVIDER_KEYS = {"api", "base_url", "api_key", "headers", "models", "compat"}
_MODEL_KEYS = {
    "id", "name", "api", "reasoning", "input", "cost", "context_window", "max_tokens",
    "headers", "compat", "thinking_level_map",
}  # fmt: skip
_COST_KEYS = {"input", "output", "cache_read", "cache_write"}

_Fail: TypeAlias = Callable[[str], ConfigError]
"""Builds the error for a bad value, its message prefixed with where the table came from."""


def load_models_toml(path: Path) -> dict[str, ProviderTable]:
    """Read and check models.toml; a missing file is an empty configuration.

    Args:
        path: The file.

    Returns:
        The ``providers`` table: provider name -> provider table (checked to have that shape).

    Raises:
        ConfigError: Unreadable file, invalid TOML (with line and column) or a wrong key or
            value (with its dotted path). The message is one line and names the file.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None

    def fail(message: str) -> ConfigError:
        return ConfigError(f"{path}: {message}")

    unknown = set(data) - {"providers"}
    if unknown:
        raise fail(f"unknown top-level key {sorted(unknown)[0]!r} (expected [providers.<name>])")
    providers = data.get("providers", {})
    if not isinstance(providers, dict):
        raise fail("providers must be a table")
    for name, table in providers.items():
        where = f"providers.{name}"
        if not isinstance(table, dict):
            raise fail(f"{where} must be a table")
        _check_keys(table, _PROVIDER_KEYS, where, fail)
        for key in ("api", "base_url", "api_key"):
            _check_type(table, key, str, where, fail)
        _check_str_map(table, "headers", where, fail)
        _check_type(table, "compat", dict, where, fail)
        models = table.get("models", [])
        if not isinstance(models, list):
            raise fail(f"{where}.models must be an array of tables")
        for i, entry in enumerate(models):
            mwhere = f"{where}.models[{i}]"
            if not isinstance(entry, dict):
                raise fail(f"{mwhere} must be a table")
            _check_keys(entry, _MODEL_KEYS, mwhere, fail)
            if not isinstance(entry.get("id"), str) or not entry["id"]:
                raise fail(f"{mwhere}.id is required (a non-empty string)")
            for key in ("name", "api"):
                _check_type(entry, key, str, mwhere, fail)
            _check_type(entry, "reasoning", bool, mwhere, fail)
            for key in ("context_window", "max_tokens"):
                value = entry.get(key)
                if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value <= 0):
                    raise fail(f"{mwhere}.{key} must be a positive integer")
            inputs = entry.get("input")
            if inputs is not None and (
                not isinstance(inputs, list) or not inputs or any(x not in ("text", "image") for x in inputs)
            ):
                raise fail(f'{mwhere}.input must be a list of "text" and "image"')
            cost = entry.get("cost")
            if cost is not None:
                if not isinstance(cost, dict):
                    raise fail(f"{mwhere}.cost must be a table")
                _check_keys(cost, _COST_KEYS, f"{mwhere}.cost", fail)
                for key, value in cost.items():
                    if not isinstance(value, int | float) or isinstance(value, bool) or value < 0:
                        raise fail(f"{mwhere}.cost.{key} must be a non-negative number")
            _check_str_map(entry, "headers", mwhere, fail)
            _check_type(entry, "compat", dict, mwhere, fail)
            _check_type(entry, "thinking_level_map", dict, mwhere, fail)
    return providers


def _check_base_url(url: str, where: str, fail: _Fail) -> None:
    """A base URL httpx can use, so a typo is a config error now rather than a connection error later."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (raises ValueError for a port that is not a number in range)
    except ValueError as exc:
        raise fail(f"{where}.base_url {url!r} is not a valid URL ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise fail(f'{where}.base_url {url!r} must start with http:// or https:// and name a host')


def _check_keys(table: Mapping[str, object], allowed: set[str], where: str, fail: _Fail) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise fail(f"unknown key {where}.{unknown[0]} (allowed: {', '.join(sorted(allowed))})")


def _check_type(table: Mapping[str, object], key: str, kind: type, where: str, fail: _Fail) -> None:
    value = table.get(key)
    if value is not None and not isinstance(value, kind):
        names = {str: "a string", bool: "true or false", dict: "a table"}
        raise fail(f"{where}.{key} must be {names.get(kind, kind.__name__)}")


def _check_str_map(table: Mapping[str, object], key: str, where: str, fail: _Fail) -> None:
    value = table.get(key)
    if value is not None and (not isinstance(value, dict) or any(not isinstance(v, str) for v in value.values())):
        raise fail(f"{where}.{key} must be a table of strings")


def _model_from_config(entry: ModelTable, provider: Provider, compat: JsonObject | None) -> Model:
    cost = entry.get("cost") or {}
    merged_compat = {**(compat or {}), **(entry.get("compat") or {})} or None
    return Model(
        id=entry["id"],
        name=entry.get("name") or entry["id"],
        api=entry.get("api") or provider.api,
        provider=provider.name,
        base_url=provider.base_url,
        reasoning=entry.get("reasoning", False),
        input=entry.get("input") or ["text"],
        cost=ModelCost(**{k: float(v) for k, v in cost.items()}),
        context_window=entry.get("context_window", 128_000),
        max_tokens=entry.get("max_tokens", 16_384),
        headers=entry.get("headers"),
        compat=merged_compat,
        thinking_level_map=entry.get("thinking_level_map"),
    )


def _set_base_url(provider: Provider, base_url: str) -> None:
    old = provider.base_url
    provider.base_url = base_url
    for i, model in enumerate(provider.models):
        if model.base_url in (old, ""):
            provider.models[i] = model.model_copy(update={"base_url": base_url})


def apply_provider_tables(models: Models, providers: Mapping[str, ProviderTable], path: Path) -> None:
    """Apply ``[providers.<name>]`` tables (``models.toml`` terms) to ``models``; ``path`` names their source in errors."""
    for name, table in providers.items():
        provider = models.get_provider(name)
        api = table.get("api")
        if api is not None and not models.has_api(api):
            raise ConfigError(
                f"{path}: providers.{name}.api {api!r} is not supported (use {' or '.join(sorted(API_STREAMS))})"
            )
        for i, entry in enumerate(table.get("models", [])):
            if entry.get("api") is not None and not models.has_api(entry["api"]):
                raise ConfigError(f"{path}: providers.{name}.models[{i}].api {entry['api']!r} is not supported")
        if table.get("base_url"):
            _check_base_url(table["base_url"], f"providers.{name}", lambda message: ConfigError(f"{path}: {message}"))
        if provider is None:
            if not api:
                raise ConfigError(f"{path}: providers.{name}.api is required for a new provider")
            if not table.get("base_url") and api in API_STREAMS:  # a registered stream function needs no URL
                raise ConfigError(f"{path}: providers.{name}.base_url is required for a new provider")
            provider = Provider(
                name=name,
                api=api,
                base_url=table.get("base_url") or "",
                env_vars=keys.env_vars_for(name),
                requires_key="api_key" in table or bool(keys.env_vars_for(name)),
            )
            models.set_provider(provider)
        else:
            if table.get("api"):
                provider.api = table["api"]
            if table.get("base_url"):
                _set_base_url(provider, table["base_url"])
        if "api_key" in table:
            provider.api_key = table["api_key"]
        if table.get("headers"):
            provider.headers = {**(provider.headers or {}), **table["headers"]}
        compat = table.get("compat")
        for entry in table.get("models", []):
            provider.upsert_model(_model_from_config(entry, provider, compat))


def _apply_catalog_overlay(models: Models, models_toml: Path) -> None:
    """Models from ``pi update --models`` (beside models.toml) join their built-in provider."""
    overlay = models_toml.with_name("models-catalog.json")
    if not overlay.exists():
        return
    from pi_coder.ai.catalog_file import read_overlay

    for model in read_overlay(overlay):
        provider = models.get_provider(model.provider)
        if provider is None or not provider.builtin:
            continue
        old = provider.get_model(model.id)
        model.base_url = provider.base_url
        if old is not None and model.compat is None:
            model.compat = old.compat
        elif old is None and provider.models and provider.models[0].compat:
            model.compat = dict(provider.models[0].compat)
        model.api = provider.api  # the protocol pi_coder speaks to this provider (OpenRouter: one)
        provider.upsert_model(model)


def _default_models_toml(env: Mapping[str, str]) -> Path:
    home = env.get("PI_CODER_HOME")
    if home:
        return Path(home).expanduser() / "models.toml"
    from pi_coder.paths import config_dir

    return config_dir() / "models.toml"


def create_models(
    *,
    models_toml: Path | None = None,
    api_key_override: Mapping[str, str] | str | None = None,
    env: Mapping[str, str] | None = None,
    include_builtin: bool = True,
    include_faux: bool = False,
) -> Models:
    """Build the Models collection.

    Args:
        models_toml: models.toml to read; None means ``<config dir>/models.toml``
            (``$PI_CODER_HOME/models.toml`` when set). A missing file is fine.
        api_key_override: Runtime keys (``--api-key``): ``{provider: key}``, or one string
            used for every provider (only pass a string when a single provider will be used).
        env: Environment for keys and base-URL overrides; defaults to ``os.environ``.
        include_builtin: Register the built-in catalog providers.
        include_faux: Also register ``faux_provider()`` (the demo echo script) as ``faux``.

    Returns:
        The collection.

    Raises:
        ConfigError: models.toml is invalid.
    """
    env = os.environ if env is None else env
    path = Path(models_toml) if models_toml is not None else _default_models_toml(env)
    models = Models(env=env, api_key_override=api_key_override, models_toml_path=path)
    if include_builtin:
        for info in BUILTIN_PROVIDERS:
            models.set_provider(
                Provider(
                    name=info.name,
                    api=info.api,
                    base_url=info.base_url,
                    models=builtin_models(info),
                    env_vars=keys.env_vars_for(info.name),
                    builtin=True,
                )
            )
        _apply_catalog_overlay(models, path)
    apply_provider_tables(models, load_models_toml(path), path)
    models.credentials_path = path.parent / "credentials.json"
    for info in BUILTIN_PROVIDERS:
        override = env.get(info.base_url_env) if info.base_url_env else None
        provider = models.get_provider(info.name)
        if override and provider is not None:
            _set_base_url(provider, override.rstrip("/"))
    if include_faux:
        from pi_coder.ai.providers.faux import faux_provider

        models.set_provider(faux_provider())
    models.remember_keys()
    return models
