"""SessionNavigation: moving a session host between session files and within one file's tree.

New session, resume (switch), fork, clone, ``/import`` and ``/tree`` navigation (with an
optional branch summary). Each one asks the extensions first (``session_before_*``), stops
the run, replaces or re-points the store, reloads the transcript, emits ``SessionSwitched``
and tells the extensions afterwards. The session host owns one and exposes its methods
(``AgentSession.fork`` etc.); see docs/session-host.md.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import pi_coder.core._session_ops as ops
from pi_coder.ai.abort import AbortController
from pi_coder.core.events import Notice, SessionSwitched
from pi_coder.core.host import SessionHost
from pi_coder.core.session_hooks import BranchSummarizer, BranchSummaryRequest, BranchSummaryResult
from pi_coder.session.store import SessionStore

if TYPE_CHECKING:
    from pi_coder.ai.types import Model
    from pi_coder.core.host import ExtensionHooks

__all__ = ["NavigationHost", "SessionNavigation", "StoreSetup"]

StoreSetup = Callable[[SessionStore], Awaitable[object] | object]
"""``setup(store)`` of ``new_session``: sync or async, may append entries to the new session."""


class NavigationHost(SessionHost, Protocol):
    """What navigation uses of the session host (``AgentSession``) beyond :class:`SessionHost`.

    The underscored members are the host's internals, offered to its own parts only.
    """

    cwd: str
    extensions: ExtensionHooks | None
    summarize_branch: BranchSummarizer | None

    @property
    def _session_dir(self) -> str | None:
        """The ``--session-dir`` of this run; None: the folder's default session directory."""
        ...

    async def _stop(self) -> None:
        """Abort whatever runs, wait until idle and drop held-back ``!`` results."""
        ...

    def _replace_store(self, store: SessionStore) -> None:
        """Close the current store and use ``store`` from now on."""
        ...

    def _attach(self, model: Model | None, thinking: str | None, *, explicit: bool) -> list[str]:
        """Load the store into the agent; returns the notices (see ``_session_ops.restore_session``)."""
        ...


