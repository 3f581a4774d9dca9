"""Print the answer as it streams, and each tool call as it runs.

    python examples/sdk/02_streaming.py [model] ["prompt"]
"""

from __future__ import annotations

import asyncio
import sys

import pi_coder


def show(event: object) -> None:
    """A session listener: it sees every event (``event.type`` is Pi's event name)."""
    if isinstance(event, pi_coder.MessageUpdate):
        delta = event.assistant_message_event
        if delta.type == "text_delta":
            print(delta.delta, end="", flush=True)
    elif isinstance(event, pi_coder.ToolExecutionStart):
        print(f"\n[{event.tool_name} {event.args}]", flush=True)
    elif isinstance(event, pi_coder.ToolExecutionEnd):
        print(f"[{event.tool_name} {'failed' if event.is_error else 'done'}]", flush=True)
    elif isinstance(event, pi_coder.AgentEnd):
        print()


async def main(model: str | None, prompt: str) -> int:
    async with pi_coder.create_session(model=model, in_memory=True) as session:
        unsubscribe = session.subscribe(show)
        try:
            await session.prompt(prompt)
        finally:
            unsubscribe()
        print(f"{len(session.messages)} messages, {session.usage.total_tokens} tokens", file=sys.stderr)
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    try:
        sys.exit(asyncio.run(main(args[0] if args else None, args[1] if len(args) > 1 else "List the files here.")))
    except pi_coder.UserError as exc:
        sys.exit(f"error: {exc}")
