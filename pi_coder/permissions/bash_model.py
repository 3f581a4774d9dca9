"""The data of a bash command analysis and the quoting rules words are evaluated with."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

__all__ = ["Analysis", "SimpleCommand", "ansi_c", "unescape_dq", "unescape_word"]


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
    assigns: list[tuple[str, str | None]] = field(default_factory=list)
    """``NAME=value`` words before the command (value None: dynamic)."""
    globs: list[bool] = field(default_factory=list)
    """Per word of ``argv``: it has unquoted glob or brace characters (it may expand to other words)."""
    inner_start: int = 0
    """For a wrapper: the index in ``argv`` where the command it runs starts (0: none or unknown)."""
    parent: SimpleCommand | None = None
    """The wrapper this command was found in (``sudo``, ``env``, ``find -exec``...)."""

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
    risky: list[str] = field(default_factory=list)
    """Constructs that can run code or change a word at run time in ways rules need not care
    about but the read-only proof must (arithmetic, indirect and prompt expansion, ``[[``,
    assignments, function definitions): any makes the command not read-only."""

    def fail(self, why: str) -> None:
        self.understood = False
        self.problems.append(why)


_ESCAPABLE_IN_DQ = frozenset('$`"\\\n')


def unescape_word(text: str) -> str:
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


def unescape_dq(text: str) -> str:
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


def ansi_c(body: str) -> str | None:
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
