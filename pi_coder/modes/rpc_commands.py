"""The RPC command handlers (Pi's ``docs/rpc.md`` names and response data).

Each handler takes the server and its typed command (``pi_coder.modes.rpc_types``, parsed once by
the server) and returns the response ``data`` (``None`` for none), or ``HANDLED`` when it responds
itself. Raising reports an error.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar, cast

from pi_coder.json_types import JsonObject
from pi_coder.modes import mcp_host
from pi_coder.modes import rpc_types as t
from pi_coder.modes.rpc_protocol import HANDLED, NULL, Handler, RpcError, RpcHost
from pi_coder.session.entries import LabelEntry

if TYPE_CHECKING:
    from pi_coder.checkpoints.plan import RestoreResult
    from pi_coder.session.tree import SessionTreeNode

__all__ = ["COMMANDS", "COMPACT_WHILE_STREAMING", "state_data"]

_BUSY = "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."

COMPACT_WHILE_STREAMING = (
    "Cannot compact while the agent is running; wait for agent_settled (or send abort first). "
    "Nothing was aborted and no queued message was dropped."
)

COMMANDS: dict[str, Handler] = {}


C = TypeVar("C", bound=t.Command)


def _command(
    model: type[C],
) -> Callable[[Callable[[RpcHost, C], Awaitable[object]]], Callable[[RpcHost, C], Awaitable[object]]]:
    """Register the handler of the commands ``model`` parses (the server dispatches on ``type``)."""

    def register(handler: Callable[[RpcHost, C], Awaitable[object]]) -> Callable[[RpcHost, C], Awaitable[object]]:
        COMMANDS[str(model.model_fields["type"].default)] = cast(Handler, handler)
        return handler

    return register


def _message_dicts(server: RpcHost) -> list[JsonObject]:
    return [m.to_json_dict() for m in server.session.messages if m.role != "system"]


def state_data(server: RpcHost) -> JsonObject:
    """``get_state`` data (design.md's field list; ``sessionName`` only when the session has one)."""
    session = server.session
    model = session.model
    data: JsonObject = {
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


@_command(t.PromptCommand)
async def _prompt(server: RpcHost, command: t.PromptCommand) -> object:
    import asyncio

    text, images, behavior = command.message, command.images, command.streaming_behavior
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
    previous: asyncio.Task[object] | None = None
    if server.settling() and behavior is None:  # sent on agent_end: start once that prompt has settled
        previous = server.prompt_task
        server.run_ended = False  # a further prompt now finds this one running
    elif server.busy():
        if behavior is None:
            raise RpcError(_BUSY)
        if behavior == "steer":
            session.steer(text, images)
        else:
            session.follow_up(text, images)
        return {"disposition": "queued"}
    request_id = command.id
    server.respond("prompt", request_id, data={"disposition": "started"})
    aborts = server.aborts

    async def run() -> None:
        from pi_coder.modes.jsonl import settled_event

        if previous is not None:
            await asyncio.gather(previous, return_exceptions=True)
            if server.aborts != aborts:  # `abort` came while it waited: it never starts
                server.writer.write(settled_event(session.messages))
                return
        try:
            await session.prompt(text, images, checked=True)
        except Exception as exc:
            server.respond("prompt", request_id, error=str(exc) or type(exc).__name__)
            return
        server.writer.write(settled_event(session.messages))

    server.prompt_task = server.spawn(run())
    await asyncio.sleep(0)  # let the run start so that is_streaming is true for the next command
    return HANDLED


@_command(t.SteerCommand)
async def _steer(server: RpcHost, command: t.SteerCommand) -> object:
    _no_extension_command(server, command.message)
    server.session.steer(command.message, command.images)
    return {"disposition": "queued"}


@_command(t.FollowUpCommand)
async def _follow_up(server: RpcHost, command: t.FollowUpCommand) -> object:
    _no_extension_command(server, command.message)
    server.session.follow_up(command.message, command.images)
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


@_command(t.GetCommandsCommand)
async def _get_commands(server: RpcHost, command: t.GetCommandsCommand) -> object:
    """Pi's shape: extension commands, prompt templates, then ``skill:<name>`` (docs/extensions-runtime.md#commands)."""
    session = server.session
    from pi_coder.core.command_records import mcp_prompt_records, prompt_records, skill_records

    records = list(session.extensions.command_records()) if session.extensions is not None else []
    records += prompt_records(session)
    if mcp_host.handles(session, "/mcp"):
        records.append(
            {
                "name": "mcp",
                "description": mcp_host.COMMAND_DESCRIPTION,
                "source": "extension",
                "sourceInfo": {"path": "builtin:mcp", "source": "builtin", "scope": "temporary", "origin": "top-level"},
            }
        )
        records += mcp_prompt_records(session)  # the connected servers' prompts: /mcp__<server>__<prompt>
    records += skill_records(session)
    return {"commands": records}


@_command(t.ClearQueueCommand)
async def _clear_queue(server: RpcHost, command: t.ClearQueueCommand) -> object:
    steering, follow_up = server.session.clear_queue()
    return {"steering": steering, "followUp": follow_up}


@_command(t.AbortCommand)
async def _abort(server: RpcHost, command: t.AbortCommand) -> None:
    server.aborts += 1
    server.session.abort()
    await server.session.wait_for_idle()


@_command(t.GetStateCommand)
async def _get_state(server: RpcHost, command: t.GetStateCommand) -> object:
    return state_data(server)


@_command(t.GetMessagesCommand)
async def _get_messages(server: RpcHost, command: t.GetMessagesCommand) -> object:
    return {"messages": _message_dicts(server)}


@_command(t.GetLastAssistantTextCommand)
async def _last_text(server: RpcHost, command: t.GetLastAssistantTextCommand) -> object:
    return {"text": server.session.last_assistant_text()}


# ---------------------------------------------------------------------------- sessions


def _in_background(server: RpcHost, command: t.Command, work: Callable[[], Awaitable[object]]) -> Awaitable[object]:
    """With extensions, a session replacement runs as a task: its ``session_before_*`` handlers may open
    dialogs, whose answers arrive on stdin while it waits. The response follows when it is done."""
    if server.session.extensions is None:
        return work()

    async def run() -> None:
        kind, request_id = command.type, command.id
        try:
            data = await work()
        except Exception as exc:
            server.respond(kind, request_id, error=str(exc) or type(exc).__name__)
            return
        server.respond(kind, request_id, data=data)

    async def spawned() -> object:
        server.spawn(run())
        return HANDLED

    return spawned()


@_command(t.NewSessionCommand)
async def _new_session(server: RpcHost, command: t.NewSessionCommand) -> object:
    async def work() -> JsonObject:
        return {"cancelled": bool(await server.session.new_session())}

    return await _in_background(server, command, work)


@_command(t.SwitchSessionCommand)
async def _switch_session(server: RpcHost, command: t.SwitchSessionCommand) -> object:
    path = _existing_file(command.session_path)

    async def work() -> JsonObject:
        return {"cancelled": bool(await server.session.switch_session(path))}

    return await _in_background(server, command, work)


@_command(t.ForkCommand)
async def _fork(server: RpcHost, command: t.ForkCommand) -> object:
    entry_id = command.entry_id

    async def work() -> JsonObject:
        text = await server.session.fork(entry_id)
        return {"cancelled": True} if text is None else {"text": text, "cancelled": False}

    return await _in_background(server, command, work)


@_command(t.CloneCommand)
async def _clone(server: RpcHost, command: t.CloneCommand) -> object:
    async def work() -> JsonObject:
        return {"cancelled": bool(await server.session.clone())}

    return await _in_background(server, command, work)


@_command(t.GetEntriesCommand)
async def _get_entries(server: RpcHost, command: t.GetEntriesCommand) -> object:
    store = server.session.store
    entries = store.get_entries()
    since = command.since
    if since is not None:
        index = next((i for i, entry in enumerate(entries) if entry.id == since), None)
        if index is None:
            raise RpcError(f"Entry not found: {since}")
        entries = entries[index + 1 :]
    return {"entries": [entry.to_json_dict() for entry in entries], "leafId": store.leaf_id}


def _tree_node(node: SessionTreeNode, labels: dict[str, str | None]) -> JsonObject:
    data: JsonObject = {
        "entry": node.entry.to_json_dict(),
        "children": [_tree_node(child, labels) for child in node.children],
    }
    if node.label is not None:
        data["label"] = node.label
        stamp = labels.get(node.entry.id)
        if stamp is not None:
            data["labelTimestamp"] = stamp
    return data


@_command(t.GetTreeCommand)
async def _get_tree(server: RpcHost, command: t.GetTreeCommand) -> object:
    store = server.session.store
    stamps: dict[str, str | None] = {}
    for entry in store.get_entries():
        if isinstance(entry, LabelEntry):
            stamps[entry.target_id] = (entry.timestamp or None) if entry.label else None
    return {"tree": [_tree_node(node, stamps) for node in store.get_tree()], "leafId": store.leaf_id}


@_command(t.GetForkMessagesCommand)
async def _fork_messages(server: RpcHost, command: t.GetForkMessagesCommand) -> object:
    return {"messages": [{"entryId": i, "text": t} for i, t in server.session.fork_candidates()]}


@_command(t.SetSessionNameCommand)
async def _set_name(server: RpcHost, command: t.SetSessionNameCommand) -> None:
    server.session.set_session_name(command.name.strip())


@_command(t.GetSessionStatsCommand)
async def _stats(server: RpcHost, command: t.GetSessionStatsCommand) -> object:
    return server.session.stats().to_json_dict()


@_command(t.ExportHtmlCommand)
async def _export(server: RpcHost, command: t.ExportHtmlCommand) -> object:
    return {"path": _export_sync(server, command.output_path)}


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


@_command(t.SetModelCommand)
async def _set_model(server: RpcHost, command: t.SetModelCommand) -> object:
    provider, model_id = command.provider, command.model_id
    model = server.session.models.get_model(provider, model_id)
    if model is None:
        raise RpcError(f"Model not found: {provider}/{model_id}")
    server.session.set_model(model)
    return model.to_json_dict()


@_command(t.CycleModelCommand)
async def _cycle_model(server: RpcHost, command: t.CycleModelCommand) -> object:
    result = server.session.cycle_model()
    if result is None:
        return NULL
    model, level = result
    return {
        "model": model.to_json_dict(),
        "thinkingLevel": level,
        "isScoped": bool(server.session.scoped_models),
    }


@_command(t.GetAvailableModelsCommand)
async def _models(server: RpcHost, command: t.GetAvailableModelsCommand) -> object:
    return {"models": [m.to_json_dict() for m in server.session.available_models()]}


@_command(t.SetThinkingLevelCommand)
async def _set_thinking(server: RpcHost, command: t.SetThinkingLevelCommand) -> None:
    server.session.set_thinking_level(command.level)


@_command(t.CycleThinkingLevelCommand)
async def _cycle_thinking(server: RpcHost, command: t.CycleThinkingLevelCommand) -> object:
    level = server.session.cycle_thinking_level()
    return {"level": level} if level is not None else NULL


@_command(t.GetAvailableThinkingLevelsCommand)
async def _thinking_levels(server: RpcHost, command: t.GetAvailableThinkingLevelsCommand) -> object:
    return {"levels": server.session.available_thinking_levels()}


@_command(t.SetSteeringModeCommand)
async def _steering_mode(server: RpcHost, command: t.SetSteeringModeCommand) -> None:
    server.session.set_steering_mode(command.mode)


@_command(t.SetFollowUpModeCommand)
async def _follow_up_mode(server: RpcHost, command: t.SetFollowUpModeCommand) -> None:
    server.session.set_follow_up_mode(command.mode)


# ---------------------------------------------------------------------------- compaction and bash


@_command(t.CompactCommand)
async def _compact(server: RpcHost, command: t.CompactCommand) -> object:
    compact = getattr(server.session, "compact", None)
    if compact is None:
        raise RpcError("Compaction is not available in this version")
    instructions = command.custom_instructions
    if server.busy():
        # Compacting would abort the run and drop the queued messages: refuse instead.
        raise RpcError(COMPACT_WHILE_STREAMING)
    request_id = command.id

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


@_command(t.SetAutoCompactionCommand)
async def _auto_compaction(server: RpcHost, command: t.SetAutoCompactionCommand) -> None:
    enabled = command.enabled
    server.session.set_auto_compaction(enabled)


@_command(t.SetAutoRetryCommand)
async def _auto_retry(server: RpcHost, command: t.SetAutoRetryCommand) -> None:
    enabled = command.enabled
    server.session.set_auto_retry(enabled)


@_command(t.AbortRetryCommand)
async def _abort_retry(server: RpcHost, command: t.AbortRetryCommand) -> None:
    await server.session.abort_retry()


@_command(t.BashCommand)
async def _bash(server: RpcHost, command: t.BashCommand) -> object:
    text = command.command
    if server.session.is_bash_running:
        raise RpcError("A bash command is already running; send abort_bash first")
    request_id = command.id

    async def run() -> None:
        try:
            message = await server.session.run_bash(text, request_id=request_id)
        except Exception as exc:
            server.respond("bash", request_id, error=str(exc) or type(exc).__name__)
            return
        data: JsonObject = {
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


@_command(t.AbortBashCommand)
async def _abort_bash(server: RpcHost, command: t.AbortBashCommand) -> None:
    server.session.abort_bash()


# ---------------------------------------------------------------------------- checkpoints


def _restored(result: RestoreResult) -> JsonObject:
    if result.conflicts and not result.applied:
        raise RpcError(result.message.replace("force", '"force": true'))
    if not result.applied:
        raise RpcError(result.message)
    return result.to_json_dict()


@_command(t.GetCheckpointsCommand)
async def _get_checkpoints(server: RpcHost, command: t.GetCheckpointsCommand) -> object:
    await server.session.checkpoints.settled()  # the last run's entry may still be being written
    return {"checkpoints": [info.to_json_dict() for info in server.session.checkpoints.list()]}


@_command(t.GetCheckpointDiffCommand)
async def _checkpoint_diff(server: RpcHost, command: t.GetCheckpointDiffCommand) -> object:
    checkpoint = command.checkpoint_id
    try:
        return {"diff": await server.session.checkpoints.diff(checkpoint)}
    except KeyError:
        raise RpcError(f"Checkpoint {checkpoint} not found") from None


@_command(t.RestoreCheckpointCommand)
async def _restore_checkpoint(server: RpcHost, command: t.RestoreCheckpointCommand) -> object:
    target, mode = command.target, command.mode
    if server.busy():
        raise RpcError("Cannot restore while the agent is running")
    try:
        result = await server.session.checkpoints.restore(target, mode, force=command.force)
    except KeyError:
        raise RpcError(f"Entry {target} not found") from None
    return _restored(result)


@_command(t.UndoCommand)
async def _undo(server: RpcHost, command: t.UndoCommand) -> object:
    if server.busy():
        raise RpcError("Cannot undo while the agent is running")
    return _restored(await server.session.checkpoints.undo(force=command.force))


@_command(t.RedoCommand)
async def _redo(server: RpcHost, command: t.RedoCommand) -> object:
    if server.busy():
        raise RpcError("Cannot redo while the agent is running")
    return _restored(await server.session.checkpoints.redo(force=command.force))
