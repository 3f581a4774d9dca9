"""Files outside the working folder that a bash command is likely to change (for checkpoints).

A best-effort reading of the command with the permission layer's shell parser
(:func:`pi_coder.permissions.bash.analyze`): the targets of ``>``/``>>``/``&>``
redirections, and the path arguments of the common writers ``cp``, ``mv``, ``install``, ``ln``,
``rsync``, ``tee``, ``sed -i``, ``perl -i``, ``touch``, ``truncate``, ``rm``, ``unlink``,
``shred`` and ``dd of=``, wherever they appear in the command (pipes, ``&&``, ``$(...)``,
``sudo``...). Only words that are literal paths count, and only those that resolve outside the
folder. A program that writes files on its own (a build, a script, ``python -c``, a path held
in a variable) is not seen: those files are not part of the snapshot.

A folder among the targets (``rm -r ../old``, ``cp x ../dir/``) stands for the files under it,
up to :data:`MAX_FILES_PER_FOLDER`; a glob (``rm ../logs/*.txt``) stands for what it matches now.
"""

from __future__ import annotations

import glob
import os

__all__ = ["MAX_FILES_PER_FOLDER", "outside_targets"]

MAX_FILES_PER_FOLDER = 500

_PATH_ARGS = frozenset({"touch", "truncate", "rm", "unlink", "shred", "tee"})
_COPIERS = frozenset({"cp", "mv", "install", "ln", "rsync"})
_IN_PLACE = frozenset({"sed", "perl"})


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _operands(argv: list[str | None]) -> list[str]:
    """The literal non-option words after the command name."""
    out: list[str] = []
    options_done = False
    for word in argv[1:]:
        if word is None:
            continue
        if not options_done and word == "--":
            options_done = True
            continue
        if not options_done and word.startswith("-") and word != "-":
            continue
        out.append(word)
    return out


def _candidates(argv: list[str | None], name: str, cwd: str) -> list[str]:
    words = [w for w in argv if w is not None]
    if name in _PATH_ARGS:
        return _operands(argv)
    if name in _COPIERS:
        operands = _operands(argv)
        if len(operands) < 2:
            return operands
        *sources, dest = operands
        into = dest.endswith("/") or os.path.isdir(os.path.join(cwd, os.path.expanduser(dest)))
        found = [os.path.join(dest, os.path.basename(s.rstrip("/"))) for s in sources] if into else [dest]
        return found + (sources if name == "mv" else [])
    if name in _IN_PLACE and any(w == "-i" or w.startswith(("-i", "--in-place")) for w in words[1:]):
        return _operands(argv)
    if name == "dd":
        return [w[3:] for w in words[1:] if w.startswith("of=")]
    return []


def _looks_like_path(word: str) -> bool:
    return word.startswith(("/", "~", "..")) or "/../" in word


def _expand(path: str) -> list[str]:
    if os.path.isdir(path) and not os.path.islink(path):
        out: list[str] = []
        for folder, _dirs, files in os.walk(path):
            for name in files:
                out.append(os.path.join(folder, name))
                if len(out) >= MAX_FILES_PER_FOLDER:
                    return out
        return out
    return [path]


def outside_targets(command: str, cwd: str) -> list[str]:
    """Real paths of files outside ``cwd`` that ``command`` names as things it writes or removes.

    Blocking (parses, stats and may walk folders): call it in a thread.
    """
    from pi_coder.permissions.bash import analyze

    try:
        analysis = analyze(command)
    except Exception:  # tree-sitter missing or failing: nothing found, the snapshot goes on
        return []
    root = os.path.realpath(cwd)
    seen: dict[str, None] = {}
    for cmd in analysis.commands:
        words = [w for w in cmd.writes if w is not None]
        name = cmd.name
        if name is not None:
            words += [w for w in _candidates(cmd.argv, name, cwd) if _looks_like_path(w)]
        for word in words:
            if word == "/dev/null" or word.startswith("/dev/") or word.startswith("/proc/"):
                continue
            joined = os.path.join(cwd, os.path.expanduser(word))
            matches = sorted(glob.glob(joined))[:MAX_FILES_PER_FOLDER] if glob.has_magic(joined) else [joined]
            for match in matches:
                full = os.path.realpath(match)
                if _inside(full, root):
                    continue
                for path in _expand(full):
                    seen.setdefault(path)
    return list(seen)