class SessionNavigation:
    """The navigation commands of one session host; see the module docstring."""

    def __init__(self, host: NavigationHost) -> None:
        self._host = host
        self._summary_controller: AbortController | None = None

    def abort(self) -> None:
        """Cancel a branch summary being requested."""
        if self._summary_controller is not None:
            self._summary_controller.abort()

    async def new_session(self, *, setup: StoreSetup | None = None) -> bool:
        """Start a new session file (created lazily); queues are cleared. True when an extension cancelled.

        ``setup(store)`` (sync or async) may append entries to the new session before it is loaded
        and ``session_start`` fires (an extension's ``ctx.new_session(setup=)``).
        """
        host = self._host
        previous = host.session_file
        if host.extensions is not None and not await host.extensions.before_replace("new"):
            return True
        await host._stop()
        host.store.new_session()
        if setup is not None:
            prepared = setup(host.store)
            if inspect.isawaitable(prepared):
                await prepared
        host._attach(host.model, host.thinking_level, explicit=True)
        await host.emit(SessionSwitched(reason="new", session_file=host.session_file))
        if host.extensions is not None:
            await host.extensions.after_replace("new", previous)
        return False

    async def switch_session(self, path: str) -> bool:
        """Open another session file, restoring its messages, model and thinking level. True when cancelled."""
        host = self._host
        previous = host.session_file
        if host.extensions is not None and not await host.extensions.before_replace("resume", target=path):
            return True
        await host._stop()
        host._replace_store(SessionStore.open(path, host._session_dir))
        notices = host._attach(None, None, explicit=False)
        await host.emit(SessionSwitched(reason="switch", session_file=host.session_file))
        for text in notices:
            await host.emit(Notice(level="warning", text=text))
        if host.extensions is not None:
            await host.extensions.after_replace("resume", previous)
        return False

    async def fork(self, entry_id: str) -> str | None:
        """Fork into a new session file holding the history before user message ``entry_id``.

        Returns:
            The user message's text, for the editor; None when a ``session_before_fork``
            handler cancelled (nothing changes).

        Raises:
            ValueError: ``entry_id`` is not a user message.
        """
        host = self._host
        previous = host.session_file
        if host.extensions is not None and not await host.extensions.before_replace("fork", entry_id=entry_id):
            return None
        await host._stop()
        text = ops.fork_store(host.store, entry_id)
        host._attach(host.model, host.thinking_level, explicit=True)
        await host.emit(SessionSwitched(reason="fork", session_file=host.session_file))
        if host.extensions is not None:
            await host.extensions.after_replace("fork", previous)
        return text

    async def clone(self) -> bool:
        """Copy the current branch (root -> leaf) into a new session file and switch to it.

        Returns:
            True when a ``session_before_fork`` handler cancelled (nothing changes).
        """
        host = self._host
        previous = host.session_file
        leaf = host.store.leaf_id
        if host.extensions is not None and not await host.extensions.before_replace("fork", entry_id=leaf):
            return True
        await host._stop()
        if leaf is None:
            parent = str(previous) if previous is not None else None
            host.store.new_session(parent_session=parent)
        else:
            host.store.create_branched_session(leaf)
        host._attach(host.model, host.thinking_level, explicit=True)
        await host.emit(SessionSwitched(reason="fork", session_file=host.session_file))
        if host.extensions is not None:
            await host.extensions.after_replace("fork", previous)
        return False

    async def import_session(self, path: str) -> bool:
        """``/import``: copy the session file at ``path`` into this folder's session directory (a new
        id, ``parentSession`` = ``path``, the entries verbatim) and switch to the copy.

        Returns:
            True when a ``session_before_switch`` handler cancelled (the copy is removed again).

        Raises:
            InvalidSessionFileError: ``path`` is empty or not a session file.
            OSError: ``path`` cannot be read or the copy cannot be written.
        """
        from pi_coder.paths import session_dir_for_cwd

        host = self._host
        directory = host.store.session_dir
        if directory is None:
            directory = Path(host._session_dir) if host._session_dir else session_dir_for_cwd(host.cwd)
        copy = SessionStore.fork_from(path, host.cwd, directory)
        copy.close()
        target = copy.session_file
        assert target is not None, "a forked store is persisted"
        cancelled = await self.switch_session(str(target))
        if cancelled:
            target.unlink(missing_ok=True)
        return cancelled

    async def navigate_tree(
        self,
        entry_id: str,
        summarize: bool = False,
        instructions: str | None = None,
        *,
        replace_instructions: bool = False,
    ) -> str | None:
        """Move to another point of the session tree (same file), optionally summarising the branch left.

        Returns:
            The text of a selected user/custom message (for the editor), else None. Also None
            when the target is the current leaf or the summary was cancelled (nothing changes).

        Raises:
            KeyError: No entry has ``entry_id``.
        """
        host = self._host
        await host._stop()
        store = host.store
        old_leaf = store.leaf_id
        controller = self._summary_controller = AbortController()
        supplied: BranchSummaryResult | None = None
        if host.extensions is not None and entry_id != old_leaf and store.get_entry(entry_id) is not None:
            decision = await host.extensions.before_tree(entry_id, old_leaf, summarize, instructions, controller.signal)
            if decision == "cancel":
                self._summary_controller = None
                return None
            if decision is not None:
                summary, instructions = decision
                if summary is not None and summarize:
                    supplied = BranchSummaryResult(summary=summary.summary, details=summary.details, from_hook=True)
        if summarize and host.summarize_branch is None and supplied is None:
            await host.emit(Notice(level="warning", text="Branch summaries are not available; navigating without one."))
        summarizer = self._summarizer(supplied, summarize)
        try:
            result = await ops.navigate(
                store,
                entry_id,
                summarizer=summarizer,
                instructions=instructions,
                controller=controller,
                replace_instructions=replace_instructions,
            )
        finally:
            self._summary_controller = None
        if result is None:
            return None
        host.reload_context()
        await host.emit(SessionSwitched(reason="tree", session_file=host.session_file))
        if host.extensions is not None:
            leaf = store.get_entry(store.leaf_id) if store.leaf_id else None
            summary_entry = leaf if leaf is not None and leaf.type == "branch_summary" else None
            await host.extensions.tree_done(store.leaf_id, old_leaf, summary_entry, supplied is not None)
        return result.editor_text

    def _summarizer(
        self, supplied: BranchSummaryResult | None, summarize: bool
    ) -> Callable[[BranchSummaryRequest], Awaitable[BranchSummaryResult | None]] | None:
        """The branch summary's source: an extension's ready summary, else the model, else none."""
        if supplied is not None:
            hook_summary = supplied

            async def from_extension(request: BranchSummaryRequest) -> BranchSummaryResult | None:
                return hook_summary

            return from_extension
        summarize_branch = self._host.summarize_branch
        if summarize and summarize_branch is not None:
            host = self._host

            def from_model(request: BranchSummaryRequest) -> Awaitable[BranchSummaryResult | None]:
                return summarize_branch(host, request)

            return from_model
        return None
