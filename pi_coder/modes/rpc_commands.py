"""The RPC command handlers (Pi's ``docs/rpc.md`` names and response data).

Each handler takes the server and the command object and returns the response ``data``
(``None`` for none), or ``HANDLED`` when it responds itself. Raising reports an error.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from pi_coder.modes import mcp_host
from pi_coder.modes.options import THINKING_LEVELS
from pi_coder.modes.rpc_protocol import HANDLED, NULL, Handler, RpcError, RpcHost

if TYPE_CHECKING:
    from pi_coder.ai.types import ImageContent

__all__ = ["COMMANDS", "COMPACT_WHILE_STREAMING", "state_data"]

_QUEUE_MODES = ("all", "one-at-a-time")
_BUSY = "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."

COMPACT_WHILE_STREAMING = (
    "Cannot compact while the agent is running; wait for agent_settled (or send abort first). "
    "Nothing was aborted and no queued message was dropped."
)

COMMANDS: dict[str, Handler] = {}


def _command(name: str) -> Callable[[Callable[..., Awaitable[Any]]], Callable[..., Awaitable[Any]]]:
    def register(handler: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        COMMANDS[name] = handler
        return handler

    return register


def _str(command: dict[str, Any], key: str, *, allow_empty: bool = False) -> str:
    value = command.get(key)
    if not isinstance(value, str) or (not allow_empty and not value.strip()):
        raise RpcError(f'"{key}" must be a non-empty string')
    return value


def _images(command: dict[str, Any]) -> list[ImageContent] | None:
    """``images``: Pi's ImageContent (``data``, ``mimeType``), or ``source: {data, mediaType}``."""
    from pi_coder.ai.types import ImageContent

    raw = command.get("images")
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise RpcError('"images" must be a list')
    images: list[ImageContent] = []
    for item in raw:
        source = item.get("source") if isinstance(item, dict) else None
        if isinstance(source, dict):
            item = {"data": source.get("data"), "mimeType": source.get("mediaType") or source.get("mimeType")}
        if not isinstance(item, dict) or not isinstance(item.get("data"), str) or not item.get("mimeType"):
            raise RpcError("each image needs base64 data and a mimeType")
        images.append(ImageContent(data=item["data"], mime_type=str(item["mimeType"])))
    return images or None


def _message_dicts(server: RpcHost) -> list[Any]:
    return [m.to_json_dict() for m in server.session.messages if m.role != "system"]


def state_data(server: RpcHost) -> dict[str, Any]:
    """``get_state`` data (design.md's field list; ``sessionName`` only when the session has one)."""
    session = server.session
    model = session.model
    data: dict[str, Any] = {
        "model": model.to_json_dict() if model is not None else None,
        "thinkingLevel": session.thinking_level,
        "isStreaming": server.busy(),
        "isCompacting": session.is_compacting,
        "steeringMode": session.steering_mode,
        "followUpMode": session.follow_up_mode,
        "sessionFile": session.session_file,
        "sessionId": session.session_id,
        "sessionName": session.session_name,
        "autoCompactionEnabled": session.auto_compaction_enabled,
        "messageCount": len(_message_dicts(server)),
        "pendingMessageCount": len(session.queued_messages()),
    }
    if data["sessionName"] is None:  # Pi 1.6 leaves an unset name out
        del data["sessionName"]
    return data


# ---------------------------------------------------------------------------- prompting


