"""The grep tool: search file contents with ripgrep, or a pure-Python walker without it."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import Field

from pi_coder.agent.types import AgentTool, AgentToolResult, ToolUpdateCallback
from pi_coder.ai.abort import AbortSignal
from pi_coder.errors import ToolError
from pi_coder.tools._files import file_kind, read_regular_bytes
from pi_coder.tools._glob import GlobPattern, compile_glob
from pi_coder.tools._listing import listing_result, relative, text_result
from pi_coder.tools._paths import resolve_path
from pi_coder.tools._rg import RipgrepRun, find_ripgrep
from pi_coder.tools._schema import ToolParams
from pi_coder.tools._settings import ToolSettings
from pi_coder.tools._truncate import DEFAULT_MAX_BYTES, GREP_MAX_LINE_LENGTH, truncate_line
from pi_coder.tools._walk import walk_files

__all__ = ["GrepParams", "create_grep_tool"]

DEFAULT_LIMIT = 100
DESCRIPTION = (
    "Search file contents for a pattern. Returns matching lines with file paths and line numbers. "
    f"Respects .gitignore. Output is truncated to {DEFAULT_LIMIT} matches or {DEFAULT_MAX_BYTES // 1024}KB "
    f"(whichever is hit first). Long lines are truncated to {GREP_MAX_LINE_LENGTH} chars."
)


class GrepParams(ToolParams):
    pattern: str = Field(description="Search pattern (regex or literal string)")
    path: str | None = Field(default=None, description="Directory or file to search (default: current directory)")
    glob: str | None = Field(default=None, description="Filter files by glob pattern, e.g. '*.ts' or '**/*.spec.ts'")
    ignore_case: bool | None = Field(default=None, alias="ignoreCase", description="Case-insensitive search (default: false)")
    literal: bool | None = Field(
        default=None, description="Treat pattern as literal string instead of regex (default: false)"
    )
    context: int | None = Field(
        default=None, description="Number of lines to show before and after each match (default: 0)"
    )
    limit: int | None = Field(default=None, description="Maximum number of matches to return (default: 100)")


@dataclass(slots=True)
class _FileHits:
    rel: str
    lines: list[tuple[int, str, bool]] = field(default_factory=list)
    """(line number, text, is match)."""


def _sort_key(rel: str) -> tuple[str, ...]:
    return tuple(rel.split("/"))


def _json_text(value: dict[str, str]) -> str:
    if "text" in value:
        return value["text"]
    return base64.b64decode(value.get("bytes", "")).decode("utf-8", "replace")


def _line_text(data: dict[str, dict[str, str]]) -> str:
    return _json_text(data["lines"]).rstrip("\n").rstrip("\r")


async def _search_rg(
    rg: str,
    root: Path,
    is_file: bool,
    args: GrepParams,
    limit: int,
    context: int,
    signal: AbortSignal | None,
    *,
    sort: bool,
) -> tuple[list[_FileHits], bool]:
    argv = ["--json", "--line-number", "--color=never", "--hidden", "--no-require-git", "--glob", "!.git"]
    if sort:
        argv += ["--sort", "path"]
    if args.ignore_case:
        argv.append("--ignore-case")
    if args.literal:
        argv.append("--fixed-strings")
    path_filter = None
    if args.glob and not is_file:
        # rg's --glob overrides .gitignore for files it whitelists; file types and our own path
        # filter do not, so ignored files stay ignored.
        if args.glob.startswith("!"):
            argv += ["--glob", args.glob]
        elif "/" not in args.glob:
            argv += ["--type-add", f"piglob:{args.glob}", "--type", "piglob"]
        else:
            path_filter = compile_glob(args.glob)
    if context:
        argv += ["--context", str(context)]
    argv += ["--regexp", args.pattern, "--", root.name if is_file else "./"]
    run = RipgrepRun(rg, argv, root.parent if is_file else root, signal)
    groups: list[_FileHits] = []
    current: _FileHits | None = None
    matches = 0
    last_match = 0
    skip_file = False
    reached = False
    async with contextlib.aclosing(run.lines()) as lines:
        async for raw in lines:
            event = json.loads(raw)
            kind = event.get("type")
            data = event.get("data", {})
            if kind == "begin":
                rel = relative(_json_text(data["path"]))
                skip_file = path_filter is not None and not path_filter.matches(rel, False)
                if skip_file:
                    current = None
                    continue
                if matches >= limit:
                    current = None  # only looking for one more match now
                    continue
                current = _FileHits(rel)
                groups.append(current)
            elif kind == "match":
                if skip_file:
                    continue
                if matches >= limit:
                    reached = True
                    break
                if current is not None:
                    current.lines.append((data["line_number"], _line_text(data), True))
                    matches += 1
                    last_match = data["line_number"]
            elif kind == "context" and current is not None:
                if matches < limit or data["line_number"] <= last_match + context:
                    current.lines.append((data["line_number"], _line_text(data), False))
    if not reached and run.returncode not in (0, 1, None):
        if not any(g.lines for g in groups):
            raise ToolError(run.stderr or f"ripgrep exited with code {run.returncode}")
    groups = [g for g in groups if g.lines]
    groups.sort(key=lambda g: _sort_key(g.rel))
    return groups, reached


def _compile(args: GrepParams) -> tuple[re.Pattern[str], re.Pattern[str] | None]:
    source = re.escape(args.pattern) if args.literal else args.pattern
    flags = re.IGNORECASE if args.ignore_case else 0
    try:
        line_rx = re.compile(source, flags)
        prefilter = None if ("\\A" in source or "\\Z" in source) else re.compile(source, flags | re.MULTILINE)
    except re.error as exc:
        raise ToolError(f"regex parse error: {exc}") from exc
    return line_rx, prefilter


def _glob_skips(glob: GlobPattern, rel: str) -> bool:
    if not glob.negated:
        return not glob.matches(rel, False)
    parts = rel.split("/")
    dirs = ("/".join(parts[:i]) for i in range(1, len(parts)))
    return glob.matches(rel, False) or any(glob.matches(d, True) for d in dirs)


def _search_python(
    root: Path, is_file: bool, args: GrepParams, limit: int, context: int, signal: AbortSignal | None
) -> tuple[list[_FileHits], bool]:
    line_rx, prefilter = _compile(args)
    glob = compile_glob(args.glob) if args.glob and not is_file else None
    if is_file:
        files: Iterable[str] = [root.name]
        base = root.parent
    else:
        files = walk_files(root)
        base = root
    groups: list[_FileHits] = []
    matches = 0
    for rel in files:
        if signal is not None and signal.aborted:
            raise ToolError("Operation aborted")
        if glob is not None and _glob_skips(glob, rel):
            continue
        try:
            data = read_regular_bytes(base / rel, rel)
        except ToolError:
            continue
        if b"\x00" in data:
            continue
        text = data.decode("utf-8", "replace")
        if prefilter is not None and not prefilter.search(text):
            continue
        lines = text.split("\n")
        if text.endswith("\n"):
            lines.pop()
        hit_rows = [i for i, line in enumerate(lines) if line_rx.search(line)]
        if not hit_rows:
            continue
        group = _FileHits(rel)
        hit_set = set(hit_rows)
        shown_until = -1
        for i in hit_rows:
            if matches >= limit:
                groups.append(group)
                return [g for g in groups if g.lines], True
            for j in range(max(shown_until + 1, i - context), i):
                group.lines.append((j + 1, lines[j].rstrip("\r"), False))
            group.lines.append((i + 1, lines[i].rstrip("\r"), True))
            matches += 1
            shown_until = i
            if matches >= limit:
                # Trailing context of the last match, up to the next match.
                for j in range(i + 1, min(i + 1 + context, len(lines))):
                    if j in hit_set:
                        break
                    group.lines.append((j + 1, lines[j].rstrip("\r"), False))
                    shown_until = j
                continue
            for j in range(i + 1, min(i + 1 + context, len(lines))):
                if j in hit_set:
                    break
                group.lines.append((j + 1, lines[j].rstrip("\r"), False))
                shown_until = j
        groups.append(group)
    return groups, False


def _format(groups: list[_FileHits], limit: int, reached: bool) -> AgentToolResult:
    rows: list[str] = []
    cut_any = False
    for group in groups:
        for number, text, is_match in group.lines:
            shown, cut = truncate_line(text)
            cut_any |= cut
            sep = ":" if is_match else "-"
            rows.append(f"{group.rel}{sep}{number}{sep} {shown}")
    return listing_result(
        rows, limit=limit, limit_reached=reached, unit="matches", limit_key="matchLimitReached", lines_cut=cut_any
    )


def create_grep_tool(cwd: str | os.PathLike[str], settings: ToolSettings | None = None) -> AgentTool[GrepParams]:
    """The ``grep`` tool bound to ``cwd`` (ripgrep when available, else a Python walker)."""
    settings = settings or ToolSettings()

    async def execute(
        tool_call_id: str, args: GrepParams, signal: AbortSignal | None, on_update: ToolUpdateCallback | None
    ) -> AgentToolResult:
        if signal is not None and signal.aborted:
            raise ToolError("Operation aborted")
        root = resolve_path(args.path or ".", cwd)
        if not root.exists():
            raise ToolError(f"Path not found: {root}")
        is_file = not root.is_dir()
        if is_file:
            kind = file_kind(root.stat().st_mode)
            if kind is not None:
                raise ToolError(f"{args.path} is not a regular file ({kind}); grep searches files and folders only.")
        limit = max(1, args.limit or DEFAULT_LIMIT)
        context = max(0, args.context or 0)
        rg = find_ripgrep(settings)
        if rg is not None:
            # A parallel search first: when everything fits under the limit, sorting the files
            # afterwards gives the same output as a sorted search. Only when the limit cuts the
            # results is the (single-threaded) sorted search needed to make the cut deterministic;
            # it stops early too, as soon as it passes the limit.
            groups, reached = await _search_rg(rg, root, is_file, args, limit, context, signal, sort=False)
            if reached:
                groups, reached = await _search_rg(rg, root, is_file, args, limit, context, signal, sort=True)
        else:
            groups, reached = await asyncio.to_thread(_search_python, root, is_file, args, limit, context, signal)
        if not groups:
            return text_result("No matches found")
        return _format(groups, limit, reached)

    return AgentTool(name="grep", label="grep", description=DESCRIPTION, parameters=GrepParams, execute=execute)
