"""permission-gate (docs/extensions-runtime.md#first-party-extensions): ask before dangerous bash commands; block them without a UI.

``-e builtin:permission-gate``. Patterns (regular expressions) come from ``[permission_gate]
patterns`` in settings.toml, else the defaults below. A small example to copy: the full
permission modes are a separate feature.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_coder.extensions import ExtensionAPI

DEFAULT_PATTERNS = (
    r"\brm\s+(-[a-zA-Z]*[rf][a-zA-Z]*\s+|--recursive|--force)",
    r"\bsudo\b",
    r"\bch(mod|own)\s+(-R\s+)?777\b",
    r"\bgit\s+push\b.*(--force|-f\b)",
    r"\bdd\b.*\bof=",
    r"\bmkfs\b",
)
NO_UI_REASON = "blocked by permission-gate: needs confirmation (no UI)"


def extension(pi: ExtensionAPI) -> None:
    allowed: set[str] = set()  # "Allow for this session"

    @pi.on("tool_call")
    async def gate(event: Any, ctx: Any) -> Any:
        if event.tool_name != "bash":
            return None
        table = pi.get_settings().get("permission_gate") or {}  # read when used: the factory runs before the session
        patterns = [re.compile(p) for p in (table.get("patterns") or DEFAULT_PATTERNS)]
        command = str(event.input.get("command", ""))
        if command in allowed or not any(p.search(command) for p in patterns):
            return None
        if not ctx.has_ui:
            return {"block": True, "reason": NO_UI_REASON}
        choice = await ctx.ui.select(f"Allow this command?\n{command}", ["Allow once", "Allow for this session", "Block"])
        if choice == "Allow for this session":
            allowed.add(command)
        if choice in ("Allow once", "Allow for this session"):
            return None
        return {"block": True, "reason": "blocked by permission-gate: the user refused"}
