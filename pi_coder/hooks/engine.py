"""``HookEngine``: the configured hooks of one session, the stdin JSON and environment they get.

Every hook gets Claude Code's common fields (``session_id``, ``transcript_path`` — pi's JSONL
session file, ``cwd``, ``permission_mode``, ``hook_event_name``) plus the event's own, and runs
with pi's environment minus provider keys and other secrets (the bash tool's rule, with
``bash.env_allow``), plus ``CLAUDE_PROJECT_DIR`` and ``PI_PROJECT_DIR`` (the project folder).
A hook that fails without blocking (an exit code other than 0 and 2, a timeout) is one warning.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pi_coder.hooks.config import HookCommand, HookConfig
from pi_coder.hooks.process import HookRun, run_hooks

if TYPE_CHECKING:
    from pi_coder.hooks.host import HookContext

__all__ = ["HookEngine", "permission_mode"]

_MODES = {
    "ask": "default",
    "accept-edits": "acceptEdits",
    "plan": "plan",
    "auto": "bypassPermissions",
    "deny": "dontAsk",
}
"""pi's permission modes as Claude Code names them."""


def permission_mode() -> str:
    """Claude Code's ``permission_mode`` for pi's current permission mode (no policy: ``auto``)."""
    from pi_coder.permissions.gate import current_policy

    policy = current_policy()
    return _MODES.get(policy.mode if policy is not None else "auto", "default")


class HookEngine:
    """See the module docstring."""

    def __init__(
        self, config: HookConfig, cwd: str, *, env_allow: Sequence[str] = (), secret_names: Sequence[str] = ()
    ) -> None:
        self.config = config
        self.cwd = cwd
        self._env_allow = tuple(env_allow)
        self._secret_names = tuple(secret_names)

    def environment(self) -> dict[str, str]:
        from pi_coder.tools import safe_environment

        extra = {"CLAUDE_PROJECT_DIR": self.cwd, "PI_PROJECT_DIR": self.cwd}
        return safe_environment(
            os.environ, allow=self._env_allow, secret_names=self._secret_names, extra=extra
        )

    def hooks(self, event: str, value: str | None = None) -> list[HookCommand]:
        return self.config.for_event(event, value)

    async def run(
        self,
        event: str,
        fields: Mapping[str, Any],
        ctx: HookContext,
        *,
        match: str | None = None,
        hooks: Sequence[HookCommand] | None = None,
    ) -> list[HookRun]:
        """Run the hooks of ``event`` matching ``match`` (in parallel); warn about failures."""
        chosen = list(hooks) if hooks is not None else self.hooks(event, match)
        if not chosen:
            return []
        session = ctx.session
        payload = {
            "session_id": session.session_id,
            "transcript_path": session.session_file or "",
            "cwd": self.cwd,
            "permission_mode": permission_mode(),
            "hook_event_name": event,
            **fields,
        }
        runs = await run_hooks(chosen, payload, cwd=self.cwd, env=self.environment(), abort=ctx.signal)
        for run in runs:
            problem = run.problem()
            if problem is not None:
                ctx.ui.notify(problem, "warning")
        return runs
