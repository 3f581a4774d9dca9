"""The Models collection: catalog, models.toml, keys, base URLs, dispatch, cost."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pi_coder.ai import (
    AssistantMessage,
    AssistantMessageEventStream,
    Context,
    DoneEvent,
    Model,
    ModelCost,
    Provider,
    StreamOptions,
    Usage,
    UserMessage,
    calculate_cost,
    create_models,
    faux_provider,
    keys,
)
from pi_coder.ai.catalog import BUILTIN_PROVIDERS
from pi_coder.errors import ConfigError

CTX = Context(messages=[UserMessage(content="hi")])


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PI_CODER_HOME", str(tmp_path))
    return tmp_path


def write_toml(home: Path, text: str) -> Path:
    path = home / "models.toml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


class Recorder:
    """A stream function that records its calls and answers "ok"."""

    def __init__(self) -> None:
        self.calls: list[tuple[Model, Context, StreamOptions | None]] = []

    def __call__(self, model: Model, context: Context, options: StreamOptions | None) -> AssistantMessageEventStream:
        self.calls.append((model, context, options))
        stream = AssistantMessageEventStream()
        message = AssistantMessage(api=model.api, provider=model.provider, model=model.id)
        stream.push(DoneEvent(reason="stop", message=message))
        return stream


async def events_of(stream: AssistantMessageEventStream) -> list[Any]:
    return [event async for event in stream]


# ---------------------------------------------------------------------------- catalog


def test_catalog_has_the_documented_anthropic_prices() -> None:
    models = create_models(env={}, models_toml=Path("/nonexistent/models.toml"))
    opus = models.get_model("anthropic", "claude-opus-4-6")
    assert opus is not None
    assert (opus.context_window, opus.max_tokens, opus.reasoning) == (1_000_000, 128_000, True)
    assert opus.cost == ModelCost(input=5, output=25, cache_read=0.5, cache_write=6.25)
    assert opus.api == "anthropic-messages" and opus.base_url == "https://api.anthropic.com"
    sonnet = models.get_model("anthropic", "claude-sonnet-4-5")
    assert sonnet is not None
    assert (sonnet.context_window, sonnet.max_tokens) == (200_000, 64_000)
    assert sonnet.cost == ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75)
    haiku = models.get_model("anthropic", "claude-haiku-4-5")
    assert haiku is not None and haiku.cost == ModelCost(input=1, output=5, cache_read=0.1, cache_write=1.25)
    assert "image" in sonnet.input


def test_catalog_covers_openai_and_compatible_providers() -> None:
    models = create_models(env={}, models_toml=Path("/nonexistent/models.toml"))
    for model_id in ["gpt-5.4", "gpt-5.2", "gpt-5.1", "gpt-5", "gpt-5-mini", "gpt-5-nano", "gpt-4.1", "gpt-4.1-mini", "gpt-4o", "gpt-4o-mini", "o3", "o4-mini"]:
        model = models.get_model("openai", model_id)
        assert model is not None, model_id
        assert model.api == "openai-responses" and model.base_url == "https://api.openai.com/v1"  # as Pi 1.6
        assert model.cost.input > 0 and model.cost.output > model.cost.input
    names = {p.name for p in models.providers()}
    assert {"anthropic", "openai", "openrouter", "groq", "xai", "cerebras", "mistral", "deepseek"} <= names
    for provider in models.providers():
        assert provider.base_url.startswith("https://")
        assert provider.env_vars, provider.name
        assert all(m.provider == provider.name and m.base_url == provider.base_url for m in provider.models)
    assert models.get_model("openai", "no-such-model") is None
    assert models.get_model("nobody", "gpt-5") is None


def test_catalog_is_pi16s() -> None:
    """Pi 1.6's defaults, windows, limits, level maps and prices (its bundled catalog)."""
    models = create_models(env={}, models_toml=Path("/nonexistent/models.toml"))
    defaults = {p.name: p.default_model for p in BUILTIN_PROVIDERS}
    assert (defaults["anthropic"], defaults["openai"], defaults["google"]) == ("claude-opus-5-5", "gpt-6.2-sol", "gemini-4-argon")
    opus = models.get_model("anthropic", "claude-opus-5-5")
    assert opus is not None and (opus.context_window, opus.max_tokens) == (1_000_000, 128_000)
    assert opus.cost == ModelCost(input=4, output=20, cache_read=0.2, cache_write=5)
    assert opus.thinking_level_map is not None and opus.thinking_level_map["max"] == "max"
    sonnet = models.get_model("anthropic", "claude-sonnet-5-5")
    assert sonnet is not None and sonnet.cost == ModelCost(input=2, output=10, cache_read=0.1, cache_write=2.5)
    sol = models.get_model("openai", "gpt-6.2-sol")
    assert sol is not None and (sol.api, sol.context_window, sol.max_tokens) == ("openai-responses", 272_000, 128_000)
    assert sol.cost == ModelCost(input=2, output=10, cache_read=0.1, cache_write=2.5)
    gemini = models.get_model("google", "gemini-2.5-pro")
    assert gemini is not None and gemini.api == "google-generative-ai" and gemini.context_window == 1_048_576
    assert gemini.base_url == "https://generativelanguage.googleapis.com/v1beta"
    assert models.get_model("google", "gemini-4-argon") is not None