@_command("prompt")
async def _prompt(server: RpcHost, command: dict[str, Any]) -> Any:
    import asyncio

    text = _str(command, "message", allow_empty=True)
    images = _images(command)
    if not text.strip() and not images:  # a provider would reject the empty message mid-run
        raise RpcError('"message" must be a non-empty string (or send images)')
    behavior = command.get("streamingBehavior")
    if behavior not in (None, "steer", "followUp", "follow_up"):
        raise RpcError(f'Invalid streamingBehavior "{behavior}": use "steer" or "followUp"')
    session = server.session
    if mcp_host.handles(session, text):  # `/mcp`: the server table as a notify, no model call (docs/mcp.md#commands)
        server.spawn(_mcp_command(server, text))
        return {"disposition": "handled"}
    if session.extensions is not None:  # an extension command runs at once; `input` may handle it (docs/extensions-runtime.md#order-within-one-prompt)
        found = session.extensions.find_command(text.strip())
        if found is not None:
            server.spawn(session.extensions.run_command(*found))
            return {"disposition": "handled"}
        outcome = await session.extensions.intercept_prompt(text, images, "rpc", behavior)
        if outcome is None:
            return {"disposition": "handled"}
        text, images = outcome[0], outcome[1] or None
    if server.busy():
        if behavior is None:
            raise RpcError(_BUSY)
        if behavior == "steer":
            session.steer(text, images)
        else:
            session.follow_up(text, images)
        return {"disposition": "queued"}
    request_id = command.get("id")
    server.respond("prompt", request_id, data={"disposition": "started"})

    async def run() -> None:
        from pi_coder.modes.jsonl import settled_event

        try:
            await session.prompt(text, images, checked=True)
        except Exception as exc:
            server.respond("prompt", request_id, error=str(exc) or type(exc).__name__)
            return
        server.writer.write(settled_event(session.messages))

    server.prompt_task = server.spawn(run())
    await asyncio.sleep(0)  # let the run start so that is_streaming is true for the next command
    return HANDLED


@_command("steer")
async def _steer(server: RpcHost, command: dict[str, Any]) -> Any:
    _no_extension_command(server, _str(command, "message"))
    server.session.steer(_str(command, "message"), _images(command))
    return {"disposition": "queued"}


@_command("follow_up")
async def _follow_up(server: RpcHost, command: dict[str, Any]) -> Any:
    _no_extension_command(server, _str(command, "message"))
    server.session.follow_up(_str(command, "message"), _images(command))
    return {"disposition": "queued"}


async def _mcp_command(server: RpcHost, text: str) -> None:
    import uuid

    table = await mcp_host.command_text(server.session, text)
    request = {"type": "extension_ui_request", "id": str(uuid.uuid4()), "method": "notify"}
    server.writer.write(request | {"message": table, "notifyType": "info"})


def _no_extension_command(server: RpcHost, text: str) -> None:
    extensions = server.session.extensions
    if extensions is not None and extensions.find_command(text.strip()) is not None:
        raise RpcError("Extension commands cannot be queued: send them with prompt")


@_command("get_commands")
async def _get_commands(server: RpcHost, command: dict[str, Any]) -> Any:
    """Pi's shape: extension commands, prompt templates, then ``skill:<name>`` (docs/extensions-runtime.md#commands)."""
    session = server.session
    records = list(session.extensions.command_records()) if session.extensions is not None else []
    for template in session.prompt_templates:
        records.append(
            {
                "name": template.name,
                "description": getattr(template, "description", "") or "",
                "source": "prompt",
                "sourceInfo": {"path": str(template.path), "scope": template.source},
            }
        )
    if mcp_host.handles(session, "/mcp"):
        records.append(
            {
                "name": "mcp",
                "description": mcp_host.COMMAND_DESCRIPTION,
                "source": "extension",
                "sourceInfo": {"path": "builtin:mcp", "scope": "builtin"},
            }
        )
    skills = getattr(session.skills, "skills", session.skills) or ()
    if session.settings.enable_skill_commands:
        for skill in skills:
            records.append(
                {
                    "name": f"skill:{skill.name}",
                    "description": skill.description,
                    "source": "skill",
                    "sourceInfo": {"path": skill.file_path, "scope": skill.source},
                }
            )
    return {"commands": records}


@_command("clear_queue")
async def _clear_queue(server: RpcHost, command: dict[str, Any]) -> Any:
    steering, follow_up = server.session.clear_queue()
    return {"steering": steering, "followUp": follow_up}


@_command("abort")
async def _abort(server: RpcHost, command: dict[str, Any]) -> Any:
    server.session.abort()
    await server.session.wait_for_idle()


@_command("get_state")
async def _get_state(server: RpcHost, command: dict[str, Any]) -> Any:
    return state_data(server)


