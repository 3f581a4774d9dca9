"""MCP prompts as slash commands (docs/mcp.md#prompts), as Claude Code offers them.

A connected server's prompt ``name`` is the command ``/mcp__<server>__<name>`` (other characters
than ``[A-Za-z0-9_]`` as ``_``, as tool names). Its words fill the prompt's arguments in their
declared order (shell-style quoting; the last argument takes the rest of the line), or
``name=value`` words fill them by name. ``prompts/get`` answers messages; their texts (and
embedded text resources) joined by blank lines become the user's prompt, their images its
images. A missing required argument, an unknown command or a failed request is one line for
the user; nothing is sent to the model then.
"""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_coder.mcp.seams import ServerHost

__all__ = ["PromptError", "command_name", "expand", "records"]

PREFIX = "/mcp__"

_SCOPES = {"global": "user", "project": "project"}
"""``sourceInfo.scope`` of a server's configuration file (an extension's server: ``temporary``)."""


class PromptError(ValueError):
    """A user mistake or a failed request: the message is the one line to show."""


def command_name(server: str, prompt: str) -> str:
    """``mcp__<server>__<prompt>`` (without the slash)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", f"mcp__{server}__{prompt}")


def _usage(command: str, arguments: list[dict[str, Any]]) -> str:
    words = [f"<{a.get('name')}>" if a.get("required") else f"[{a.get('name')}]" for a in arguments]
    return " ".join([f"/{command}", *words])


def records(manager: ServerHost) -> list[dict[str, Any]]:
    """``get_commands`` records (Pi's shape) of every connected server's prompts."""
    out: list[dict[str, Any]] = []
    for server in manager.servers.values():
        for prompt in server.prompts:
            name = command_name(server.name, str(prompt.get("name")))
            about = str(prompt.get("description") or prompt.get("title") or f"MCP prompt of {server.name}")
            out.append(
                {
                    "name": name,
                    "description": about.splitlines()[0] if about else "",
                    "source": "mcp",
                    "sourceInfo": {
                        "path": f"mcp:{server.name}",
                        "source": "mcp",
                        "scope": _SCOPES.get(server.config.source, "temporary"),
                        "origin": "top-level",
                    },
                    "usage": _usage(name, list(prompt.get("arguments") or [])),
                }
            )
    return out


def _find(manager: ServerHost, command: str) -> tuple[str, dict[str, Any]] | None:
    for server in manager.servers.values():
        for prompt in server.prompts:
            if command_name(server.name, str(prompt.get("name"))) == command:
                return server.name, prompt
    return None


def _arguments(command: str, declared: list[dict[str, Any]], rest: str) -> dict[str, str]:
    try:
        words = shlex.split(rest)
    except ValueError as exc:
        raise PromptError(f"/{command}: {exc}") from None
    names = [str(a.get("name")) for a in declared]
    values: dict[str, str] = {}
    positional: list[str] = []
    for word in words:
        key, sep, value = word.partition("=")
        if sep and key in names:
            values[key] = value
        else:
            positional.append(word)
    free = [n for n in names if n not in values]
    if positional and not free:
        raise PromptError(f"/{command} takes no more arguments (usage: {_usage(command, declared)})")
    for index, word in enumerate(positional):
        if index >= len(free) - 1:
            values[free[-1]] = " ".join(positional[index:])
            break
        values[free[index]] = word
    missing = [str(a.get("name")) for a in declared if a.get("required") and str(a.get("name")) not in values]
    if missing:
        raise PromptError(f"/{command} needs {', '.join(missing)} (usage: {_usage(command, declared)})")
    return values


async def expand(manager: ServerHost, text: str) -> tuple[str, list[Any]] | None:
    """``(prompt text, images)`` for ``/mcp__<server>__<prompt> args``; None when ``text`` is not
    such a command of a connected server. Raises :class:`PromptError` with the line to show."""
    from pi_coder.ai.types import ImageContent
    from pi_coder.mcp.tools import resource_link

    stripped = text.strip()
    if not stripped.startswith(PREFIX):
        return None
    command, _, rest = stripped[1:].partition(" ")
    found = _find(manager, command)
    if found is None:
        connecting = [s.name for s in manager.servers.values() if s.state == "connecting"]
        if not connecting:
            return None
        manager.start()  # the first prompt may come before the servers started connecting
        await manager.wait_connecting(max(manager.servers[n].config.timeout for n in connecting))
        found = _find(manager, command)
        if found is None:
            return None
    server, prompt = found
    arguments = _arguments(command, list(prompt.get("arguments") or []), rest)
    name = str(prompt.get("name"))
    try:
        result = await manager.toolset.request(server, lambda c: c.get_prompt(name, arguments))
    except Exception as exc:  # noqa: BLE001 - any failure is the server's: one line
        raise PromptError(f'/{command}: MCP server "{server}" could not give the prompt: {exc}') from None
    texts: list[str] = []
    images: list[Any] = []
    for message in result.get("messages") or []:
        content = message.get("content") or {}
        parts = content if isinstance(content, list) else [content]
        for part in parts:
            kind = part.get("type")
            if kind == "text":
                texts.append(str(part.get("text", "")))
            elif kind == "image":
                images.append(ImageContent(data=str(part.get("data", "")), mime_type=str(part.get("mimeType", "image/png"))))
            elif kind == "resource":
                resource = part.get("resource") or {}
                if "text" in resource:
                    texts.append(str(resource["text"]))
                else:
                    texts.append(f"[Resource {resource.get('uri')}: read it with read_mcp_resource (server \"{server}\")]")
            elif kind == "resource_link":
                texts.append(resource_link(server, part))
    if not texts and not images:
        raise PromptError(f"/{command}: the prompt has no content")
    return "\n\n".join(texts), images
