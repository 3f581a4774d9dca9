"""``/login`` and ``/logout``: give a provider's API key without leaving pi.

The key goes to the private credentials file (``pi_coder.ai.credentials``), never to settings,
logs or the session. The key field is masked; after a login with no usable model, pi switches to
the provider's default model so the next prompt works.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pi_coder.ai.credentials import load_credentials, remove_credential, save_credential
from pi_coder.tui.screens.model_picker import reload_models

if TYPE_CHECKING:
    from pi_coder.ai.models import Models
    from pi_coder.ai.types import Model
    from pi_coder.tui.context import CommandContext

__all__ = ["login", "login_choices", "logout", "reload_models"]


def _key_source(models: Models, provider: str, stored: dict[str, str]) -> str:
    for name in models.env_vars(provider):
        if models._env.get(name):
            return f"{name} set"
    if provider.lower() in stored:
        return "key stored"
    if models.has_key(provider):
        return "key in models.toml"
    return ""


def login_choices(models: Models) -> list[tuple[str, str]]:
    """``(provider, key source)`` for every provider that takes a key, built-in ones first; the
    source (``"ANTHROPIC_API_KEY set"``, ``"key stored"``) is ``""`` when it has no key yet."""
    stored = load_credentials(models.credentials_path) if models.credentials_path is not None else {}
    out = []
    for provider in models.providers():
        if not provider.requires_key or not provider.models:
            continue
        out.append((provider.name, _key_source(models, provider.name, stored)))
    return out


def _default_model(app: CommandContext, provider: str) -> Model | None:
    from pi_coder.core.model_resolver import default_model_ids

    models = app.session.models
    record = models.get_provider(provider)
    if record is None or not record.models:
        return None
    wanted = default_model_ids().get(record.name)
    return next((m for m in record.models if m.id == wanted), record.models[0])


async def login(app: CommandContext, args: str) -> None:
    from pi_coder.tui.screens.dialogs import InputDialog

    models = app.session.models
    if models.credentials_path is None:
        await app.notice("/login: no model registry to store a key for", "error")
        return
    reload_models(app)
    choices = login_choices(models)
    provider = args.strip().lower()
    if provider and provider not in {name for name, _ in choices}:
        await app.notice(f"/login: unknown provider {provider!r} (one of: {', '.join(n for n, _ in choices)})", "error")
        return
    if not provider:
        from pi_coder.tui.screens.provider_picker import ProviderPicker

        chosen = await app.push_screen_wait(ProviderPicker(choices))
        if not chosen:
            return
        provider = chosen
    variables = " or ".join(models.env_vars(provider))
    message = f"Paste the API key for {provider}. It is stored in {models.credentials_path} (mode 0600)"
    message += f"; {variables} still takes precedence." if variables else "."
    key = await app.push_screen_wait(
        InputDialog(f"Log in: {provider}", message=message, password=True, placeholder="API key")
    )
    if not key:
        return
    try:
        save_credential(provider, key, models.credentials_path)
    except OSError as exc:
        await app.notice(f"/login: cannot write {models.credentials_path}: {exc.strerror or exc}", "error")
        return
    models.load_credentials()
    await app.notice(f"✓ Key for {provider} saved", "success")
    current = app.session.model
    if current is None or not models.has_key(current.provider):
        model = _default_model(app, provider)
        if model is not None:
            from pi_coder.tui.screens.navigation import switch_model

            switch_model(app, model)
    app.refresh_footer()


async def logout(app: CommandContext, args: str) -> None:
    from pi_coder.tui.screens.dialogs import ChoiceDialog

    models = app.session.models
    path = models.credentials_path
    stored = sorted(load_credentials(path)) if path is not None else []
    if not stored:
        await app.notice("No stored keys (keys from environment variables or models.toml stay).", "warning")
        return
    provider = args.strip().lower()
    if not provider:
        provider = await app.push_screen_wait(ChoiceDialog("Log out: provider", [(p, p) for p in stored]))
        if not provider:
            return
    if not remove_credential(provider, path):
        await app.notice(f"No stored key for {provider}", "warning")
        return
    models.load_credentials()
    await app.notice(f"✓ Key for {provider} removed from {path}", "success")
    app.refresh_footer()
