"""``ctx.ui`` in RPC mode: the ``extension_ui_request`` / ``extension_ui_response`` sub-protocol (docs/extensions-runtime.md#rpc-ui-sub-protocol).

Dialogs (``select``, ``confirm``, ``input``, ``editor``) write a request with a fresh uuid4 id and
wait for the client's answer line; timeouts (sent as ``timeout`` in ms) and an aborted signal
resolve them with the cancel value here. A dialog without a timeout of its own gets the
``permissions.rpc_dialog_timeout`` setting (300 s; 0 waits forever), so a client that never
answers cannot hold a permission question open: it is refused on expiry. Late answers and unknown ids are ignored; malformed
answers count as cancelled; end of input cancels every pending dialog. Other methods are
fire-and-forget requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from pi_coder.extensions.ui import UIDefaults
from pi_coder.json_types import JsonObject

if TYPE_CHECKING:
    from pi_coder.ai.abort import AbortSignal
    from pi_coder.modes.jsonl import JsonLineWriter

__all__ = ["RpcUI"]

_CANCELLED: Mapping[str, object] = {"cancelled": True}


class RpcUI(UIDefaults):
    """``ctx.ui`` over RPC; ``custom()`` runs its ``fallback`` (a Textual widget cannot cross the wire)."""

    has_ui = True

    def __init__(self, writer: JsonLineWriter, *, default_timeout: float | None = None) -> None:
        self._writer = writer
        self._default_timeout = default_timeout
        self._pending: dict[str, asyncio.Future[Mapping[str, object]]] = {}
        self._closed = False

    # ------------------------------------------------------------------ answers

    def resolve(self, answer: Mapping[str, object]) -> None:
        """An ``extension_ui_response`` line from the client."""
        future = self._pending.get(str(answer.get("id")))
        if future is not None and not future.done():
            future.set_result(answer)

    def cancel_all(self) -> None:
        """End of input: every pending dialog gets its cancel value."""
        self._closed = True
        for future in self._pending.values():
            if not future.done():
                future.set_result(_CANCELLED)

    async def _ask(
        self, method: str, fields: JsonObject, timeout: float | None, signal: AbortSignal | None
    ) -> Mapping[str, object]:
        if self._closed:
            return _CANCELLED
        if timeout is None:
            timeout = self._default_timeout
        request_id = str(uuid.uuid4())
        future: asyncio.Future[Mapping[str, object]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        request: JsonObject = {"type": "extension_ui_request", "id": request_id, "method": method, **fields}
        if timeout is not None:
            request["timeout"] = round(timeout * 1000)
        if signal is not None:
            if signal.aborted:
                return _CANCELLED

            def cancel(*_: object) -> None:
                if not future.done():
                    future.set_result(_CANCELLED)

            signal.add_listener(cancel)
        self._writer.write(request)
        try:
            return await asyncio.wait_for(asyncio.shield(future), timeout) if timeout is not None else await future
        except TimeoutError:
            return _CANCELLED
        finally:
            self._pending.pop(request_id, None)

    # ------------------------------------------------------------------ dialogs

    async def confirm(self, title: str, message: str, *, timeout: float | None = None, signal: AbortSignal | None = None) -> bool:
        answer = await self._ask("confirm", {"title": title, "message": message}, timeout, signal)
        return answer.get("confirmed") is True and not answer.get("cancelled")

    async def _value(self, method: str, fields: JsonObject, timeout: float | None, signal: AbortSignal | None) -> str | None:
        answer = await self._ask(method, fields, timeout, signal)
        value = answer.get("value")
        return value if isinstance(value, str) and not answer.get("cancelled") else None

    async def select(self, title: str, options: Sequence[str], *, timeout: float | None = None, signal: AbortSignal | None = None) -> str | None:
        return await self._value("select", {"title": title, "options": list(options)}, timeout, signal)

    async def input(self, title: str, placeholder: str = "", *, timeout: float | None = None, signal: AbortSignal | None = None) -> str | None:
        return await self._value("input", {"title": title, "placeholder": placeholder}, timeout, signal)

    async def editor(self, title: str, prefill: str = "", *, timeout: float | None = None, signal: AbortSignal | None = None) -> str | None:
        return await self._value("editor", {"title": title, "prefill": prefill}, timeout, signal)

    # ------------------------------------------------------------------ fire and forget

    def _send(self, method: str, **fields: object) -> None:
        with contextlib.suppress(Exception):
            self._writer.write(
                {"type": "extension_ui_request", "id": str(uuid.uuid4()), "method": method}
                | {k: v for k, v in fields.items() if v is not None}
            )

    def notify(self, message: str, level: str = "info", *, source: str = "") -> None:
        self._send("notify", message=message, notifyType=level)

    def set_status(self, key: str, text: str | None) -> None:
        self._send("setStatus", statusKey=key, statusText=text)

    def set_widget(self, key: str, lines: Sequence[str] | None, placement: str = "above_editor") -> None:
        where = "belowEditor" if placement == "below_editor" else "aboveEditor"
        self._send("setWidget", widgetKey=key, widgetLines=list(lines) if lines is not None else None, widgetPlacement=where)

    def set_title(self, title: str) -> None:
        self._send("setTitle", title=title)

    def set_editor_text(self, text: str) -> None:
        self._send("set_editor_text", text=text)

    def get_editor_text(self) -> str:
        return ""

    def set_working_message(self, text: str | None) -> None:
        pass
