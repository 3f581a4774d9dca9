"""Export a session as one self-contained HTML page (``pi --export``, the TUI's ``/export``, RPC).

The page is an interactive viewer of the whole session file: every entry of the tree, the current
leaf's path shown first, branch points switchable (inline and from the tree sidebar), tool calls
and thinking collapsible, client-side search, the theme's colours, and model, tokens and cost on
each assistant message. Markdown is rendered here (markdown-it-py, Pygments; imported only when
exporting). Nothing is fetched: CSS and script are inline, images are data URIs, and a Content
Security Policy allows only the page's own script. Secrets are redacted (``export.redact``).
Rendering works on the JSON form of the entries, so files written by Pi or by any version of
pi_coder render the same way. The pieces are in ``pi_coder.export``.
"""

from __future__ import annotations

import os
from pathlib import Path

from pi_coder.resources.themes import Theme
from pi_coder.session.store import SessionStore

__all__ = ["default_export_path", "export_session_html", "export_store_html", "render_session_html"]


def default_export_path(
    session_file: str | os.PathLike[str], cwd: str | os.PathLike[str] | None = None
) -> Path:
    """``pi-session-<file name without .jsonl>.html`` in ``cwd`` (Pi's default)."""
    stem = Path(session_file).name.removesuffix(".jsonl")
    return Path(cwd if cwd is not None else os.getcwd()) / f"pi-session-{stem}.html"


def export_session_html(
    session_file: str | os.PathLike[str],
    output: str | os.PathLike[str] | None = None,
    *,
    cwd: str | os.PathLike[str] | None = None,
    theme: Theme | None = None,
) -> Path:
    """Write ``session_file`` as HTML.

    Args:
        session_file: A session JSONL file (any version; it is opened like ``--session`` would).
        output: The HTML file; default :func:`default_export_path`.
        cwd: Folder for the default output path; default the process's.
        theme: Colours of the page; default the ``theme`` setting (see :func:`export_store_html`).

    Returns:
        The path written.

    Raises:
        UserError: The file is not a session file (``InvalidSessionFileError``).
        OSError: The output cannot be written.
    """
    store = SessionStore.open(session_file)
    target = Path(output) if output is not None else default_export_path(session_file, cwd)
    return export_store_html(store, target, theme=theme)


def export_store_html(
    store: SessionStore, output: str | os.PathLike[str], *, theme: Theme | None = None
) -> Path:
    """Write every entry of ``store`` to ``output`` (parents created); returns the path.

    ``theme`` defaults to the ``theme`` setting of the session's folder (an unknown or invalid
    theme falls back to ``dark``).
    """
    path = Path(output).expanduser().absolute()
    html = render_session_html(store, theme=theme)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html, encoding="utf-8")
    return path


def render_session_html(store: SessionStore, *, theme: Theme | None = None) -> str:
    """The HTML page for ``store``: all entries, the current leaf's path shown."""
    from pi_coder.export.page import render_page

    return render_page(store, theme if theme is not None else _settings_theme(store.cwd))


def _settings_theme(cwd: str) -> Theme:
    from pi_coder.resources.themes import load_theme_or_default
    from pi_coder.settings import load_settings

    settings = load_settings(cwd, project_trusted=False).settings
    name = str(settings.theme or "dark")
    theme, _warning = load_theme_or_default(name, cwd, extra_paths=settings.themes)
    return theme
