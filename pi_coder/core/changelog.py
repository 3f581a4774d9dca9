"""The project's CHANGELOG.md, for ``/changelog``.

The wheel ships it as ``pi_coder/CHANGELOG.md`` (pyproject's ``force-include``); a source
checkout or an editable install reads the repository's ``CHANGELOG.md``.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["changelog_path", "read_changelog"]


def changelog_path() -> Path | None:
    """The changelog file, or None when neither place has one."""
    package = Path(__file__).resolve().parent.parent
    for candidate in (package / "CHANGELOG.md", package.parent / "CHANGELOG.md"):
        if candidate.is_file():
            return candidate
    return None


def read_changelog() -> str | None:
    """The changelog's Markdown, or None when it is missing or unreadable."""
    path = changelog_path()
    if path is None:
        return None
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
