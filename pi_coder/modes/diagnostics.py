"""``--verbose``: start-up diagnostics on stderr (settings files, models, context files, timings)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_coder.core.agent_session import AgentSession
    from pi_coder.core.startup import StartupPlan
    from pi_coder.settings import LoadedSettings

__all__ = ["print_startup_diagnostics", "startup_diagnostics"]


def startup_diagnostics(
    plan: StartupPlan, session: AgentSession, loaded: LoadedSettings, *, elapsed: float
) -> list[str]:
    """The lines ``--verbose`` prints, each starting with ``[verbose]``; never a key."""
    lines = []
    for label, path in (("global", loaded.global_path), ("project", loaded.project_path)):
        state = "read" if path.is_file() else "absent"
        lines.append(f"settings ({label}): {path} ({state})")
    lines.extend(f"settings warning: {warning}" for warning in loaded.warnings)
    model = plan.model
    chosen = f"{model.provider}/{model.id}" if model is not None else "none"
    lines.append(f"model: {chosen} (thinking {session.thinking_level})")
    available = plan.models.available_models()
    lines.append(f"models with a key: {len(available)}")
    if plan.scoped_models:
        lines.append("scoped models: " + ", ".join(f"{m.provider}/{m.id}" for m, _ in plan.scoped_models))
    lines.append("tools: " + (", ".join(session.tool_names) or "none"))
    lines.append("context files: " + (", ".join(session.context_files) or "none"))
    lines.append(f"prompt templates: {len(session.prompt_templates)}")
    packages = getattr(session.discovered_paths, "packages", None) or []
    lines.extend(f"package: {line}" for line in packages)
    store = plan.store
    where = store.session_file if store.is_persisted else "not saved"
    lines.append(f"session: {store.session_id} ({where})")
    lines.append(f"start-up took {elapsed * 1000:.0f} ms")
    return [f"[verbose] {line}" for line in lines]


def print_startup_diagnostics(
    plan: StartupPlan, session: AgentSession, loaded: LoadedSettings, *, elapsed: float
) -> None:
    for line in startup_diagnostics(plan, session, loaded, elapsed=elapsed):
        print(line, file=sys.stderr)
