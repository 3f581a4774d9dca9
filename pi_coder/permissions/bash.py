"""What a bash command runs: every simple command, found with tree-sitter's bash grammar.

``analyze(source)`` walks the syntax tree of a command line and returns the simple commands it
contains, wherever they are: both sides of ``&&``, ``||``, ``;`` and ``|``, inside ``$(...)``,
backticks, ``<(...)``, subshells, groups, loops, conditionals, function bodies and unquoted
here-documents. Words are evaluated the way the shell would for quoting (``r''m`` and ``\\rm``
and ``"rm"`` are all ``rm``); a word whose value depends on an expansion is *dynamic*.

Wrappers are looked through: ``sudo``, ``env X=1``, ``command``, ``exec``, ``nice``,
``timeout``, ``xargs``, ``find -exec``, ``bash -c "..."`` and ``eval`` add the command they run
(the wrapper stays in the list too, so a rule about ``sudo`` still sees it).

Anything the analysis cannot pin down (a syntax error, a dynamic command name, a ``bash -c``
with a computed script) sets ``Analysis.understood`` to False: callers must then ask, never
allow. tree-sitter is imported on the first call only.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Analysis", "SimpleCommand", "analyze", "is_read_only"]

_PARSER: Any = None
_MAX_DEPTH = 8
"""Nested ``bash -c`` levels looked into before giving up (``understood`` False)."""


@dataclass(slots=True)
class SimpleCommand:
    """One command with its arguments; ``None`` stands for a dynamic word."""

    argv: list[str | None]
    writes: list[str | None] = field(default_factory=list)
    """Files written by ``>``, ``>>``, ``&>`` redirections (None: a dynamic target)."""
    wrapped: bool = False
    """Found inside a wrapper (``sudo x``: ``x`` is wrapped)."""
    wrapper: bool = False
    """Runs another command given in its arguments (``sudo``, ``xargs``, ``bash -c``)."""

    @property
    def name(self) -> str | None:
        if not self.argv or self.argv[0] is None:
            return None
        word = self.argv[0]
        return os.path.basename(word) if "/" in word else word

    @property
    def text(self) -> str:
        """The command as rule patterns see it: words joined by spaces, dynamic words as ``$?``."""
        words = ["$?" if w is None else w for w in self.argv]
        if words and self.name is not None:
            words[0] = self.name
        return " ".join(words)

    @property
    def raw_text(self) -> str:
        return " ".join("$?" if w is None else w for w in self.argv)


@dataclass(slots=True)
class Analysis:
    commands: list[SimpleCommand] = field(default_factory=list)
    understood: bool = True
    problems: list[str] = field(default_factory=list)

    def fail(self, why: str) -> None:
        self.understood = False
        self.problems.append(why)


def _parser() -> Any:
    global _PARSER
    if _PARSER is None:
        import tree_sitter
        import tree_sitter_bash

        _PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
    return _PARSER


def analyze(source: str, *, _depth: int = 0) -> Analysis:
    """The simple commands of ``source`` (see the module docstring)."""
    out = Analysis()
    _analyze_into(source, out, _depth, wrapped=False)
    return out


def _analyze_into(source: str, out: Analysis, depth: int, *, wrapped: bool) -> None:
    if depth > _MAX_DEPTH:
        out.fail("nested too deeply")
        return
    if "\x00" in source:
        out.fail("NUL byte in the command")
        return
    try:
        tree = _parser().parse(source.encode("utf-8", "surrogatepass"))
    except Exception as exc:  # a grammar or encoding failure is "not understood", never allowed
        out.fail(f"parser failed: {exc}")
        return
    root = tree.root_node
    if root.has_error:
        out.fail("the shell parser does not understand this command")
    _Walker(out, depth, wrapped).visit(root)


_ESCAPABLE_IN_DQ = frozenset('$`"\\\n')


def _unescape_word(text: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _unescape_dq(text: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] in _ESCAPABLE_IN_DQ:
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


_ANSI_C = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
}


def _ansi_c(body: str) -> str | None:
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\" or i + 1 >= len(body):
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in _ANSI_C:
            out.append(_ANSI_C[nxt])
            i += 2
        elif nxt == "x":
            digits = ""
            j = i + 2
            while j < len(body) and len(digits) < 2 and body[j] in "0123456789abcdefABCDEF":
                digits += body[j]
                j += 1
            if not digits:
                return None
            out.append(chr(int(digits, 16)))
            i = j
        elif nxt in "01234567":
            digits = ""
            j = i + 1
            while j < len(body) and len(digits) < 3 and body[j] in "01234567":
                digits += body[j]
                j += 1
            out.append(chr(int(digits, 8)))
            i = j
        else:
            return None  # \u, \c...: not worth modelling; dynamic
    return "".join(out)


_STRUCTURE = frozenset({"(", ")", "{", "}", ";", ";;", "&", "&&", "||", "|", "|&", "\n", "comment"})
_WRITE_OPS = frozenset({">", ">>", "&>", "&>>", ">|", "<>"})


class _Walker:
    def __init__(self, out: Analysis, depth: int, wrapped: bool) -> None:
        self.out = out
        self.depth = depth
        self.wrapped = wrapped

    # ------------------------------------------------------------------ tree

    def visit(self, node: Any) -> None:
        kind = node.type
        if node.is_missing:
            self.out.fail(f"missing {kind}")
            return
        if kind == "ERROR":
            self.out.fail("syntax error")
        if kind == "command":
            self.command(node)
            return
        if kind == "redirected_statement":
            body = node.child_by_field_name("body")
            writes: list[str | None] = []
            for child in node.children:
                if body is not None and child.id == body.id:
                    continue
                writes.extend(self.redirect(child))
            before = len(self.out.commands)
            if body is not None:
                self.visit(body)
            # A redirection of a compound statement applies to what it runs.
            for cmd in self.out.commands[before:]:
                cmd.writes.extend(writes)
            if writes and len(self.out.commands) == before:
                self.out.commands.append(SimpleCommand(argv=[":"], writes=writes, wrapped=self.wrapped))
            return
        if kind in ("variable_assignment", "variable_assignments"):
            self.scan_words(node)
            return
        if kind == "declaration_command" or kind == "unset_command":
            argv: list[str | None] = [node.children[0].type] if node.children else []
            for child in node.children[1:]:
                if child.type in ("word", "string", "raw_string", "concatenation", "number"):
                    argv.append(self.word(child))
                else:
                    self.scan_words(child)
                    argv.append(None)
            self.out.commands.append(SimpleCommand(argv=argv, wrapped=self.wrapped))
            return
        if kind in ("test_command",):
            self.scan_words(node)
            self.out.commands.append(SimpleCommand(argv=["test"], wrapped=self.wrapped))
            return
        if kind in ("command_substitution", "process_substitution"):
            for child in node.children:
                self.visit(child)
            return
        if kind in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
            writes = self.redirect(node)
            if writes:
                self.out.commands.append(SimpleCommand(argv=[":"], writes=writes, wrapped=self.wrapped))
            return
        for child in node.children:
            self.visit(child)

    def scan_words(self, node: Any) -> None:
        """Visit the substitutions inside a word-like node (they run)."""
        for child in node.children:
            if child.type in ("command_substitution", "process_substitution"):
                self.visit(child)
            elif child.child_count:
                self.scan_words(child)
            elif child.is_missing or child.type == "ERROR":
                self.out.fail("syntax error")

    def redirect(self, node: Any) -> list[str | None]:
        """Files a redirection writes; substitutions in it are visited."""
        kind = node.type
        if kind == "heredoc_redirect":
            for child in node.children:
                if child.type == "heredoc_body":
                    self.scan_words(child)
                elif child.type not in ("<<", "<<-", "heredoc_start", "heredoc_end", "file_descriptor"):
                    # `cat <<EOF > out`: tree-sitter puts the trailing redirect inside
                    if child.type == "file_redirect":
                        return self.redirect(child)
                    if child.type in ("&&", "||", "|", ";"):
                        continue
                    self.visit(child)
            return []
        if kind == "herestring_redirect":
            self.scan_words(node)
            return []
        if kind != "file_redirect":
            self.visit(node)
            return []
        op = None
        targets: list[Any] = []
        for child in node.children:
            if child.type == "file_descriptor":
                continue
            if op is None and not child.is_named:
                op = child.type
                continue
            targets.append(child)
        for target in targets:
            self.scan_words(target) if target.child_count else None
        if op in _WRITE_OPS:
            value = self.word(targets[0]) if targets else None
            if value in ("/dev/null", "/dev/stdout", "/dev/stderr"):
                return []
            return [value]
        return []

    # ------------------------------------------------------------------ words

    def word(self, node: Any) -> str | None:
        """The value of a word node, or None when an expansion makes it dynamic."""
        kind = node.type
        text: str = node.text.decode("utf-8", "surrogateescape")
        if kind == "word":
            return _unescape_word(text)
        if kind == "number":
            return text
        if kind == "raw_string":
            return text[1:-1]
        if kind == "ansi_c_string":
            return _ansi_c(text[2:-1])
        if kind == "string":
            parts: list[str] = []
            dynamic = False
            for child in node.children:
                if child.type == '"':
                    continue
                if child.type == "string_content":
                    parts.append(_unescape_dq(child.text.decode("utf-8", "surrogateescape")))
                else:
                    self.scan_words(child) if child.type not in (
                        "command_substitution",
                        "process_substitution",
                    ) else self.visit(child)
                    dynamic = True
            return None if dynamic else "".join(parts)
        if kind == "concatenation":
            pieces: list[str] = []
            dynamic = False
            for child in node.children:
                value = self.word(child)
                if value is None:
                    dynamic = True
                else:
                    pieces.append(value)
            return None if dynamic else "".join(pieces)
        if kind in ("command_substitution", "process_substitution"):
            self.visit(node)
            return None
        if kind in ("simple_expansion", "expansion", "arithmetic_expansion", "brace_expression"):
            self.scan_words(node)
            return None
        self.scan_words(node)
        return None

    # ------------------------------------------------------------------ commands

    def command(self, node: Any) -> None:
        argv: list[str | None] = []
        writes: list[str | None] = []
        for child in node.children:
            kind = child.type
            if kind == "variable_assignment":
                self.scan_words(child)
            elif kind == "command_name":
                inner = child.children[0] if child.children else child
                argv.append(self.word(inner))
            elif kind in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
                writes.extend(self.redirect(child))
            elif kind in _STRUCTURE:
                continue
            else:
                argv.append(self.word(child))
        if not argv:
            if writes:
                self.out.commands.append(SimpleCommand(argv=[":"], writes=writes, wrapped=self.wrapped))
            return
        cmd = SimpleCommand(argv=argv, writes=writes, wrapped=self.wrapped)
        self.out.commands.append(cmd)
        if cmd.argv[0] is None:
            self.out.fail("the command name is computed at run time")
            return
        self.unwrap(cmd)

    def unwrap(self, cmd: SimpleCommand) -> None:
        inner = _inner_command(cmd, self.out)
        if inner is None:
            return
        cmd.wrapper = True
        kind, payload = inner
        if kind == "argv":
            argv = payload
            if not argv:
                return
            sub = SimpleCommand(argv=argv, wrapped=True)
            self.out.commands.append(sub)
            if argv[0] is None:
                self.out.fail("the command name is computed at run time")
                return
            self.unwrap(sub)
        else:  # a script
            if payload is None:
                self.out.fail("the script given to a shell is computed at run time")
                return
            _analyze_into(payload, self.out, self.depth + 1, wrapped=True)


# ---------------------------------------------------------------------------- wrappers

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


def _inner_command(cmd: SimpleCommand, out: Analysis) -> tuple[str, Any] | None:
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


# ---------------------------------------------------------------------------- read-only proof

_READ_ONLY = frozenset(
    {
        "ls",
        "cat",
        "head",
        "tail",
        "less",
        "more",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "ag",
        "wc",
        "echo",
        "printf",
        "pwd",
        "stat",
        "file",
        "which",
        "whereis",
        "type",
        "tree",
        "du",
        "df",
        "sort",
        "uniq",
        "cut",
        "tr",
        "jq",
        "diff",
        "cmp",
        "date",
        "printenv",
        "uname",
        "whoami",
        "id",
        "true",
        "false",
        "test",
        "[",
        ":",
        "basename",
        "dirname",
        "realpath",
        "readlink",
        "nl",
        "column",
        "fold",
        "comm",
        "join",
        "paste",
        "rev",
        "tac",
        "od",
        "xxd",
        "hexdump",
        "strings",
        "md5sum",
        "sha1sum",
        "sha256sum",
        "sha512sum",
        "cksum",
        "seq",
        "hostname",
        "uptime",
        "ps",
        "free",
        "lsof",
        "env",
        "locale",
        "groups",
        "fd",
        "fdfind",
        "sleep",
        "yes",
        "expr",
        "numfmt",
        "look",
        "zcat",
        "bat",
        "man",
        "help",
        "tldr",
    }
)
_GIT_READ_ONLY = frozenset(
    {
        "status",
        "log",
        "diff",
        "show",
        "blame",
        "ls-files",
        "ls-tree",
        "rev-parse",
        "describe",
        "shortlog",
        "grep",
        "cat-file",
        "reflog",
        "whatchanged",
        "name-rev",
        "merge-base",
        "count-objects",
        "version",
        "help",
    }
)
_FIND_WRITES = frozenset(
    {"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"}
)


_HARMLESS_WRAPPERS = frozenset({"xargs", "nice", "timeout", "time", "env", "command", "nohup", "stdbuf"})


def _command_read_only(cmd: SimpleCommand) -> bool:
    if cmd.writes:
        return False
    name = cmd.name
    if cmd.wrapper and name in _HARMLESS_WRAPPERS:
        return True  # what it runs is checked on its own
    if name is None:
        return False
    args = cmd.argv[1:]
    if name == "command":
        return bool(args) and args[0] in ("-v", "-V")
    if name == "git":
        sub = next((a for a in args if a is None or not a.startswith("-")), None)
        if sub == "branch" or sub == "tag" or sub == "remote" or sub == "stash":
            flags = [a for a in args[1:] if a is not None]
            return (
                sub != "stash"
                and (not flags or all(f in ("-a", "-r", "-v", "-vv", "--list", "-l", "--all") for f in flags))
                or (sub == "stash" and flags[:1] == ["list"])
            )
        if any(a is not None and a.startswith(("--output", "-o")) for a in args) and sub == "diff":
            return False
        return sub in _GIT_READ_ONLY and args[0] == sub
    if name == "find":
        return not any(a in _FIND_WRITES for a in args)
    if name == "sed":
        # -i edits in place; a script's w/W/e commands write files or run commands
        return not any(
            a is None or a.startswith(("-i", "--in-place")) or re.search(r"(^|[;}/\s])[wWe]\b", a)
            for a in args
        )
    if name in ("sort",):
        return not any(a is None or a.startswith("-o") or a.startswith("--output") for a in args)
    if name == "env":
        return len([a for a in args if a is not None and "=" not in a and not a.startswith("-")]) == 0
    if name == "tree":
        return "-o" not in args
    if name in ("fd", "fdfind"):
        return not any(a in ("-x", "-X", "--exec", "--exec-batch") for a in args)
    return name in _READ_ONLY


def is_read_only(analysis: Analysis) -> bool:
    """True only when every command is known to read and never write (plan mode's proof)."""
    if not analysis.understood or not analysis.commands:
        return False
    return all(_command_read_only(cmd) for cmd in analysis.commands)
