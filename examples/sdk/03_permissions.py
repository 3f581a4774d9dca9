"""Answer the agent's permission questions in code: allow harmless commands, refuse the rest.

    python examples/sdk/03_permissions.py [model] ["prompt"]

With ``permission_mode="ask"`` every tool call that is not read-only needs approval; pi asks the
session's ``ui``. This one allows ``bash`` commands that make files or folders (``touch``,
``mkdir``) once, and denies everything else (the model is told why).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence

import pi_coder

SAFE = ("touch ", "mkdir ")


class Approver(pi_coder.SessionUI):
    def __init__(self) -> None:
        self.asked: list[str] = []

    async def select(self, title: str, options: Sequence[str], **_: object) -> str | None:
        # title: "Allow bash: touch notes.md?" (a reason may follow); options: "Allow once",
        # "Allow this session", "Always allow (save a rule)", "Deny"
        self.asked.append(title)
        command = title.removeprefix("Allow ").removeprefix("bash: ")
        allow = title.startswith("Allow bash: ") and command.startswith(SAFE)
        print(f"{'allowed' if allow else 'denied'}: {title}", flush=True)
        return options[0] if allow else "Deny"

    async def input(self, title: str, placeholder: str = "", **_: object) -> str | None:
        return "not allowed by the approver program"  # the reason the model is given for a denial


async def main(model: str | None, prompt: str) -> int:
    approver = Approver()
    async with pi_coder.create_session(model=model, in_memory=True, permission_mode="ask", ui=approver) as session:
        await session.prompt(prompt)
        print(session.last_assistant_text)
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    try:
        sys.exit(asyncio.run(main(args[0] if args else None, args[1] if len(args) > 1 else "Make a file notes.md.")))
    except pi_coder.UserError as exc:
        sys.exit(f"error: {exc}")
