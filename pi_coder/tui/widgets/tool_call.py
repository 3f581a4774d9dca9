"""A tool-call block: created when the call starts streaming, filled in as it runs."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from textual.timer import Timer

from pi_coder.tui.tool_render import CustomToolRender, ToolStatus, ToolView, render_tool_folds, result_text
from pi_coder.tui.widgets._measured import MeasuredStatic
from pi_coder.tui.widgets._throttle import Throttle

if TYPE_CHECKING:
    from pi_coder.agent.types import AgentToolResult

__all__ = ["ToolCallBlock"]


class ToolCallBlock(MeasuredStatic):
    """Pending / running / success / error tool call; ``expanded`` shows full output."""

    DEFAULT_CSS = """
    ToolCallBlock { height: auto; margin: 1 1 0 1; padding: 0 1; background: $pi-tool-pending-bg; }
    ToolCallBlock.-pending { background: $pi-tool-pending-bg; }
    ToolCallBlock.-success { background: $pi-tool-success-bg; }
    ToolCallBlock.-error { background: $pi-tool-error-bg; }
    """

    def __init__(
        self,
        tool_call_id: str,
        name: str,
        *,
        expanded: bool = False,
        animate: bool = True,
        custom: CustomToolRender | None = None,
    ) -> None:
        super().__init__("", classes="-pending")
        self.view = ToolView(tool_call_id=tool_call_id, name=name)
        self.custom = custom
        """An extension tool's ``render_call``/``render_result``."""
        self._expanded = expanded
        self._folds = True
        """Whether the other Ctrl+O state looks different (known once drawn)."""
        self._ticking = animate
        self._started: float | None = None
        self._ticker: Timer | None = None
        self._throttle = Throttle(self, self.refresh_view)

    @classmethod
    def again(cls, view: ToolView, *, expanded: bool, custom: CustomToolRender | None) -> ToolCallBlock:
        """A finished block drawn again from (a copy of) its ``view``: what it showed, elapsed
        time and edit preview included (the windowed transcript rebuilds unmounted blocks)."""
        block = cls(view.tool_call_id, view.name, expanded=expanded, animate=False, custom=custom)
        block.view = replace(view)
        block._set_status(view.status)
        return block

    def on_mount(self) -> None:
        self.refresh_view()

    @property
    def expanded(self) -> bool:
        return self._expanded

    def set_expanded(self, expanded: bool) -> None:
        if expanded == self._expanded:
            return
        self._expanded = expanded
        if self._folds:  # else both states look the same: nothing to draw again
            self.refresh_view()

    def refresh_view(self) -> None:
        renderable, self._folds = render_tool_folds(self.view, self._expanded, self.custom)
        self.update(renderable)

    def _set_status(self, status: ToolStatus) -> None:
        self.view.status = status
        kind = {"success": "-success", "error": "-error"}.get(status, "-pending")
        self.set_classes(kind)

    # ------------------------------------------------------------------ event entry points

    def update_args(self, args: dict[str, Any], *, complete: bool = False) -> None:
        self.view.args = dict(args)
        if complete and self.view.status == "streaming":
            self.view.status = "pending"
        self._throttle.request()

    def show_stored(
        self,
        args: dict[str, Any],
        output: str | None,
        is_error: bool,
        details: Any = None,
        result: AgentToolResult | None = None,
    ) -> None:
        """A finished call of a stored transcript (before mounting): ``output`` None means it got no
        result; ``result`` is the stored ``AgentToolResult`` (for an extension's ``render_result``)."""
        self.view.args = dict(args)
        self.view.output = "No result" if output is None else output
        self.view.details = details
        self.view.result = result
        self._set_status("error" if is_error or output is None else "success")

    def set_preview(self, diff: str | None, error: str | None = None) -> None:
        self.view.preview = diff
        self.view.preview_error = error
        self.refresh_view()

    def start(self, args: dict[str, Any] | None = None) -> None:
        if args is not None:
            self.view.args = dict(args)
        self._set_status("running")
        self._started = time.monotonic()
        if self.view.name == "bash" and self._ticking:
            self.view.elapsed = 0.0
            self._ticker = self.set_interval(1.0, self._tick, name="tool-elapsed")
        self.refresh_view()

    def _tick(self) -> None:
        if self._started is not None:
            self.view.elapsed = time.monotonic() - self._started
            self.refresh_view()

    def partial(self, result: AgentToolResult) -> None:
        self.view.output = result_text(result)
        self.view.result = result
        self._throttle.request()

    def finish(self, result: AgentToolResult, is_error: bool) -> None:
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None
        if self._started is not None and self._ticking:
            self.view.elapsed = time.monotonic() - self._started
        self._throttle.cancel()
        self.view.output = result_text(result)
        self.view.result = result
        self.view.details = result.details
        self._set_status("error" if is_error else "success")
        self.refresh_view()

    def abandon(self) -> None:
        """The run ended (aborted/failed) before this call produced a result."""
        if self.view.status in ("success", "error"):
            return
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None
        self._throttle.cancel()
        if not self.view.output:
            self.view.output = "Operation aborted"
        self._set_status("error")
        self.refresh_view()
