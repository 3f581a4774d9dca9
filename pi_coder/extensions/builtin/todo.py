"""todo (docs/extensions-runtime.md#first-party-extensions): a ``todo`` tool whose list lives in tool-result ``details``.

``-e builtin:todo``. The list follows the session branch: on ``session_start`` and
``session_tree`` it is rebuilt from the last ``todo`` result on ``ctx.session.branch()``. ``/todos``
shows it; a widget lists the open items.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from pi_coder.extensions import AgentToolResult, TextContent, ToolDefinition

if TYPE_CHECKING:
    from pi_coder.extensions import ExtensionAPI


class TodoParams(BaseModel):
    action: Literal["list", "add", "toggle", "clear"]
    text: str | None = None
    id: int | None = None


def _render(items: list[dict[str, Any]]) -> str:
    if not items:
        return "No todos."
    return "\n".join(f"{i['id']}. [{'x' if i['done'] else ' '}] {i['text']}" for i in items)


def extension(pi: ExtensionAPI) -> None:
    state: dict[str, list[dict[str, Any]]] = {"items": []}

    def show(ctx: Any) -> None:
        open_items = [f"[ ] {i['text']}" for i in state["items"] if not i["done"]]
        ctx.ui.set_widget("todo", open_items or None)

    async def run(tool_call_id: str, params: TodoParams, signal: Any, on_update: Any, ctx: Any) -> Any:
        items = [dict(i) for i in state["items"]]
        if params.action == "add":
            if not params.text:
                raise ValueError("add needs text")
            items.append({"id": max((i["id"] for i in items), default=0) + 1, "text": params.text, "done": False})
        elif params.action == "toggle":
            item = next((i for i in items if i["id"] == params.id), None)
            if item is None:
                raise ValueError(f"no todo with id {params.id}")
            item["done"] = not item["done"]
        elif params.action == "clear":
            items = []
        state["items"] = items
        show(ctx)
        return AgentToolResult(content=[TextContent(text=_render(items))], details={"items": items})

    pi.register_tool(
        ToolDefinition(
            name="todo",
            label="Todo",
            description="Manage a todo list: action list|add (text)|toggle (id)|clear.",
            parameters=TodoParams,
            execute=run,
            prompt_snippet="Keep a todo list for multi-step work",
        )
    )

    def rebuild(event: Any, ctx: Any) -> None:
        items: list[dict[str, Any]] = []
        for entry in ctx.session.branch():
            message: Any = getattr(entry, "message", None)
            if message is not None and message.role == "toolResult" and message.tool_name == "todo":
                details = message.details or {}
                if isinstance(details.get("items"), list):
                    items = details["items"]
        state["items"] = items
        show(ctx)

    pi.on("session_start", rebuild)
    pi.on("session_tree", rebuild)

    @pi.command("todos", description="Show the todo list")
    async def todos(args: str, ctx: Any) -> None:
        ctx.ui.notify(_render(state["items"]))
