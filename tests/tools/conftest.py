from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_coder.agent.types import AgentTool, AgentToolResult
from pi_coder.ai.abort import AbortSignal
from pi_coder.tools import ToolSettings, create_coding_tools


class ToolRunner:
    """Runs the real tools bound to a temporary cwd."""

    def __init__(self, cwd: Path, settings: ToolSettings | None = None) -> None:
        self.cwd = cwd
        self.tools: dict[str, AgentTool] = create_coding_tools(cwd, settings)

    async def __call__(
        self, name: str, signal: AbortSignal | None = None, on_update: Any = None, **params: Any
    ) -> AgentToolResult:
        tool = self.tools[name]
        if tool.prepare_arguments is not None:
            params = tool.prepare_arguments(params)
        validated = tool.parameters.model_validate(params)
        return await tool.execute("call-1", validated, signal, on_update)


def text_of(result: AgentToolResult) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


@pytest.fixture
def run(tmp_path: Path) -> ToolRunner:
    return ToolRunner(tmp_path)
