"""API keys: the environment variable of each provider and config-value resolution.

Resolution order for a provider's key (``Models.get_api_key``): explicit runtime override
(``--api-key``) → the provider's environment variable(s) → the ``api_key`` value in
models.toml. Keys are never logged or put in error messages.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
from collections.abc import Mapping

__all__ = [
    "ENV_API_KEYS",
    "SHELL_TIMEOUT_S",
    "clear_command_cache",
    "env_reference",
    "env_vars_for",
    "resolve_config_value",
]

ENV_API_KEYS: Mapping[str, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"),
    "openai": ("OPENAI_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "cerebras": ("CEREBRAS_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "google": ("GEMINI_API_KEY",),
    "zai": ("ZAI_API_KEY",),
    "huggingface": ("HF_TOKEN",),
    "vercel-ai-gateway": ("AI_GATEWAY_API_KEY",),
}
"""Environment variables per provider id, first match wins (Pi's ``env-api-keys``)."""

SHELL_TIMEOUT_S = 10.0
"""How long a ``!command`` key may run before it counts as failed."""

_ENV_REF = re.compile(r"^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))$")
_command_cache: dict[str, str | None] = {}


def env_vars_for(provider: str) -> tuple[str, ...]:
    """The environment variables that may hold ``provider``'s key (empty if none is known)."""
    return ENV_API_KEYS.get(provider.lower(), ())


def env_reference(value: str | None) -> str | None:
    """The variable name when ``value`` is a ``"$NAME"`` or ``"${NAME}"`` reference, else None."""
    match = _ENV_REF.match(value or "")
    return (match.group(1) or match.group(2)) if match is not None else None


def resolve_config_value(
    value: str | None, env: Mapping[str, str] | None = None, *, timeout: float | None = None
) -> str | None:
    """Resolve a key or header value written in a config file.

    - ``"$NAME"`` or ``"${NAME}"``: the environment variable (None when unset or empty).
    - ``"!command"``: the command's stripped stdout, run through the shell once per process
      (results are cached, failures too); None when it fails, times out
      (``SHELL_TIMEOUT_S``; the command's whole process group is killed then) or prints nothing.
    - anything else: the literal value (None for an empty string).

    Args:
        value: The configured value.
        env: Environment for ``$NAME`` and for the command; defaults to ``os.environ``.
        timeout: Seconds a ``!command`` may take (default ``SHELL_TIMEOUT_S``).

    Returns:
        The resolved value, or None.
    """
    if not value:
        return None
    import pi_coder.ai.secrets as secrets

    env = os.environ if env is None else env
    if value.startswith("!"):
        result = _run_command(value[1:].strip(), env, SHELL_TIMEOUT_S if timeout is None else timeout)
        secrets.remember(result)
        return result
    match = _ENV_REF.match(value)
    if match is not None:
        found = env.get(match.group(1) or match.group(2)) or None
        secrets.remember(found)
        return found
    return value


def _run_command(command: str, env: Mapping[str, str], timeout: float) -> str | None:
    if command in _command_cache:
        return _command_cache[command]
    result: str | None = None
    posix = os.name == "posix"
    try:
        # Its own process group: on timeout the shell and everything it started are killed,
        # not just the shell (a `sleep` child would keep running and hold the pipe open).
        proc = subprocess.Popen(
            command,
            shell=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env),
            start_new_session=posix,
        )
    except (OSError, subprocess.SubprocessError):
        proc = None
    if proc is not None:
        try:
            stdout, _ = proc.communicate(timeout=timeout)
            if proc.returncode == 0:
                result = stdout.decode("utf-8", "replace").strip() or None
        except subprocess.TimeoutExpired:
            _kill_group(proc, posix)
        except BaseException:
            _kill_group(proc, posix)
            raise
    _command_cache[command] = result
    return result


def _kill_group(proc: subprocess.Popen[bytes], posix: bool) -> None:
    if posix:
        import signal

        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
    else:
        proc.kill()
    with contextlib.suppress(subprocess.SubprocessError, OSError):
        proc.communicate(timeout=5)


def clear_command_cache() -> None:
    """Forget cached ``!command`` results (the next resolution runs the command again)."""
    _command_cache.clear()