def test_default_models_exist_in_the_catalog() -> None:
    models = create_models(env={}, models_toml=Path("/nonexistent/models.toml"))
    for info in BUILTIN_PROVIDERS:
        assert info.default_model is None or models.get_model(info.name, info.default_model) is not None


def test_each_collection_gets_fresh_model_objects() -> None:
    a = create_models(env={}, models_toml=Path("/nonexistent"))
    b = create_models(env={}, models_toml=Path("/nonexistent"))
    assert a.get_model("openai", "gpt-5") == b.get_model("openai", "gpt-5")
    assert a.get_model("openai", "gpt-5") is not b.get_model("openai", "gpt-5")


def test_find_models_ranks_exact_then_prefix_then_substring() -> None:
    models = create_models(env={}, models_toml=Path("/nonexistent"))
    assert models.find_models("gpt-5")[0].id == "gpt-5"
    assert models.find_models("anthropic/claude-haiku-4-5")[0].id == "claude-haiku-4-5"
    sonnet = [m.id for m in models.find_models("sonnet-4-5")]
    assert sonnet.index("claude-sonnet-4-5") < sonnet.index("claude-sonnet-4-5-20250929")
    assert [m.id for m in models.find_models("Claude Opus 4.6")] == ["claude-opus-4-6", "anthropic/claude-opus-4.6"]
    assert models.find_models("zzzz-nothing") == []
    assert "claude-haiku-4-5" in [m.id for m in models.find_models("clhaiku")]


# ---------------------------------------------------------------------------- keys


def test_key_resolution_order_override_then_env_then_toml(home: Path) -> None:
    write_toml(home, '[providers.openai]\napi_key = "from-toml"\n')
    assert create_models(env={}).get_api_key("openai") == "from-toml"
    assert create_models(env={"OPENAI_API_KEY": "from-env"}).get_api_key("openai") == "from-env"
    models = create_models(env={"OPENAI_API_KEY": "from-env"}, api_key_override={"openai": "from-flag"})
    assert models.get_api_key("openai") == "from-flag"
    assert models.get_api_key("anthropic") is None
    assert create_models(env={}, api_key_override="any").get_api_key("anthropic") == "any"
    models.set_api_key("openai", None)
    assert models.get_api_key("openai") == "from-env"


def test_anthropic_accepts_oauth_token_or_api_key() -> None:
    assert create_models(env={"ANTHROPIC_API_KEY": "k"}, models_toml=Path("/x")).get_api_key("anthropic") == "k"
    env = {"ANTHROPIC_OAUTH_TOKEN": "sk-ant-oat-1", "ANTHROPIC_API_KEY": "k"}
    assert create_models(env=env, models_toml=Path("/x")).get_api_key("anthropic") == "sk-ant-oat-1"


