"""The find tool: list files (and their directories) matching a glob, honouring .gitignore."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Iterable
from pathlib import Path

from pydantic import Field

from pi_coder.agent.types import AgentTool, AgentToolResult, ToolUpdateCallback
from pi_coder.ai.abort import AbortSignal
from pi_coder.errors import ToolError
from pi_coder.tools._glob import GlobPattern, compile_glob
from pi_coder.tools._listing import existing_dir, listing_result, relative, text_result
from pi_coder.tools._paths import resolve_path
from pi_coder.tools._rg import RipgrepRun, find_ripgrep
from pi_coder.tools._schema import ToolParams
from pi_coder.tools._settings import ToolSettings
from pi_coder.tools._truncate import DEFAULT_MAX_BYTES
from pi_coder.tools._walk import walk_files

__all__ = ["FindParams", "create_find_tool"]

DEFAULT_LIMIT = 1000
DESCRIPTION = (
    "Search for files by glob pattern. Returns matching file paths relative to the search directory. "
    f"Respects .gitignore. Output is truncated to {DEFAULT_LIMIT} results or "
    f"{DEFAULT_MAX_BYTES // 1024}KB (whichever is hit first)."
)


class FindParams(ToolParams):
    pattern: str = Field(
        description="Glob pattern to match files, e.g. '*.ts', '**/*.json', or 'src/**/*.spec.ts'"
    )
    path: str | None = Field(default=None, description="Directory to search in (default: current directory)")
    limit: int | None = Field(default=None, description="Maximum number of results (default: 1000)")


class _Collector:
    """Turns a sorted stream of file paths into matching files and directories, up to a limit."""

    def __init__(self, pattern: GlobPattern, limit: int) -> None:
        self._pattern = pattern
        self._limit = limit
        self._seen_dirs: set[str] = set()
        self.results: list[str] = []
        self.reached = False

    def _match(self, rel: str, is_dir: bool) -> bool:
        return self._pattern.matches(rel, is_dir) != self._pattern.negated

    def _emit(self, entry: str) -> bool:
        if len(self.results) >= self._limit:
            self.reached = True
            return False
        self.results.append(entry)
        return True

    def add(self, rel: str) -> bool:
        """Add one file path; returns False once the limit is exceeded."""
        parent = rel.rpartition("/")[0]
        if parent and parent not in self._seen_dirs:
            parts = rel.split("/")
            for depth in range(1, len(parts)):
                directory = "/".join(parts[:depth])
                if directory in self._seen_dirs:
                    continue
                self._seen_dirs.add(directory)
                if self._match(directory, True) and not self._emit(directory + "/"):
                    return False
        if self._match(rel, False):
            return self._emit(rel)
        return True

    def add_all(self, paths: Iterable[str], signal: AbortSignal | None) -> None:
        for rel in paths:
            if signal is not None and signal.aborted:
                raise ToolError("Operation aborted")
            if not self.add(rel):
                return


async def _collect_rg(rg: str, root: Path, collector: _Collector, signal: AbortSignal | None) -> None:
    argv = ["--files", "--hidden", "--no-require-git", "--sort", "path", "--glob", "!.git", "./"]
    run = RipgrepRun(rg, argv, root, signal)
    async with contextlib.aclosing(run.lines()) as lines:
        async for raw in lines:
            if not collector.add(relative(raw.decode("utf-8", "surrogateescape"))):
                return
    if run.returncode not in (0, 1) and not collector.results:
        raise ToolError(run.stderr or f"ripgrep exited with code {run.returncode}")


def create_find_tool(cwd: str | os.PathLike[str], settings: ToolSettings | None = None) -> AgentTool[FindParams]:
    """The ``find`` tool bound to ``cwd`` (ripgrep's file walker when available, else Python's)."""
    settings = settings or ToolSettings()

    async def execute(
        tool_call_id: str, args: FindParams, signal: AbortSignal | None, on_update: ToolUpdateCallback | None
    ) -> AgentToolResult:
        if signal is not None and signal.aborted:
            raise ToolError("Operation aborted")
        root = existing_dir(resolve_path(args.path or ".", cwd))
        pattern = compile_glob(args.pattern.strip()) or compile_glob("*")
        assert pattern is not None
        limit = max(1, args.limit or DEFAULT_LIMIT)
        collector = _Collector(pattern, limit)
        rg = find_ripgrep(settings)
        if rg is not None:
            await _collect_rg(rg, root, collector, signal)
        else:
            await asyncio.to_thread(collector.add_all, walk_files(root), signal)
        if not collector.results:
            return text_result("No files found matching pattern")
        return listing_result(
            collector.results, limit=limit, limit_reached=collector.reached, unit="results",
            limit_key="resultLimitReached",
        )  # fmt: skip

    return AgentTool(name="find", label="find", description=DESCRIPTION, parameters=FindParams, execute=execute)