@_command("get_messages")
async def _get_messages(server: RpcHost, command: dict[str, Any]) -> Any:
    return {"messages": _message_dicts(server)}


@_command("get_last_assistant_text")
async def _last_text(server: RpcHost, command: dict[str, Any]) -> Any:
    return {"text": server.session.last_assistant_text()}


# ---------------------------------------------------------------------------- sessions


def _in_background(server: RpcHost, command: dict[str, Any], work: Callable[[], Awaitable[Any]]) -> Any:
    """With extensions, a session replacement runs as a task: its ``session_before_*`` handlers may open
    dialogs, whose answers arrive on stdin while it waits. The response follows when it is done."""
    if server.session.extensions is None:
        return work()

    async def run() -> None:
        kind, request_id = command["type"], command.get("id")
        try:
            data = await work()
        except Exception as exc:
            server.respond(kind, request_id, error=str(exc) or type(exc).__name__)
            return
        server.respond(kind, request_id, data=data)

    async def spawned() -> Any:
        server.spawn(run())
        return HANDLED

    return spawned()


@_command("new_session")
async def _new_session(server: RpcHost, command: dict[str, Any]) -> Any:
    async def work() -> Any:
        return {"cancelled": bool(await server.session.new_session())}

    return await _in_background(server, command, work)


@_command("switch_session")
async def _switch_session(server: RpcHost, command: dict[str, Any]) -> Any:
    path = _existing_file(_str(command, "sessionPath"))

    async def work() -> Any:
        return {"cancelled": bool(await server.session.switch_session(path))}

    return await _in_background(server, command, work)


@_command("fork")
async def _fork(server: RpcHost, command: dict[str, Any]) -> Any:
    entry_id = _str(command, "entryId")

    async def work() -> Any:
        text = await server.session.fork(entry_id)
        return {"cancelled": True} if text is None else {"text": text, "cancelled": False}

    return await _in_background(server, command, work)


@_command("clone")
async def _clone(server: RpcHost, command: dict[str, Any]) -> Any:
    async def work() -> Any:
        return {"cancelled": bool(await server.session.clone())}

    return await _in_background(server, command, work)


@_command("get_entries")
async def _get_entries(server: RpcHost, command: dict[str, Any]) -> Any:
    store = server.session.store
    entries = store.get_entries()
    since = command.get("since")
    if since is not None:
        if not isinstance(since, str):
            raise RpcError('"since" must be an entry id')
        index = next((i for i, entry in enumerate(entries) if entry.id == since), None)
        if index is None:
            raise RpcError(f"Entry not found: {since}")
        entries = entries[index + 1 :]
    return {"entries": [entry.to_json_dict() for entry in entries], "leafId": store.leaf_id}


def _tree_node(node: Any, labels: dict[str, str | None]) -> dict[str, Any]:
    data: dict[str, Any] = {
        "entry": node.entry.to_json_dict(),
        "children": [_tree_node(child, labels) for child in node.children],
    }
    if node.label is not None:
        data["label"] = node.label
        stamp = labels.get(node.entry.id)
        if stamp is not None:
            data["labelTimestamp"] = stamp
    return data


@_command("get_tree")
async def _get_tree(server: RpcHost, command: dict[str, Any]) -> Any:
    store = server.session.store
    stamps: dict[str, str | None] = {}
    for entry in store.get_entries():
        raw = entry.to_json_dict()
        if raw.get("type") == "label" and isinstance(raw.get("targetId"), str):
            stamps[raw["targetId"]] = raw.get("timestamp") if raw.get("label") else None
    return {"tree": [_tree_node(node, stamps) for node in store.get_tree()], "leafId": store.leaf_id}


@_command("get_fork_messages")
async def _fork_messages(server: RpcHost, command: dict[str, Any]) -> Any:
    return {"messages": [{"entryId": i, "text": t} for i, t in server.session.fork_candidates()]}


@_command("set_session_name")
async def _set_name(server: RpcHost, command: dict[str, Any]) -> Any:
    server.session.set_session_name(_str(command, "name").strip())


