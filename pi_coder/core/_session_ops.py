"""AgentSession helpers: attaching a store (resume/new/fork), tree navigation, settings writes.

Kept apart from ``agent_session.py`` so that module stays readable; these functions work on
an AgentSession's parts and are not public API.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pi_coder.ai.abort import AbortController
from pi_coder.ai.models import Models
from pi_coder.ai.types import Model, Usage
from pi_coder.core._queue import user_text
from pi_coder.core.events import Notice
from pi_coder.core.model_resolver import restore_notice
from pi_coder.core.session_hooks import BranchSummaryRequest
from pi_coder.core.stats import UsageTotals
from pi_coder.core.thinking import clamp_thinking_level
from pi_coder.errors import PiError
from pi_coder.session.entries import CustomMessageEntry, MessageEntry, ThinkingLevelChangeEntry
from pi_coder.session.store import SessionStore

if TYPE_CHECKING:
    from pi_coder.core.agent_session import AgentSession
    from pi_coder.settings import LoadedSettings, Settings


def placeholder_model() -> Model:
    """What the agent holds while no model is configured (never sent anywhere)."""
    return Model(id="none", name="none", api="none", provider="none", context_window=0, max_tokens=0)


def no_model_text(models: Models) -> str:
    """How to configure a model (shown instead of a reply when there is none)."""
    where = models.models_toml_path or "models.toml"
    return (
        "No model available. Configure one of:\n"
        "  1. an API key in the environment, e.g. ANTHROPIC_API_KEY or OPENAI_API_KEY;\n"
        f"  2. a provider with its api_key in {where};\n"
        '  3. a local OpenAI-compatible server in models.toml: [providers.local] api = "openai-completions", '
        'base_url = "http://127.0.0.1:8080/v1", models = [{ id = "<model>" }].\n'
        "Then pick a model with /model or --model."
    )


def attach_store(session: AgentSession, model: Model | None, thinking: str | None, *, explicit: bool) -> list[str]:
    """Load ``session.store`` into the agent: messages, model and thinking level.

    A store without entries is a new session: it gets a ``model_change`` (when there is a
    model) and a ``thinking_level_change``. Otherwise the context is rebuilt from the store;
    with ``model``/``thinking`` None the session's own are restored (clamped), else the given
    ones are used and recorded when they differ from the session's (``explicit``).

    Returns:
        Notices for the user ("Could not restore model ...").
    """
    store, agent = session.store, session.agent
    if store.is_persisted:
        store.claim_writer()
    notices: list[str] = store.load_warnings()
    session._foreign_seen = store.foreign_entries
    default_level = session.settings.default_thinking_level or "medium"
    if not store.get_entries():
        chosen = model if model is not None else session.model
        session._set_model_state(chosen)
        level = thinking or default_level
        level = clamp_thinking_level(level, chosen) if chosen is not None else level
        agent.state.thinking_level = level
        if chosen is not None:
            store.append_model_change(chosen.provider, chosen.id)
        store.append_thinking_level_change(level)
        context_messages: list[Any] = []
    else:
        context = store.build_session_context()
        context_messages = context.messages
        stored_level = None
        for entry in store.get_branch():
            if isinstance(entry, ThinkingLevelChangeEntry):
                stored_level = entry.thinking_level
        chosen = model
        if chosen is None:
            chosen = session.model
            if context.model is not None:
                found = session.models.get_model(*context.model)
                if found is not None and session.models.has_key(found.provider):
                    chosen = found
                else:
                    reason = "model no longer exists" if found is None else "no API key available"
                    notices.append(restore_notice(context.model[0], context.model[1], reason, chosen))
        session._set_model_state(chosen)
        if chosen is not None and context.model != (chosen.provider, chosen.id) and (explicit or context.model is None):
            store.append_model_change(chosen.provider, chosen.id)
        level = thinking or stored_level or default_level
        level = clamp_thinking_level(level, chosen) if chosen is not None else level
        agent.state.thinking_level = level
        if level != stored_level:
            store.append_thinking_level_change(level)
    agent.session_id = store.session_id
    agent.state.messages = [*session._system_messages(), *context_messages]
    session._queued.take_all()
    agent.clear_all_queues()
    return notices


def save_notices(session: AgentSession) -> list[Notice]:
    """Notices for a save that started failing or works again, and for turns another process wrote.

    A failing save is reported once (with why) until a save works again; the entries wait in
    memory and are written with the next save.
    """
    store = session.store
    notices: list[Notice] = []
    error = store.write_error
    if error is not None and not session._save_warned:
        session._save_warned = True
        notices.append(Notice(level="warning", text=f"The session could not be saved: {error}"))
    elif error is None and session._save_warned:
        session._save_warned = False
        notices.append(Notice(level="info", text=f"The session is saved again ({store.session_file})"))
    if store.foreign_entries > session._foreign_seen:
        session._foreign_seen = store.foreign_entries
        notices.append(
            Notice(
                level="warning",
                text="Another pi process wrote to this session during this run; this run continues on its own "
                "branch (see /tree)",
            )
        )
    return notices


def sync_store(session: AgentSession) -> Notice | None:
    """Before a prompt: load what other processes appended to the session and follow it.

    Returns:
        A notice saying so, or None when nothing new was found.
    """
    store = session.store
    added = store.sync()
    session._foreign_seen = store.foreign_entries
    if not added:
        return None
    session.reload_context()
    who = store.live_writers()
    by = f" (pid {', '.join(str(pid) for pid in who)})" if who else ""
    return Notice(
        level="warning",
        text=f"Loaded {len(added)} entries that another pi process{by} added to this session since it was opened here",
    )


def fork_candidates(store: SessionStore) -> list[tuple[str, str]]:
    """``(entry_id, text)`` of the user messages on the current branch."""
    out: list[tuple[str, str]] = []
    for entry in store.get_branch():
        if isinstance(entry, MessageEntry) and entry.role == "user":
            text = user_text(entry.message)
            if text:
                out.append((entry.id, text))
    return out


def fork_store(store: SessionStore, entry_id: str) -> str:
    """Switch ``store`` to a new session holding the history before user message ``entry_id``.

    Returns:
        The user message's text.

    Raises:
        ValueError: ``entry_id`` is not a user message entry.
    """
    entry = store.get_entry(entry_id)
    if not isinstance(entry, MessageEntry) or entry.role != "user":
        raise ValueError(f"Entry {entry_id} is not a user message; only user messages can be forked from")
    text = user_text(entry.message)
    if entry.parent_id is None:
        parent = str(store.session_file) if store.is_persisted and store.session_file is not None else None
        store.new_session(parent_session=parent)
    else:
        store.create_branched_session(entry.parent_id)
    return text


@dataclass(slots=True)
class Navigation:
    editor_text: str | None


def _custom_text(entry: CustomMessageEntry) -> str:
    content = entry.content
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")


async def navigate(
    session: AgentSession, entry_id: str, summarize: bool, instructions: str | None
) -> Navigation | None:
    """Move the store's leaf for ``/tree`` (pi-product 3.6); None when nothing changes."""
    store = session.store
    old_leaf = store.leaf_id
    if entry_id == old_leaf:
        return None
    target = store.get_entry(entry_id)
    if target is None:
        raise KeyError(f"Entry {entry_id} not found")
    summary = None
    if summarize and session.summarize_branch is not None:
        controller = session._summary_controller = AbortController()
        try:
            request = BranchSummaryRequest(
                old_leaf_id=old_leaf, target_id=entry_id, instructions=instructions, signal=controller.signal
            )
            summary = await session.summarize_branch(session, request)
        finally:
            session._summary_controller = None
        if summary is None or controller.signal.aborted:
            return None
    editor_text: str | None = None
    new_leaf: str | None
    if isinstance(target, MessageEntry) and target.role == "user":
        new_leaf, editor_text = target.parent_id, user_text(target.message)
    elif isinstance(target, CustomMessageEntry):
        new_leaf, editor_text = target.parent_id, _custom_text(target)
    else:
        new_leaf = entry_id
    if summary is not None and summary.summary:
        store.branch_with_summary(new_leaf, summary.summary, summary.details, summary.from_hook)
    elif new_leaf is None:
        store.reset_leaf()
    else:
        store.branch(new_leaf)
    return Navigation(editor_text)


def save_settings(loaded: LoadedSettings | None, settings: Settings, updates: dict[str, Any]) -> str | None:
    """Write ``updates`` (dotted keys) to the global settings; returns a warning on failure."""
    try:
        if loaded is not None:
            loaded.update_global_settings(updates)
            return None
        from pi_coder.settings import update_global_settings

        update_global_settings(updates)
        for key, value in updates.items():
            *parents, name = key.split(".")
            target: Any = settings
            for part in parents:
                target = getattr(target, part)
            setattr(target, name, value)
    except (PiError, OSError, ValueError) as exc:
        return f"Could not save settings: {exc}"
    return None


def refresh_usage(totals: UsageTotals, store: SessionStore) -> UsageTotals:
    """Bring the session's token/cost totals (all branches) up to date, reading raw entries."""
    source = (id(store), store.session_id)
    entries = store.get_entries()
    if totals.source != source or totals.counted > len(entries):
        totals = UsageTotals(source=source)
    for entry in entries[totals.counted :]:
        if isinstance(entry, MessageEntry) and entry.role == "assistant":
            usage = entry.message_field("usage")
            if isinstance(usage, dict | Usage):
                totals.add(usage)
    totals.counted = len(entries)
    return totals
