"""Locating and running ripgrep (``rg``) for grep and find."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
from collections.abc import AsyncGenerator, Sequence
from pathlib import Path

from pi_coder.ai.abort import AbortSignal
from pi_coder.errors import ToolError
from pi_coder.tools._settings import ToolSettings

__all__ = ["RipgrepRun", "find_ripgrep"]


def find_ripgrep(settings: ToolSettings | None = None) -> str | None:
    """The ripgrep binary: the explicit setting, next to the interpreter, then on PATH."""
    settings = settings or ToolSettings()
    if not settings.use_ripgrep:
        return None
    if settings.rg_path:
        return settings.rg_path if os.path.isfile(settings.rg_path) else None
    name = "rg.exe" if os.name == "nt" else "rg"
    beside = Path(sys.executable).parent / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("rg")


class RipgrepRun:
    """One ripgrep process: iterate its stdout lines; leaving early kills it."""

    def __init__(self, rg: str, args: Sequence[str], cwd: str | os.PathLike[str], signal: AbortSignal | None) -> None:
        self._rg = rg
        self._args = list(args)
        self._cwd = os.fspath(cwd)
        self._signal = signal
        self._proc: asyncio.subprocess.Process | None = None
        self.returncode: int | None = None
        self.stderr = ""

    async def lines(self) -> AsyncGenerator[bytes, None]:
        """Stdout lines (without the newline). Raises ``ToolError("Operation aborted")`` on abort."""
        try:
            self._proc = await asyncio.create_subprocess_exec(
                self._rg, *self._args, cwd=self._cwd, stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, limit=1 << 24,
            )  # fmt: skip
        except OSError as exc:
            raise ToolError(f"Failed to run ripgrep: {exc}") from exc
        proc = self._proc
        assert proc.stdout is not None and proc.stderr is not None
        stderr_task = asyncio.ensure_future(proc.stderr.read())
        abort_task = asyncio.ensure_future(self._signal.wait()) if self._signal is not None else None
        pending = b""
        try:
            while True:
                read = asyncio.ensure_future(proc.stdout.read(1 << 16))
                if abort_task is not None:
                    await asyncio.wait({read, abort_task}, return_when=asyncio.FIRST_COMPLETED)
                    if abort_task.done():
                        read.cancel()
                        raise ToolError("Operation aborted")
                chunk = await read
                if not chunk:
                    break
                *complete, pending = (pending + chunk).split(b"\n")
                for line in complete:
                    yield line
            if pending:
                yield pending
            self.returncode = await proc.wait()
            self.stderr = (await stderr_task).decode("utf-8", "replace").strip()
        finally:
            if abort_task is not None:
                abort_task.cancel()
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
            stderr_task.cancel()
