"""Wrappers: commands that run another command given in their arguments (``sudo``, ``xargs``,
``env``, ``find -exec``, ``bash -c``, ``eval``) and how to find the command they run."""

from __future__ import annotations

from typing import Any

from pi_coder.permissions.bash_model import Analysis, SimpleCommand

__all__ = ["inner_command"]


_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "busybox"})
_PLAIN_WRAPPERS = frozenset({"nohup", "time", "builtin", "exec", "unbuffer", "caffeinate", "chronic", "doas"})
# Options taking a value, per wrapper (so the value is not mistaken for the command).
_VALUE_OPTS: dict[str, frozenset[str]] = {
    "sudo": frozenset(
        {
            "-u",
            "-g",
            "-C",
            "-D",
            "-h",
            "-p",
            "-r",
            "-t",
            "-U",
            "-T",
            "--user",
            "--group",
            "--chdir",
            "--prompt",
        }
    ),
    "doas": frozenset({"-u", "-C"}),
    "env": frozenset({"-u", "-C", "-S", "--unset", "--chdir", "--split-string"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "-p", "--class", "--classdata"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "stdbuf": frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}),
    "xargs": frozenset(
        {
            "-a",
            "-d",
            "-E",
            "-e",
            "-I",
            "-i",
            "-L",
            "-l",
            "-n",
            "-P",
            "-s",
            "--arg-file",
            "--delimiter",
            "--max-args",
            "--max-procs",
            "--max-lines",
            "--max-chars",
            "--replace",
            "--eof",
        }
    ),
    "watch": frozenset({"-n", "-d", "--interval"}),
    "chroot": frozenset({"--userspec", "--groups"}),
    "flock": frozenset({"-w", "-E", "--timeout", "--conflict-exit-code"}),
    "setsid": frozenset(),
    "strace": frozenset({"-e", "-o", "-p", "-s", "-u"}),
}


def _skip_options(argv: list[str | None], start: int, value_opts: frozenset[str]) -> int:
    i = start
    while i < len(argv):
        word = argv[i]
        if word is None:
            return i
        if word == "--":
            return i + 1
        if not word.startswith("-") or word == "-":
            return i
        if word in value_opts:
            i += 2
            continue
        i += 1
    return i


def inner_command(cmd: SimpleCommand, out: Analysis) -> tuple[str, Any] | None:
    """``("argv", words)`` or ``("script", text|None)`` for a wrapper, else None."""
    argv = cmd.argv
    name = cmd.name
    if name is None:
        return None
    if name in _SHELLS:
        i = 1
        while i < len(argv):
            word = argv[i]
            if word is None:
                out.fail("a shell's options are computed at run time")
                return None
            if word == "-c" or (word.startswith("-") and not word.startswith("--") and "c" in word[1:]):
                return ("script", argv[i + 1] if i + 1 < len(argv) else "")
            if word.startswith("-") and word != "-":
                i += 1
                continue
            _opaque(out, f"{name} runs a script file")  # pi cannot see into it
            return None
        # `bash` alone reads a script from stdin (a pipe or here-document): opaque
        _opaque(out, f"{name} reads its script from input")
        return None
    if name == "eval":
        words = argv[1:]
        if any(w is None for w in words):
            return ("script", None)
        return ("script", " ".join(w for w in words if w is not None))
    if name == "command":
        rest = argv[1:]
        if rest and rest[0] in ("-v", "-V"):
            return None
        start = _skip_options(argv, 1, frozenset())
        return ("argv", argv[start:]) if start < len(argv) else None
    if name in _PLAIN_WRAPPERS or name in _VALUE_OPTS:
        start = _skip_options(argv, 1, _VALUE_OPTS.get(name, frozenset()))
        if name == "env":
            while (
                start < len(argv)
                and argv[start] is not None
                and "=" in (argv[start] or "")
                and not (argv[start] or "").startswith("=")
            ):
                start += 1
        if name == "timeout" and start < len(argv):
            start += 1  # the duration
        if name == "chroot" and start < len(argv):
            start += 1  # the new root
        if name == "flock" and start < len(argv):
            start += 1  # the lock file
            if start < len(argv) and argv[start] in ("-c", "--command"):
                return ("script", argv[start + 1] if start + 1 < len(argv) else "")
        if start >= len(argv):
            if name == "xargs":
                return ("argv", ["echo"])
            return None
        return ("argv", argv[start:])
    if name == "find":
        for i, word in enumerate(argv):
            if word in ("-exec", "-execdir", "-ok", "-okdir"):
                end = i + 1
                while end < len(argv) and argv[end] not in (";", "+"):
                    end += 1
                inner = [w for w in argv[i + 1 : end] if w != "{}"] or []
                if inner:
                    return ("argv", inner)
        return None
    if name == "git":
        # `git -c alias.x='!sh ...'` and `git config alias...` run commands: opaque
        for i, word in enumerate(argv[1:], 1):
            if word == "-c" and i + 1 < len(argv) and (argv[i + 1] is None or "!" in (argv[i + 1] or "")):
                _opaque(out, "git -c with a shell alias")
                return None
        return None
    return None


def _opaque(out: Analysis, why: str) -> None:
    out.fail(why)
    return None
