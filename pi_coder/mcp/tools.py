"""MCP tools as agent tools (docs/mcp.md#tools): names, declared schemas, result conversion.

Results are converted from their JSON form (``model_dump(by_alias=True, mode="json")``), so this
module never imports the SDK.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import tempfile
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator
from pydantic_core import PydanticCustomError

__all__ = ["convert_result", "params_model", "resource_link", "save_blob", "tool_name"]

MAX_NAME = 64
TEXT_LIMIT = 20 * 1024
KEEP = 10 * 1024


def tool_name(server: str, tool: str, taken: set[str] | frozenset[str] = frozenset()) -> str:
    """``mcp__<server>__<tool>`` with other than ``[A-Za-z0-9_]`` as ``_``; long or taken names hashed."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", f"mcp__{server}__{tool}")
    if len(name) > MAX_NAME or name in taken:
        digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
        name = f"{name[:55]}_{digest}"
    return name


def params_model(schema: dict[str, Any] | None, name: str) -> type[BaseModel]:
    """A pydantic class whose JSON schema is ``schema`` verbatim; validating it checks the whole schema
    (:func:`pi_coder.mcp.schema.check_arguments`: loosely typed values mended, every problem listed)."""
    declared = dict(schema or {})
    declared.setdefault("type", "object")
    declared.setdefault("properties", {})

    def schema_extra(schema: dict[str, Any], _cls: type[Any]) -> None:
        schema.clear()
        schema.update(declared)

    class Params(BaseModel):
        model_config = ConfigDict(extra="allow", json_schema_extra=schema_extra)

        @model_validator(mode="before")
        @classmethod
        def _check(cls, data: Any) -> Any:
            from pi_coder.mcp.schema import check_arguments

            mended, problems = check_arguments(declared, {} if data is None else data)
            if problems:
                raise PydanticCustomError("mcp_input_schema", "{problems}", {"problems": "; ".join(problems)})
            return mended

    Params.__name__ = Params.__qualname__ = re.sub(r"\W", "_", name) + "_Params"
    return Params


def resource_link(server: str, item: dict[str, Any]) -> str:
    """A resource link as Pi 1.6 words it: ``[Resource <uri> "<name>" (<mime>): <description>. Read it
    with read_mcp_resource (server "<server>")]`` (the parts a link lacks left out)."""
    head = f"[Resource {item.get('uri')}"
    if item.get("name"):
        head += f' "{item["name"]}"'
    if item.get("mimeType"):
        head += f" ({item['mimeType']})"
    about = str(item.get("description") or "").strip().rstrip(".")
    return head + (f": {about}." if about else ".") + f' Read it with read_mcp_resource (server "{server}")]'


def save_blob(data: bytes, suffix: str = "") -> str:
    """``data`` in a new temporary file (``pi-mcp-*``); its path."""
    with tempfile.NamedTemporaryFile(prefix="pi-mcp-", suffix=suffix, delete=False) as fh:
        fh.write(data)
        return fh.name


def _truncate(text: str, details: dict[str, Any]) -> str:
    if len(text.encode("utf-8", "replace")) <= TEXT_LIMIT:
        return text
    path = save_blob(text.encode("utf-8", "replace"), ".txt")
    details["fullOutputPath"] = path
    cut = len(text) - 2 * KEEP
    return f"{text[:KEEP]}\n\n…{cut} chars truncated (full output: {path})…\n\n{text[-KEEP:]}"


def convert_result(server: str, tool: str, result: dict[str, Any]) -> tuple[list[Any], dict[str, Any], bool]:
    """``(content blocks, details, is_error)`` for a ``CallToolResult`` in its JSON form."""
    from pi_coder.ai.types import ImageContent, TextContent

    details: dict[str, Any] = {"server": server, "tool": tool}
    texts: list[str] = []
    blocks: list[Any] = []

    def text(value: str) -> None:
        blocks.append(("text", value))

    for item in result.get("content") or []:
        kind = item.get("type")
        if kind == "text":
            text(str(item.get("text", "")))
        elif kind == "image":
            blocks.append(ImageContent(data=item.get("data", ""), mime_type=item.get("mimeType", "image/png")))
        elif kind == "audio":
            text(f"[audio {item.get('mimeType', '?')} omitted]")
        elif kind == "resource_link":
            text(resource_link(server, item))
        elif kind == "resource":
            res = item.get("resource") or {}
            mime = res.get("mimeType") or "application/octet-stream"
            if "text" in res:
                text(str(res["text"]))
            elif str(mime).startswith("image/"):
                blocks.append(ImageContent(data=res.get("blob", ""), mime_type=mime))
            else:
                raw = base64.b64decode(res.get("blob", "") or b"")
                path = save_blob(raw, "")
                text(f"[Binary resource {res.get('uri')} ({mime}, {len(raw)} bytes) saved to {path}]")
        else:
            text(json.dumps(item, ensure_ascii=False))
    if not blocks and result.get("structuredContent") is not None:
        text(json.dumps(result["structuredContent"], ensure_ascii=False, indent=2))
    is_error = bool(result.get("isError"))
    if is_error and not any(isinstance(b, tuple) for b in blocks):
        text(f"MCP tool {server}/{tool} returned an error")
    content: list[Any] = []
    for block in blocks:
        if isinstance(block, tuple):
            texts.append(block[1])
            content.append(TextContent(text=block[1]))
        else:
            content.append(block)
    # One combined text over the limit: keep head and tail, the whole text in a file.
    total = "\n".join(texts)
    if len(total.encode("utf-8", "replace")) > TEXT_LIMIT:
        images = [b for b in content if not isinstance(b, TextContent)]
        content = [TextContent(text=_truncate(total, details)), *images]
    return content, details, is_error