def test_resolve_config_value_forms(tmp_path: Path) -> None:
    env = {"MY_KEY": "secret", "EMPTY": ""}
    assert keys.resolve_config_value("literal-key", env) == "literal-key"
    assert keys.resolve_config_value("$MY_KEY", env) == "secret"
    assert keys.resolve_config_value("${MY_KEY}", env) == "secret"
    assert keys.resolve_config_value("$MISSING", env) is None
    assert keys.resolve_config_value("$EMPTY", env) is None
    assert keys.resolve_config_value("", env) is None
    assert keys.resolve_config_value(None, env) is None
    assert keys.resolve_config_value("sk-$notref-inside", env) == "sk-$notref-inside"


def test_shell_command_values_are_stripped_and_cached(tmp_path: Path) -> None:
    """``!cmd`` runs once per process; its stdout (stripped) is the value."""
    keys.clear_command_cache()
    counter = tmp_path / "count"
    command = f"!echo run >> {counter}; printf '  sk-from-cmd \\n'"
    assert keys.resolve_config_value(command, {"PATH": "/usr/bin:/bin"}) == "sk-from-cmd"
    assert keys.resolve_config_value(command, {"PATH": "/usr/bin:/bin"}) == "sk-from-cmd"
    assert counter.read_text().count("run") == 1
    assert keys.resolve_config_value("!exit 3", {"PATH": "/usr/bin:/bin"}) is None
    assert keys.resolve_config_value("!true", {"PATH": "/usr/bin:/bin"}) is None
    keys.clear_command_cache()


def test_shell_command_uses_the_given_environment() -> None:
    keys.clear_command_cache()
    assert keys.resolve_config_value("!printf %s \"$TOKEN_SRC\"", {"TOKEN_SRC": "abc", "PATH": "/usr/bin:/bin"}) == "abc"
    keys.clear_command_cache()


def test_shell_command_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    keys.clear_command_cache()
    monkeypatch.setattr(keys, "SHELL_TIMEOUT_S", 0.3)
    assert keys.resolve_config_value("!sleep 5; echo late", {"PATH": "/usr/bin:/bin"}) is None
    keys.clear_command_cache()


def test_toml_key_from_env_reference_and_command(home: Path) -> None:
    keys.clear_command_cache()
    write_toml(
        home,
        """
        [providers.groq]
        api_key = "${MY_GROQ}"
        [providers.xai]
        api_key = "!printf xai-key"
        """,
    )
    models = create_models(env={"MY_GROQ": "gsk", "PATH": "/usr/bin:/bin"})
    assert models.get_api_key("groq") == "gsk"
    assert models.get_api_key("xai") == "xai-key"
    keys.clear_command_cache()


def test_available_models_follow_keys(home: Path) -> None:
    write_toml(
        home,
        """
        [providers.local]
        api = "openai-completions"
        base_url = "http://127.0.0.1:8080/v1"
        api_key = "none"
        models = [{ id = "qwen2.5-coder", context_window = 32768, max_tokens = 8192 }]
        """,
    )
    models = create_models(env={})
    assert [(m.provider, m.id) for m in models.available_models()] == [("local", "qwen2.5-coder")]
    assert not models.has_key("anthropic")
    models = create_models(env={"ANTHROPIC_API_KEY": "k"})
    providers = {m.provider for m in models.available_models()}
    assert providers == {"anthropic", "local"}
    models.set_provider(faux_provider())
    assert models.has_key("faux")
    assert ("faux", "faux-1") in [(m.provider, m.id) for m in models.available_models()]


# ---------------------------------------------------------------------------- models.toml


