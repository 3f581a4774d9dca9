"""AgentSession helpers: restoring a session from its store, save notices, tree navigation, settings writes.

Kept apart from ``agent_session.py`` so that module stays readable; these functions take the
parts they work on as arguments (a store, the models, settings) and are not public API.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pi_coder.ai.abort import AbortController
from pi_coder.ai.models import Models
from pi_coder.ai.types import Model
from pi_coder.core._queue import user_text
from pi_coder.core.events import Notice
from pi_coder.core.model_resolver import restore_notice
from pi_coder.core.session_hooks import BranchSummaryRequest, BranchSummaryResult
from pi_coder.core.stats import UsageTotals
from pi_coder.core.thinking import DEFAULT_THINKING_LEVEL, clamp_thinking_level
from pi_coder.errors import PiError
from pi_coder.session.entries import CustomMessageEntry, MessageEntry, ThinkingLevelChangeEntry
from pi_coder.session.store import SessionStore

if TYPE_CHECKING:
    from pi_coder.settings import LoadedSettings, Settings


@dataclass(slots=True, kw_only=True)
class Restored:
    """A session as read from its store: what the agent should hold and what to record."""

    messages: list[Any]
    """The context messages (without the system prompt)."""
    model: Model | None
    thinking_level: str
    notices: list[str]
    """For the user ("Could not restore model ...")."""
    record_model: bool = False
    """Append a ``model_change`` for ``model``."""
    record_thinking: bool = False
    """Append a ``thinking_level_change`` for ``thinking_level``."""


def restore_session(
    store: SessionStore,
    models: Models,
    *,
    default_thinking: str | None,
    current: Model | None,
    model: Model | None,
    thinking: str | None,
    explicit: bool,
) -> Restored:
    """What a session resumes with, read from ``store`` (nothing is written).

    A store without entries is a new session: it records ``model`` (else ``current``) when
    there is one, and the thinking level. Otherwise the context is rebuilt from the store;
    with ``model``/``thinking`` None the session's own are restored (clamped; ``current`` is
    the fallback when the stored model cannot be used), else the given ones are used and
    recorded when they differ from the session's (``explicit``).
    """
    notices: list[str] = store.load_warnings()
    default_level = default_thinking or DEFAULT_THINKING_LEVEL
    if not store.get_entries():
        chosen = model if model is not None else current
        level = thinking or default_level
        level = clamp_thinking_level(level, chosen) if chosen is not None else level
        return Restored(
            messages=[],
            model=chosen,
            thinking_level=level,
            notices=notices,
            record_model=chosen is not None,
            record_thinking=True,
        )
    context = store.build_session_context()
    stored_level = None
    for entry in store.get_branch():
        if isinstance(entry, ThinkingLevelChangeEntry):
            stored_level = entry.thinking_level
    chosen = model
    if chosen is None:
        chosen = current
        if context.model is not None:
            found = models.get_model(*context.model)
            if found is not None and models.has_key(found.provider):
                chosen = found
            else:
                reason = "model no longer exists" if found is None else "no API key available"
                notices.append(restore_notice(context.model[0], context.model[1], reason, chosen))
    record_model = (
        chosen is not None and context.model != (chosen.provider, chosen.id) and (explicit or context.model is None)
    )
    level = thinking or stored_level or default_level
    level = clamp_thinking_level(level, chosen) if chosen is not None else level
    return Restored(
        messages=list(context.messages),
        model=chosen,
        thinking_level=level,
        notices=notices,
        record_model=record_model,
        record_thinking=level != stored_level,
    )


class SaveWatch:
    """Turns the store's write state into notices: a save that fails or works again, foreign turns.

    A failing save is reported once (with why) until a save works again; the entries wait in
    memory and are written with the next save.
    """

    def __init__(self) -> None:
        self._warned = False
        self._foreign_seen = 0

    def seen(self, store: SessionStore) -> None:
        """Entries other processes wrote so far are known (a store was attached or synced)."""
        self._foreign_seen = store.foreign_entries

    def notices(self, store: SessionStore) -> list[Notice]:
        """The notices due since the last call."""
        notices: list[Notice] = []
        error = store.write_error
        if error is not None and not self._warned:
            self._warned = True
            notices.append(Notice(level="warning", text=f"The session could not be saved: {error}"))
        elif error is None and self._warned:
            self._warned = False
            notices.append(Notice(level="info", text=f"The session is saved again ({store.session_file})"))
        if store.foreign_entries > self._foreign_seen:
            self._foreign_seen = store.foreign_entries
            notices.append(
                Notice(
                    level="warning",
                    text="Another pi process wrote to this session during this run; this run continues on its own "
                    "branch (see /tree)",
                )
            )
        return notices


def sync_store(store: SessionStore) -> Notice | None:
    """Before a prompt: load what other processes appended to the session.

    Returns:
        A notice saying so (the caller then reloads the context), or None when nothing new was found.
    """
    added = store.sync()
    if not added:
        return None
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
    texts = (block.get("text") for block in content if isinstance(block, dict) and block.get("type") == "text")
    return "".join(text for text in texts if isinstance(text, str))


async def navigate(
    store: SessionStore,
    entry_id: str,
    *,
    summarizer: Callable[[BranchSummaryRequest], Awaitable[BranchSummaryResult | None]] | None,
    instructions: str | None,
    controller: AbortController,
    replace_instructions: bool = False,
) -> Navigation | None:
    """Move the store's leaf for ``/tree``; None when nothing changes.

    With a ``summarizer`` the branch left is summarised first (aborting ``controller`` cancels
    it, and then nothing changes); a selected user or custom message moves the leaf to its parent
    and its text goes back to the editor.
    """
    old_leaf = store.leaf_id
    if entry_id == old_leaf:
        return None
    target = store.get_entry(entry_id)
    if target is None:
        raise KeyError(f"Entry {entry_id} not found")
    summary = None
    if summarizer is not None:
        request = BranchSummaryRequest(
            old_leaf_id=old_leaf,
            target_id=entry_id,
            instructions=instructions,
            signal=controller.signal,
            replace_instructions=replace_instructions,
        )
        summary = await summarizer(request)
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
        if isinstance(entry, MessageEntry):
            usage = entry.usage()
            if usage is not None:
                totals.add(usage)
    totals.counted = len(entries)
    return totals