@_command("get_session_stats")
async def _stats(server: RpcHost, command: dict[str, Any]) -> Any:
    return server.session.stats().to_json_dict()


@_command("export_html")
async def _export(server: RpcHost, command: dict[str, Any]) -> Any:
    output = command.get("outputPath")
    if output is not None and not isinstance(output, str):
        raise RpcError('"outputPath" must be a string')
    return {"path": _export_sync(server, output)}


def _existing_file(arg: str) -> str:
    path = os.path.expanduser(arg)
    if not os.path.isfile(path):
        raise RpcError(f"Session file not found: {path}")
    return path


def _export_sync(server: RpcHost, output: str | None) -> str:
    from pi_coder.export.html import default_export_path, export_store_html

    session = server.session
    target = output or default_export_path(session.session_file or f"{session.session_id}.jsonl", session.cwd)
    return str(export_store_html(session.store, os.path.expanduser(str(target))))


# ---------------------------------------------------------------------------- model and thinking


@_command("set_model")
async def _set_model(server: RpcHost, command: dict[str, Any]) -> Any:
    provider, model_id = _str(command, "provider"), _str(command, "modelId")
    model = server.session.models.get_model(provider, model_id)
    if model is None:
        raise RpcError(f"Model not found: {provider}/{model_id}")
    server.session.set_model(model)
    return model.to_json_dict()


@_command("cycle_model")
async def _cycle_model(server: RpcHost, command: dict[str, Any]) -> Any:
    result = server.session.cycle_model()
    if result is None:
        return NULL
    model, level = result
    return {"model": model.to_json_dict(), "thinkingLevel": level, "isScoped": bool(server.session.scoped_models)}


@_command("get_available_models")
async def _models(server: RpcHost, command: dict[str, Any]) -> Any:
    return {"models": [m.to_json_dict() for m in server.session.available_models()]}


@_command("set_thinking_level")
async def _set_thinking(server: RpcHost, command: dict[str, Any]) -> Any:
    level = _str(command, "level")
    if level not in THINKING_LEVELS:
        raise RpcError(f'Invalid thinking level "{level}". Valid values: {", ".join(THINKING_LEVELS)}')
    server.session.set_thinking_level(level)


@_command("cycle_thinking_level")
async def _cycle_thinking(server: RpcHost, command: dict[str, Any]) -> Any:
    level = server.session.cycle_thinking_level()
    return {"level": level} if level is not None else NULL


@_command("get_available_thinking_levels")
async def _thinking_levels(server: RpcHost, command: dict[str, Any]) -> Any:
    return {"levels": server.session.available_thinking_levels()}


@_command("set_steering_mode")
async def _steering_mode(server: RpcHost, command: dict[str, Any]) -> Any:
    server.session.set_steering_mode(_queue_mode(command))


@_command("set_follow_up_mode")
async def _follow_up_mode(server: RpcHost, command: dict[str, Any]) -> Any:
    server.session.set_follow_up_mode(_queue_mode(command))


def _queue_mode(command: dict[str, Any]) -> Any:
    mode = _str(command, "mode")
    if mode not in _QUEUE_MODES:
        raise RpcError(f'Invalid mode "{mode}": use "all" or "one-at-a-time"')
    return mode


# ---------------------------------------------------------------------------- compaction and bash


@_command("compact")
async def _compact(server: RpcHost, command: dict[str, Any]) -> Any:
    compact = getattr(server.session, "compact", None)
    if compact is None:
        raise RpcError("Compaction is not available in this version")
    instructions = command.get("customInstructions")
    if instructions is not None and not isinstance(instructions, str):
        raise RpcError('"customInstructions" must be a string')
    if server.busy():
        # Compacting would abort the run and drop the queued messages: refuse instead.
        raise RpcError(COMPACT_WHILE_STREAMING)
    request_id = command.get("id")

    async def run() -> None:
        try:
            result = await compact(instructions)
        except Exception as exc:
            server.respond("compact", request_id, error=str(exc) or type(exc).__name__)
            return
        to_json = getattr(result, "to_json_dict", None)
        server.respond("compact", request_id, data=to_json() if to_json is not None else result)

    server.spawn(run())
    return HANDLED


