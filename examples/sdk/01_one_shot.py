"""One prompt, one answer: the smallest program embedding pi.

    python examples/sdk/01_one_shot.py [model]

The model is ``provider/id`` (default: the one ``pi`` would pick); keys come from the environment,
``pi auth login`` or models.toml, as for ``pi``.
"""

from __future__ import annotations

import asyncio
import sys

import pi_coder


async def main(model: str | None) -> int:
    # in_memory: no session file; tools: read-only ones are enough to answer a question.
    async with pi_coder.create_session(model=model, in_memory=True, tools=["read", "ls"]) as session:
        await session.prompt("In one sentence: what is in this folder?")
        print(session.last_assistant_text)
        usage = session.usage
        print(f"({usage.input} tokens in, {usage.output} out, ${usage.cost:.4f})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else None)))
    except pi_coder.UserError as exc:  # no model or key, unknown model...: one line
        sys.exit(f"error: {exc}")
