"""Start-up of the safety layer: the permission policy and the sandbox from flags and settings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pi_coder.errors import UserError

if TYPE_CHECKING:
    from pi_coder.settings import LoadedSettings

__all__ = ["BUILTIN_SPEC", "configure_safety"]

BUILTIN_SPEC = "builtin:permissions"


def configure_safety(
    permission_mode: str | None, sandbox_mode: str | None, loaded: LoadedSettings, cwd: str
) -> bool:
    """Set up the policy and the sandbox; True when the permission gate must be loaded.

    Raises:
        UserError: a sandbox mode without a usable bubblewrap, or an unknown mode.
    """
    settings = loaded.settings
    box = settings.sandbox
    mode = sandbox_mode or box.mode
    from pi_coder.permissions import sandbox

    sandbox.install(
        sandbox.SandboxConfig(
            mode, cwd, network=box.network, writable=box.writable, hide_secrets=box.hide_secrets, hidden=box.hidden
        )
    )

    perms = settings.permissions
    chosen = permission_mode or perms.mode
    from pi_coder.permissions import gate

    if chosen == "auto" and not (perms.allow or perms.ask or perms.deny):
        gate.configure(None)
        return False
    from pi_coder.permissions.policy import Policy
    from pi_coder.permissions.rules import RuleSet

    rules = RuleSet(perms.allow, perms.ask, perms.deny, secret_rules=perms.secret_rules)
    if rules.problems:
        raise UserError(f"{rules.problems[0]} (in [permissions] of the settings)")
    sandbox.install_confinement(cwd, hide_secrets=box.hide_secrets, hidden=box.hidden)
    try:
        gate.configure(Policy(chosen, rules, cwd))
    except ValueError as exc:
        raise UserError(str(exc)) from None
    return True