@_command("set_auto_compaction")
async def _auto_compaction(server: RpcHost, command: dict[str, Any]) -> Any:
    enabled = command.get("enabled")
    if not isinstance(enabled, bool):
        raise RpcError('"enabled" must be true or false')
    server.session.set_auto_compaction(enabled)


@_command("set_auto_retry")
async def _auto_retry(server: RpcHost, command: dict[str, Any]) -> Any:
    enabled = command.get("enabled")
    if not isinstance(enabled, bool):
        raise RpcError('"enabled" must be true or false')
    server.session.set_auto_retry(enabled)


@_command("abort_retry")
async def _abort_retry(server: RpcHost, command: dict[str, Any]) -> Any:
    await server.session.abort_retry()


@_command("bash")
async def _bash(server: RpcHost, command: dict[str, Any]) -> Any:
    text = _str(command, "command")
    if server.session.is_bash_running:
        raise RpcError("A bash command is already running; send abort_bash first")
    request_id = command.get("id")

    async def run() -> None:
        try:
            message = await server.session.run_bash(text, request_id=request_id)
        except Exception as exc:
            server.respond("bash", request_id, error=str(exc) or type(exc).__name__)
            return
        data: dict[str, Any] = {
            "output": message.output,
            "exitCode": message.exit_code,
            "cancelled": message.cancelled,
            "truncated": message.truncated,
        }
        if message.full_output_path:
            data["fullOutputPath"] = message.full_output_path
        server.respond("bash", request_id, data=data)

    import asyncio

    server.spawn(run())
    await asyncio.sleep(0)  # let run_bash start so that a second bash command is refused
    return HANDLED


@_command("abort_bash")
async def _abort_bash(server: RpcHost, command: dict[str, Any]) -> Any:
    server.session.abort_bash()


# ---------------------------------------------------------------------------- checkpoints


def _restored(result: Any) -> Any:
    if result.conflicts and not result.applied:
        raise RpcError(result.message.replace("force", '"force": true'))
    if not result.applied:
        raise RpcError(result.message)
    return result.to_json_dict()


@_command("get_checkpoints")
async def _get_checkpoints(server: RpcHost, command: dict[str, Any]) -> Any:
    await server.session.checkpoints.settled()  # the last run's entry may still be being written
    return {"checkpoints": [info.to_json_dict() for info in server.session.checkpoints.list()]}


@_command("get_checkpoint_diff")
async def _checkpoint_diff(server: RpcHost, command: dict[str, Any]) -> Any:
    checkpoint = _str(command, "checkpointId")
    try:
        return {"diff": await server.session.checkpoints.diff(checkpoint)}
    except KeyError:
        raise RpcError(f"Checkpoint {checkpoint} not found") from None


@_command("restore_checkpoint")
async def _restore_checkpoint(server: RpcHost, command: dict[str, Any]) -> Any:
    target = command.get("checkpointId") or command.get("entryId")
    if not isinstance(target, str) or not target:
        raise RpcError('"checkpointId" (or "entryId") must be a non-empty string')
    mode = command.get("mode", "both")
    if mode not in ("code", "conversation", "both"):
        raise RpcError('"mode" must be "code", "conversation" or "both"')
    if server.busy():
        raise RpcError("Cannot restore while the agent is running")
    try:
        result = await server.session.checkpoints.restore(target, mode, force=command.get("force") is True)
    except KeyError:
        raise RpcError(f"Entry {target} not found") from None
    return _restored(result)


@_command("undo")
async def _undo(server: RpcHost, command: dict[str, Any]) -> Any:
    if server.busy():
        raise RpcError("Cannot undo while the agent is running")
    return _restored(await server.session.checkpoints.undo(force=command.get("force") is True))


@_command("redo")
async def _redo(server: RpcHost, command: dict[str, Any]) -> Any:
    if server.busy():
        raise RpcError("Cannot redo while the agent is running")
    return _restored(await server.session.checkpoints.redo(force=command.get("force") is True))
