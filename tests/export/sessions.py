"""Session files for the export tests: a small one with every kind of entry, a large branched one."""

from __future__ import annotations

from pathlib import Path

from pi_coder.ai.types import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from pi_coder.session import SessionStore


def _code(turn: int) -> str:
    """Thirty lines of Python, different for every turn (nothing cached between turns)."""
    return "\n".join(
        f'def f{n}_{turn}(x: int) -> int:\n    """Step {n}."""\n    return x * {n + turn}  # turn {turn}'
        for n in range(10)
    )


def _usage(n: int) -> Usage:
    usage = Usage(input=1000 + n, output=200 + n % 50, cache_read=5000, cache_write=0, total_tokens=6200 + n)
    usage.cost.total = 0.0042 + n / 1e6
    return usage


def _assistant(content: list[object], n: int, stop: str = "stop") -> AssistantMessage:
    return AssistantMessage(
        content=content,  # type: ignore[arg-type]
        api="openai-completions",
        provider="local",
        model="test-model",
        usage=_usage(n),
        stop_reason=stop,  # type: ignore[arg-type]
    )


def _turn(store: SessionStore, n: int, prefix: str = "Turn") -> str:
    """Four entries: a question, an answer calling ``read``, its result, a final answer."""
    store.append_message(
        UserMessage(content=[TextContent(text=f"{prefix} {n}: please look at **mod{n}.py**")])
    )
    store.append_message(
        _assistant(
            [
                ThinkingContent(thinking=f"The user wants mod{n}.py read; then explain it."),
                TextContent(text=f"Reading `mod{n}.py` first."),
                ToolCall(id=f"call{n}{prefix}", name="read", arguments={"path": f"src/mod{n}.py"}),
            ],
            n,
            "toolUse",
        )
    )
    code = _code(n)
    store.append_message(
        ToolResultMessage(tool_call_id=f"call{n}{prefix}", tool_name="read", content=[TextContent(text=code)])
    )
    return store.append_message(
        _assistant(
            [
                TextContent(
                    text=f"`mod{n}.py` defines six functions:\n\n- `f0` .. `f5`\n\n```python\n{code[:120]}\n```"
                )
            ],
            n,
        )
    )


def large_session(folder: Path, entries: int = 5000, *, branch_every: int = 100) -> SessionStore:
    """A session of ``entries`` entries; every ``branch_every`` turns a second branch is forked from
    the turn's question (``Alternative <n>``). The current leaf is the end of the main line."""
    store = SessionStore.create(str(folder), folder / "sessions")
    store.append_model_change("local", "test-model")
    main_leaf = store.leaf_id
    n = 0
    while len(store.get_entries()) < entries - 4:
        n += 1
        fork_at = store.leaf_id
        main_leaf = _turn(store, n)
        if n % branch_every == 0 and len(store.get_entries()) < entries - 8:
            assert fork_at is not None
            store.branch(fork_at)
            _turn(store, n, "Alternative")
            store.branch(main_leaf)
    while len(store.get_entries()) < entries:
        main_leaf = store.append_message(
            UserMessage(content=[TextContent(text=f"filler {len(store.get_entries())}")])
        )
    assert store.leaf_id == main_leaf
    store.flush()
    return store


def small_session(folder: Path) -> SessionStore:
    """Every kind of content, a branch, hostile text and a secret."""
    store = SessionStore.create(str(folder), folder / "sessions")
    store.append_model_change("local", "test-model")
    first = store.append_message(
        UserMessage(
            content=[
                TextContent(
                    text='Fix <script>window.__pwned=1</script> and <img src=x onerror="window.__pwned=2"> please'
                ),
                ImageContent(data="AAAA", mime_type="image/png"),
            ]
        )
    )
    store.append_message(
        _assistant(
            [
                ThinkingContent(thinking="secret plan"),
                TextContent(
                    text="Editing:\n```python\nx = 1 < 2\n```\n[link](javascript:alert(1)) ![pic](http://example.invalid/a.png)"
                ),
                ToolCall(id="c1", name="edit", arguments={"path": "a.py", "edits": []}),
                ToolCall(id="c2", name="bash", arguments={"command": "env | grep KEY"}),
            ],
            1,
            "toolUse",
        )
    )
    store.append_message(
        ToolResultMessage(
            tool_call_id="c1",
            tool_name="edit",
            content=[TextContent(text="Edited a.py")],
            details={"diff": " 1 keep\n-2 old line\n+2 new line"},
        )
    )
    store.append_message(
        ToolResultMessage(
            tool_call_id="c2",
            tool_name="bash",
            content=[
                TextContent(
                    text="OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123\nMY_TOKEN=hunter2hunter2"
                )
            ],
            is_error=True,
        )
    )
    from pi_coder.session import BashExecutionMessage

    store.append_message(BashExecutionMessage(command="git status", output="clean", exit_code=0))
    store.append_message(_assistant([], 2, "error").model_copy(update={"error_message": "overloaded"}))
    main_leaf = store.leaf_id
    store.branch(first)
    store.append_message(_assistant([TextContent(text="The other answer: needle-in-branch")], 3))
    assert main_leaf is not None
    store.branch(main_leaf)
    store.append_label(first, "start")
    store.flush()
    return store