def test_models_toml_new_provider_with_defaults(home: Path) -> None:
    write_toml(
        home,
        """
        [providers.local]
        api = "openai-completions"
        base_url = "http://127.0.0.1:8080/v1"
        api_key = "none"
        headers = { "X-Team" = "core" }

        [[providers.local.models]]
        id = "qwen2.5-coder"
        context_window = 32768
        max_tokens = 8192

        [[providers.local.models]]
        id = "big"
        name = "Big One"
        reasoning = true
        input = ["text", "image"]
        cost = { input = 1.5, output = 2, cache_read = 0.1, cache_write = 0 }
        compat = { maxTokensField = "max_tokens" }
        """,
    )
    models = create_models(env={})
    small = models.get_model("local", "qwen2.5-coder")
    assert small is not None
    assert (small.name, small.api, small.base_url) == ("qwen2.5-coder", "openai-completions", "http://127.0.0.1:8080/v1")
    assert (small.context_window, small.max_tokens, small.reasoning, small.input) == (32768, 8192, False, ["text"])
    big = models.get_model("local", "big")
    assert big is not None
    assert (big.name, big.reasoning, big.input) == ("Big One", True, ["text", "image"])
    assert big.cost == ModelCost(input=1.5, output=2, cache_read=0.1, cache_write=0)
    assert (big.context_window, big.max_tokens) == (128_000, 16_384)
    assert big.compat == {"maxTokensField": "max_tokens"}
    assert models.get_api_key("local") == "none"


def test_models_toml_overrides_builtin_base_url_key_and_upserts_models(home: Path) -> None:
    write_toml(
        home,
        """
        [providers.anthropic]
        base_url = "https://proxy.example/anthropic"
        api_key = "toml-key"
        models = [
          { id = "claude-sonnet-4-5", context_window = 1000000, max_tokens = 64000 },
          { id = "claude-next", name = "Claude Next" },
        ]
        """,
    )
    models = create_models(env={})
    provider = models.get_provider("anthropic")
    assert provider is not None
    assert all(m.base_url == "https://proxy.example/anthropic" for m in provider.models)
    sonnet = models.get_model("anthropic", "claude-sonnet-4-5")
    assert sonnet is not None and sonnet.context_window == 1_000_000
    assert sum(1 for m in provider.models if m.id == "claude-sonnet-4-5") == 1
    nxt = models.get_model("anthropic", "claude-next")
    assert nxt is not None and nxt.api == "anthropic-messages"
    assert models.get_model("anthropic", "claude-opus-4-6") is not None
    assert models.get_api_key("anthropic") == "toml-key"


def test_base_url_env_overrides_beat_toml_and_catalog(home: Path) -> None:
    write_toml(home, '[providers.openai]\nbase_url = "https://toml.example/v1"\n')
    env = {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9999/", "OPENAI_BASE_URL": "http://127.0.0.1:9998/v1"}
    models = create_models(env=env)
    assert models.get_model("anthropic", "claude-opus-4-6").base_url == "http://127.0.0.1:9999"  # type: ignore[union-attr]
    assert models.get_model("openai", "gpt-5").base_url == "http://127.0.0.1:9998/v1"  # type: ignore[union-attr]
    assert models.get_model("groq", "openai/gpt-oss-120b").base_url == "https://api.groq.com/openai/v1"  # type: ignore[union-attr]
    assert create_models(env={}).get_model("openai", "gpt-5").base_url == "https://toml.example/v1"  # type: ignore[union-attr]


def test_missing_models_toml_is_fine(home: Path) -> None:
    assert create_models(env={}).get_model("openai", "gpt-5") is not None


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("[providers.local\napi = 1", "line 1"),
        ('[providers.x]\napi = "openai-completions"\nbase_url = "u"\n[providers.x]\n', "line 4"),
        ('[providers.local]\nbase_url = "http://x"\n', "providers.local.api is required"),
        ('[providers.local]\napi = "openai-completions"\n', "providers.local.base_url is required"),
        ('[providers.local]\napi = "carrier-pigeon"\nbase_url = "x"\n', "'carrier-pigeon' is not supported"),
        ('[providers.openai]\nmodels = [{ name = "no id" }]\n', "providers.openai.models[0].id is required"),
        ('[providers.openai]\nmodels = [{ id = "m", context_window = "big" }]\n', "providers.openai.models[0].context_window"),
        ('[providers.openai]\nmodels = [{ id = "m", input = ["text", "audio"] }]\n', "providers.openai.models[0].input"),
        ('[providers.openai]\nmodels = [{ id = "m", cost = { input = -1 } }]\n', "providers.openai.models[0].cost.input"),
        ('[providers.openai]\nbase_ur1 = "typo"\n', "unknown key providers.openai.base_ur1"),
        ('[providers.openai]\napi_key = 5\n', "providers.openai.api_key must be a string"),
        ('model = "x"\n', "unknown top-level key 'model'"),
    ],
)
def test_invalid_models_toml_raises_one_line_config_error(home: Path, text: str, fragment: str) -> None:
    path = write_toml(home, text)
    with pytest.raises(ConfigError) as info:
        create_models(env={})
    message = str(info.value)
    assert "\n" not in message
    assert str(path) in message
    assert fragment in message


