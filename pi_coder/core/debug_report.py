"""``/debug``: a dump of the session's state for a bug report, with no key in it.

The report names the model, provider, session file, folder, the settings files read, counts of
extensions, MCP servers, skills, tools and context files, and the versions of Python,
pi_coder, Textual and httpx. Keys never enter it: only whether a provider has one. As a second
guard, every key value known to the process (the environment's key/token variables, the
credentials file, ``--api-key``) is replaced by ``[redacted]`` in the finished text.
"""

from __future__ import annotations

import os
import platform
import sys
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pi_coder.paths import ensure_private_dir, logs_dir, write_atomic

__all__ = ["REDACTED", "debug_report", "redact", "secret_values", "write_debug_report"]

REDACTED = "[redacted]"
_SECRET_NAME_PARTS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL", "AUTH")
_MIN_SECRET = 8


def _version(distribution: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return "not installed"


def secret_values(models: Any, environ: Mapping[str, str] | None = None) -> set[str]:
    """Every key value this process knows of: key-like environment variables, stored and given keys."""
    env = os.environ if environ is None else environ
    found = {value for name, value in env.items() if any(part in name.upper() for part in _SECRET_NAME_PARTS)}
    stored = getattr(models, "stored_keys", None)
    if callable(stored):
        try:
            found.update(str(v) for v in stored().values())
        except Exception:  # an unreadable credentials file: nothing from it can leak either
            pass
    overrides = getattr(models, "_overrides", None)
    if isinstance(overrides, dict):
        found.update(str(v) for v in overrides.values())
    single = getattr(models, "_any_override", None)
    if isinstance(single, str):
        found.add(single)
    own_env = getattr(models, "_env", None)
    for provider in models.providers() if models is not None else ():
        configured = getattr(provider, "api_key", None)
        if isinstance(configured, str) and not configured.startswith(("$", "!")):
            found.add(configured)  # a literal key in models.toml
        if isinstance(own_env, Mapping):
            found.update(str(own_env[name]) for name in models.env_vars(provider.name) if own_env.get(name))
    return {value for value in found if len(value.strip()) >= _MIN_SECRET}


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with each secret value, and every key pi knows of, replaced by ``[redacted]``
    (the one redactor of ``pi_coder.ai.secrets``)."""
    from pi_coder.ai.secrets import Redactor

    return Redactor(secrets).text(text)


def _count(value: Any) -> int:
    try:
        return len(value)
    except TypeError:
        return 0


def _settings_lines(session: Any) -> list[str]:
    loaded = getattr(session, "loaded_settings", None)
    if loaded is None:
        return ["- Settings: given by the caller (no files read)"]
    lines = []
    for label, path in (("Global settings", loaded.global_path), ("Project settings", loaded.project_path)):
        state = "read" if Path(path).is_file() else "absent"
        lines.append(f"- {label}: {path} ({state})")
    lines.append(f"- Settings warnings: {len(loaded.warnings)}")
    lines += [f"  - {warning}" for warning in loaded.warnings[:10]]
    if loaded.unknown_keys:
        lines.append(f"- Unknown settings keys: {', '.join(loaded.unknown_keys[:20])}")
    return lines


def _provider_lines(session: Any) -> list[str]:
    models = getattr(session, "models", None)
    if models is None:
        return []
    lines = [f"- models.toml: {getattr(models, 'models_toml_path', None) or 'none'}"]
    keyed: list[str] = []
    keyless: list[str] = []
    for provider in models.providers():
        entry = f"{provider.name} ({len(provider.models)} models)"
        (keyed if models.has_key(provider.name) else keyless).append(entry)
    lines.append(f"- Providers with a key: {', '.join(keyed) or 'none'}")
    lines.append(f"- Providers without a key: {len(keyless)}")
    return lines


def debug_report(session: Any, *, extra: Iterable[str] = ()) -> str:
    """The report as Markdown (not yet redacted: :func:`write_debug_report` does that)."""
    model = session.model
    skills = getattr(session.skills, "skills", session.skills) or ()
    extensions = getattr(session.extensions, "extensions", None) or ()
    mcp = getattr(getattr(session, "mcp", None), "servers", None) or {}
    store = session.store
    lines = [
        "# pi debug report",
        "",
        f"- Time: {time.strftime('%Y-%m-%d %H:%M:%S %z')}",
        f"- pi_coder: {_version('pi-coder')}",
        f"- Python: {platform.python_version()} ({sys.executable})",
        f"- Platform: {platform.platform()}",
        f"- textual: {_version('textual')}",
        f"- httpx: {_version('httpx')}",
        "",
        "## Session",
        "",
        f"- Model: {model.id if model is not None else 'none'}",
        f"- Provider: {model.provider if model is not None else 'none'}",
        f"- API: {model.api if model is not None else 'none'}",
        f"- Thinking level: {session.thinking_level}",
        f"- Session file: {session.session_file or 'in memory'}",
        f"- Session id: {session.session_id}",
        f"- Folder: {session.cwd}",
        f"- Entries: {len(store.get_entries())}, messages in context: {len(session.messages)}",
        f"- Streaming: {session.is_streaming}, compacting: {session.is_compacting}",
        "",
        "## Configuration",
        "",
        *_settings_lines(session),
        *_provider_lines(session),
        f"- Tools: {', '.join(session.tool_names) or 'none'}",
        f"- Extensions: {_count(extensions)}",
        f"- MCP servers: {_count(mcp)}",
        f"- Skills: {_count(skills)}",
        f"- Prompt templates: {len(session.prompt_templates)}",
        f"- Context files: {len(session.context_files)}",
    ]
    extra = list(extra)
    if extra:
        lines += ["", "## Terminal", "", *extra]
    return "\n".join(lines) + "\n"


def write_debug_report(session: Any, *, extra: Iterable[str] = (), folder: Path | None = None) -> tuple[Path, str]:
    """Write the redacted report to ``pi-debug-<time>.md`` in the log folder (0600).

    Returns:
        The file and the text written.

    Raises:
        OSError: The folder or file cannot be written.
    """
    text = redact(debug_report(session, extra=extra), secret_values(getattr(session, "models", None)))
    directory = ensure_private_dir(folder if folder is not None else logs_dir())
    path = directory / f"pi-debug-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.md"
    write_atomic(path, text.encode("utf-8"))
    return path, text
