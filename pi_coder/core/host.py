"""The faces of AgentSession that its parts see, as Protocols.

The retry and compaction hooks (``retry.py``, ``compaction_runner.py``), the shell markers
(``shell_env.py``) and branch summaries are typed against :class:`SessionHost`, and
AgentSession holds its extension runner as :class:`ExtensionHooks`, so none of those modules
imports ``agent_session`` and ``agent_session`` imports none of ``pi_coder.extensions``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pi_coder.agent import Agent
    from pi_coder.ai.models import Models
    from pi_coder.ai.types import AssistantMessage, Model
    from pi_coder.core.events import Event
    from pi_coder.session.store import SessionStore
    from pi_coder.settings import Settings

__all__ = ["ExtensionHooks", "SessionHost"]


class SessionHost(Protocol):
    """What run hooks, branch summarizers and the shell markers may use of a session."""

    agent: Agent
    models: Models
    settings: Settings

    @property
    def store(self) -> SessionStore: ...

    @property
    def model(self) -> Model | None: ...

    @property
    def messages(self) -> list[Any]: ...

    @property
    def thinking_level(self) -> str: ...

    @property
    def session_id(self) -> str: ...

    @property
    def session_file(self) -> str | None: ...

    async def emit(self, event: Event) -> None:
        """Send ``event`` to the session's listeners in order."""
        ...

    def drop_last_assistant(self) -> AssistantMessage | None:
        """Remove a trailing assistant message from the in-memory context."""
        ...

    def reload_context(self) -> None:
        """Rebuild the agent transcript from the store (after a compaction entry)."""
        ...


class ExtensionHooks(Protocol):
    """What AgentSession and the modes call on the loaded extensions (``extensions/runner.py``)."""

    async def on_agent_event(self, event: Any) -> Any: ...

    async def before_tree(
        self, target_id: str, old_leaf_id: str | None, user_wants_summary: bool, instructions: str | None, signal: Any
    ) -> Any:
        """``session_before_tree``: ``"cancel"``, ``(summary or None, instructions)``, or None."""
        ...

    async def tree_done(
        self, new_leaf_id: str | None, old_leaf_id: str | None, summary_entry: Any, from_extension: bool
    ) -> None: ...

    async def before_settle(self) -> bool:
        """``agent_before_settle``: True when an extension asked the run to continue once more."""
        ...

    async def settled(self, aborted: bool) -> None:
        """``agent_settled``: a prompt's whole run (retries, follow-ups) is over."""
        ...

    def prompt_tools(self, names: Sequence[str]) -> tuple[list[str | tuple[str, str]], list[str]]:
        """The system prompt's tool list (extension tools by snippet, unlisted without) and the
        guideline bullets of the active extension tools."""
        ...

    async def intercept_prompt(
        self, text: str, images: Sequence[Any] | None, source: str, streaming_behavior: str | None
    ) -> tuple[str, list[Any]] | None: ...

    def prompt_starter(self, message: Any, text: str, images: Sequence[Any]) -> Callable[[], Any]: ...

    async def on_user_bash(
        self, command: str, exclude_from_context: bool, signal: Any, on_output: Callable[[str], Any]
    ) -> Any: ...

    async def before_replace(self, reason: str, *, target: str | None = None, entry_id: str | None = None) -> bool: ...

    async def after_replace(self, reason: str, previous: str | None) -> None: ...

    def find_command(self, text: str) -> tuple[Any, str] | None:
        """The extension command ``text`` (``/name args``) invokes, with its arguments."""
        ...

    async def run_command(self, command: Any, args: str) -> None: ...

    def report(self, extension: Any, event: str, exc: BaseException) -> None:
        """Record a failure of ``extension`` (None: the extensions as a whole) in ``event``."""
        ...

    def command_records(self) -> list[dict[str, Any]]: ...

    async def settle(self) -> None: ...

    def cancel_handlers(self) -> None:
        """Ctrl+C: cancel the async extension handlers running now."""
        ...

    async def shutdown(self, reason: str, target: str | None = None) -> None: ...
