"""protected-paths (docs/extensions-runtime.md#first-party-extensions): ``write`` and ``edit`` never touch secrets or tool folders.

``-e builtin:protected-paths``. Globs from ``[protected_paths] globs``, else ``.env``, ``.env.*``,
``.git/**``, ``.venv/**``, ``node_modules/**``; matched against the real target, relative to the
working directory, and against its file name. The target is the argument's real path
(``tools._paths.real_path``: ``@``, ``~``, ``..``, ``//``, ``/proc/self/root``, symlinks), and the
path as spelled is checked too, so no spelling slips past.
"""

from __future__ import annotations

import fnmatch
import os
from typing import TYPE_CHECKING, Any

from pi_coder.tools import lexical_path, real_path

if TYPE_CHECKING:
    from pi_coder.extensions import ExtensionAPI

DEFAULT_GLOBS = (".env", ".env.*", ".git/**", ".venv/**", "node_modules/**")


def _matches(relative: str, globs: list[str]) -> bool:
    parts = relative.split("/")
    for glob in globs:
        if glob.endswith("/**"):
            folder = glob[:-3]
            if folder in parts[:-1] or relative.startswith(folder + "/"):
                return True
        elif fnmatch.fnmatchcase(relative, glob) or fnmatch.fnmatchcase(parts[-1], glob):
            return True
    return False


def extension(pi: ExtensionAPI) -> None:
    @pi.on("tool_call")
    def protect(event: Any, ctx: Any) -> Any:
        if event.tool_name not in ("write", "edit"):
            return None
        path = str(event.input.get("path") or event.input.get("file_path") or "")
        if not path:
            return None
        table = pi.get_settings().get("protected_paths") or {}
        globs = list(table.get("globs") or DEFAULT_GLOBS)
        spellings = ((str(real_path(path, ctx.cwd)), os.path.realpath(ctx.cwd)), (lexical_path(path, ctx.cwd), ctx.cwd))
        if not any(_matches(os.path.relpath(p, base).replace(os.sep, "/"), globs) for p, base in spellings):
            return None
        ctx.ui.notify(f"Blocked {event.tool_name} of protected path {path}", "warning")
        return {"block": True, "reason": f"Path {path} is protected"}
