"""``pi auth ...`` and ``pi update --models ...``: small commands that run and exit.

- ``pi auth login <provider>``: read a key (hidden prompt on a terminal, else one line of stdin)
  and store it in the credentials file (``pi_coder.ai.credentials``, shared with ``/login``).
- ``pi auth logout <provider>``: forget the stored key.
- ``pi auth check``: for each provider, where its key comes from (never the key itself).
- ``pi update --models <url|path>``: read a catalog in Pi's published format and save it as the
  overlay beside models.toml. Only a URL makes a network call.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TextIO

__all__ = ["SUBCOMMANDS", "run_subcommand"]

SUBCOMMANDS = ("auth", "update")

_AUTH_USAGE = "usage: pi auth login <provider> | pi auth logout <provider> | pi auth check"
_UPDATE_USAGE = "usage: pi update --models <url|path>"


def run_subcommand(
    args: list[str],
    *,
    stdin: TextIO | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
    env: dict[str, str] | None = None,
) -> int:
    """Run ``pi <args>`` where ``args[0]`` is one of :data:`SUBCOMMANDS`; returns the exit code."""
    stdin = stdin or sys.stdin
    out = out or sys.stdout
    err = err or sys.stderr
    env = dict(os.environ) if env is None else env
    try:
        if args[0] == "auth":
            return _auth(args[1:], stdin, out, err, env)
        return _update(args[1:], out, err, env)
    except KeyboardInterrupt:
        print("pi: cancelled", file=err)
        return 130


def _models_toml(env: dict[str, str]) -> Path:
    home = env.get("PI_CODER_HOME")
    if home:
        return Path(home).expanduser() / "models.toml"
    from pi_coder.paths import config_dir

    return config_dir() / "models.toml"


def _auth(args: list[str], stdin: TextIO, out: TextIO, err: TextIO, env: dict[str, str]) -> int:
    from pi_coder.ai.credentials import remove_credential, save_credential
    from pi_coder.ai.models import create_models
    from pi_coder.errors import ConfigError

    path = _models_toml(env).with_name("credentials.json")
    action = args[0] if args else ""
    if action in ("login", "logout") and len(args) != 2:
        print(_AUTH_USAGE, file=err)
        return 2
    try:
        if action == "login":
            provider = args[1].lower()
            key = _read_key(provider, stdin, err)
            if not key:
                print("pi: no key given; nothing stored", file=err)
                return 1
            try:
                saved = save_credential(provider, key, path)
            except ValueError as exc:
                print(f"pi: {exc}", file=err)
                return 1
            print(f"Stored the API key for {provider} in {saved}", file=out)
            return 0
        if action == "logout":
            provider = args[1].lower()
            if remove_credential(provider, path):
                print(f"Removed the stored key for {provider} from {path}", file=out)
            else:
                print(f"No stored key for {provider} in {path}", file=out)
            return 0
        if action == "check":
            models = create_models(env=env, models_toml=_models_toml(env))
            models.credentials_path = path
            rows = []
            for known in models.providers():
                rows.append((known.name, _key_source(models, known.name, env)))
            width = max(len(name) for name, _ in rows)
            for name, source in rows:
                print(f"{name.ljust(width)}  {source}", file=out)
            return 0
    except ConfigError as exc:
        print(f"pi: {exc}", file=err)
        return 1
    print(_AUTH_USAGE, file=err)
    return 2


def _read_key(provider: str, stdin: TextIO, err: TextIO) -> str:
    if stdin.isatty():
        import getpass

        return getpass.getpass(f"API key for {provider} (input hidden): ", stream=err).strip()
    return stdin.readline().strip()


def _key_source(models: object, provider: str, env: dict[str, str]) -> str:
    from pi_coder.ai.models import Models

    assert isinstance(models, Models)
    for name in models.env_vars(provider):
        if env.get(name):
            return f"key from ${name}"
    if models.stored_keys().get(provider):
        return f"key stored in {models.credentials_path}"
    record = models.get_provider(provider)
    if record is not None and record.api_key and models.get_api_key(provider):
        return "key from models.toml"
    if record is not None and not record.requires_key:
        return "no key needed"
    hint = " or ".join(models.env_vars(provider))
    return (
        f"no key (set {hint} or run pi auth login {provider})"
        if hint
        else f"no key (pi auth login {provider})"
    )


def _update(args: list[str], out: TextIO, err: TextIO, env: dict[str, str]) -> int:
    from pi_coder.ai.catalog_file import overlay_path, parse_catalog
    from pi_coder.errors import ConfigError

    if len(args) != 2 or args[0] != "--models":
        print(_UPDATE_USAGE, file=err)
        return 2
    source = args[1]
    try:
        if source.startswith(("http://", "https://")):
            import httpx

            try:
                response = httpx.get(source, timeout=30, follow_redirects=True)
                response.raise_for_status()
            except httpx.HTTPError as exc:
                print(f"pi: cannot fetch {source}: {exc}", file=err)
                return 1
            text = response.text
        else:
            try:
                text = Path(source).expanduser().read_text(encoding="utf-8")
            except OSError as exc:
                print(f"pi: cannot read {source}: {exc.strerror or exc}", file=err)
                return 1
        try:
            data = json.loads(text)
        except ValueError as exc:
            print(f"pi: {source} is not JSON: {exc}", file=err)
            return 1
        found = parse_catalog(data)
    except ConfigError as exc:
        print(f"pi: {source}: {exc}", file=err)
        return 1
    target = overlay_path(_models_toml(env))
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data), encoding="utf-8")
    os.replace(tmp, target)
    providers = sorted({m.provider for m in found})
    print(f"Saved {len(found)} models ({', '.join(providers) or 'none usable'}) to {target}", file=out)
    return 0