def test_explicit_models_toml_path(tmp_path: Path) -> None:
    path = tmp_path / "custom.toml"
    path.write_text('[providers.openai]\napi_key = "explicit"\n')
    assert create_models(env={}, models_toml=path).get_api_key("openai") == "explicit"


# ---------------------------------------------------------------------------- streaming


async def test_missing_key_gives_one_error_event_naming_the_env_var(home: Path) -> None:
    """No start, one error event; the message names the variable and the file, never a key."""
    models = create_models(env={"OPENAI_API_KEY": "sk-secret-openai-123"})
    model = models.get_model("anthropic", "claude-sonnet-4-5")
    assert model is not None
    stream = models.stream_simple(model, CTX, StreamOptions())
    events = await events_of(stream)
    assert [e.type for e in events] == ["error"]
    error = events[0].error
    assert error.stop_reason == "error" and events[0].reason == "error"
    assert "ANTHROPIC_API_KEY" in error.error_message
    assert str(home / "models.toml") in error.error_message
    assert "sk-secret" not in error.error_message
    assert (error.api, error.provider, error.model) == ("anthropic-messages", "anthropic", "claude-sonnet-4-5")
    assert await stream.result() is error


async def test_resolved_key_reaches_the_stream_function_without_mutating_options(home: Path) -> None:
    recorder = Recorder()
    models = create_models(env={"OPENAI_API_KEY": "sk-env"})
    models.register_api("openai-responses", recorder)
    model = models.get_model("openai", "gpt-5")
    assert model is not None
    options = StreamOptions(reasoning="high")
    result = await models.stream(model, CTX, options).result()
    assert result.stop_reason == "stop"
    called_model, called_context, called_options = recorder.calls[0]
    assert called_model is model and called_context is CTX
    assert called_options is not None and called_options.api_key == "sk-env" and called_options.reasoning == "high"
    assert options.api_key is None
    await models.stream(model, CTX, StreamOptions(api_key="explicit")).result()
    assert recorder.calls[1][2].api_key == "explicit"  # type: ignore[union-attr]


async def test_explicit_option_key_skips_the_missing_key_error(home: Path) -> None:
    recorder = Recorder()
    models = create_models(env={})
    models.register_api("anthropic-messages", recorder)
    model = models.get_model("anthropic", "claude-haiku-4-5")
    assert model is not None
    assert (await models.stream(model, CTX, StreamOptions(api_key="k")).result()).stop_reason == "stop"


async def test_provider_stream_function_wins_over_the_api_registry(home: Path) -> None:
    own, registry = Recorder(), Recorder()
    models = create_models(env={}, include_builtin=False)
    models.register_api("openai-completions", registry)
    model = Model(id="m", api="openai-completions", provider="mine")
    models.set_provider(Provider(name="mine", api="openai-completions", models=[model], stream=own, api_key="k"))
    await models.stream(model, CTX).result()
    assert len(own.calls) == 1 and registry.calls == []
    assert own.calls[0][2].api_key == "k"  # type: ignore[union-attr]


async def test_api_targets_are_imported_lazily_by_dotted_name(home: Path) -> None:
    """A ``module:function`` target is imported on first use only."""
    module = type(sys)("pi_coder_test_lazy_provider")
    recorder = Recorder()
    module.stream = recorder  # type: ignore[attr-defined]
    sys.modules["pi_coder_test_lazy_provider"] = module
    try:
        models = create_models(env={}, include_builtin=False)
        models.register_api("custom-api", "pi_coder_test_lazy_provider:stream")
        model = Model(id="m", api="custom-api", provider="p")
        models.set_provider(Provider(name="p", api="custom-api", models=[model], requires_key=False))
        await models.stream(model, CTX).result()
        assert len(recorder.calls) == 1
    finally:
        del sys.modules["pi_coder_test_lazy_provider"]


