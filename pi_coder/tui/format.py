"""Small text helpers for the TUI: token counts, paths, git branch, durations."""

from __future__ import annotations

from pathlib import Path

from pi_coder.paths import shorten_home

__all__ = ["format_duration", "format_tokens", "git_branch", "shorten_home", "truncate_line"]


def format_tokens(count: int) -> str:
    """Pi's footer format: ``999``, ``1.2k``, ``45k``, ``1.3M``."""
    if count < 1000:
        return str(count)
    if count < 10_000:
        return f"{count / 1000:.1f}k"
    if count < 1_000_000:
        return f"{round(count / 1000)}k"
    if count < 10_000_000:
        return f"{count / 1_000_000:.1f}M"
    return f"{round(count / 1_000_000)}M"


def git_branch(cwd: str) -> str | None:
    """The current branch (or short commit when detached), read from ``.git/HEAD`` without git."""
    directory = Path(cwd).resolve()
    for folder in (directory, *directory.parents):
        git = folder / ".git"
        if git.is_file():  # worktree or submodule: "gitdir: <path>"
            try:
                target = git.read_text(encoding="utf-8").strip()
            except OSError:
                return None
            if not target.startswith("gitdir:"):
                return None
            git = (folder / target.removeprefix("gitdir:").strip()).resolve()
        if git.is_dir():
            try:
                head = (git / "HEAD").read_text(encoding="utf-8").strip()
            except OSError:
                return None
            if head.startswith("ref: "):
                return head.removeprefix("ref: ").removeprefix("refs/heads/")
            return head[:7] or None
    return None


def format_duration(seconds: float) -> str:
    """``4.2s``, ``1m05s``, ``1h02m``."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def truncate_line(text: str, width: int) -> str:
    """First line of ``text``, cut to ``width`` characters with an ellipsis."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    if len(line) > width or "\n" in text.strip():
        return line[: max(0, width - 3)] + "..." if len(line) > width - 3 else line + "..."
    return line