async def test_unknown_api_and_raising_stream_functions_become_error_events(home: Path) -> None:
    models = create_models(env={}, include_builtin=False)
    odd = Model(id="m", api="no-such-api", provider="p")
    models.set_provider(Provider(name="p", api="no-such-api", models=[odd], requires_key=False))
    events = await events_of(models.stream(odd, CTX))
    assert [e.type for e in events] == ["error"] and "no-such-api" in events[0].error.error_message

    def broken(model: Model, context: Context, options: StreamOptions | None) -> AssistantMessageEventStream:
        raise RuntimeError("wires crossed")

    models.set_provider(Provider(name="p", api="no-such-api", models=[odd], stream=broken, requires_key=False))
    events = await events_of(models.stream(odd, CTX))
    assert [e.type for e in events] == ["error"] and events[0].error.error_message == "wires crossed"


async def test_async_stream_functions_are_forwarded(home: Path) -> None:
    recorder = Recorder()

    async def later(model: Model, context: Context, options: StreamOptions | None) -> AssistantMessageEventStream:
        await asyncio.sleep(0)
        return recorder(model, context, options)

    async def failing(model: Model, context: Context, options: StreamOptions | None) -> AssistantMessageEventStream:
        raise ValueError("async boom")

    models = create_models(env={}, include_builtin=False)
    model = Model(id="m", api="x", provider="p")
    models.set_provider(Provider(name="p", api="x", models=[model], stream=later, requires_key=False))
    events = await asyncio.wait_for(events_of(models.stream(model, CTX)), 5)
    assert [e.type for e in events] == ["done"]
    models.set_provider(Provider(name="p", api="x", models=[model], stream=failing, requires_key=False))
    stream = models.stream(model, CTX)
    result = await asyncio.wait_for(stream.result(), 5)
    assert result.stop_reason == "error" and result.error_message == "async boom"


async def test_provider_headers_are_resolved_for_the_call(home: Path) -> None:
    write_toml(
        home,
        """
        [providers.local]
        api = "openai-completions"
        base_url = "http://127.0.0.1:1/v1"
        headers = { "X-Token" = "$HDR_TOKEN", "X-Static" = "s", "X-Gone" = "$UNSET_VAR" }
        models = [{ id = "m", headers = { "X-Model" = "mm" } }]
        """,
    )
    recorder = Recorder()
    models = create_models(env={"HDR_TOKEN": "tok"})
    models.register_api("openai-completions", recorder)
    model = models.get_model("local", "m")
    assert model is not None
    assert models.has_key("local")  # a custom provider without api_key needs no key
    await models.stream(model, CTX).result()
    sent = recorder.calls[0][0]
    assert sent.headers == {"X-Token": "tok", "X-Static": "s", "X-Model": "mm"}
    assert model.headers == {"X-Model": "mm"}
    assert recorder.calls[0][2].api_key is None  # type: ignore[union-attr]


async def test_faux_provider_through_models(home: Path) -> None:
    models = create_models(env={}, include_faux=True)
    model = models.get_model("faux", "faux-1")
    assert model is not None
    result = await models.stream_simple(model, Context(messages=[UserMessage(content="ping")])).result()
    assert result.text() == "You said: ping"


# ---------------------------------------------------------------------------- cost


def test_calculate_cost_prices_per_million_tokens() -> None:
    model = Model(id="m", api="a", provider="p", cost=ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75))
    usage = Usage(input=1_000_000, output=200_000, cache_read=500_000, cache_write=100_000)
    cost = calculate_cost(model, usage)
    assert cost is usage.cost
    assert cost.input == pytest.approx(3.0)
    assert cost.output == pytest.approx(3.0)
    assert cost.cache_read == pytest.approx(0.15)
    assert cost.cache_write == pytest.approx(0.375)
    assert cost.total == pytest.approx(6.525)
    zero = Usage()
    calculate_cost(model, zero)
    assert zero.cost.total == 0
