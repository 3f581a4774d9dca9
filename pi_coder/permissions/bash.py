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
allow. Constructs that evaluate code while words expand (arithmetic, ``${!x}``, ``${x@P}``,
subscripts, ``[[ ]]``, assignments) are listed in ``Analysis.risky``; the read-only proof
(``read_only.is_read_only``) refuses them. tree-sitter is imported on the first call only.
"""

from __future__ import annotations

import re
from typing import Any

from pi_coder.permissions.bash_model import Analysis, SimpleCommand, ansi_c, unescape_dq, unescape_word
from pi_coder.permissions.bash_wrappers import inner_command
from pi_coder.permissions.read_only import is_read_only

__all__ = ["Analysis", "SimpleCommand", "analyze", "is_read_only"]

_PARSER: Any = None
_MAX_DEPTH = 8
"""Nested ``bash -c`` levels looked into before giving up (``understood`` False)."""


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
    _find_risky(root, out)
    _Walker(out, depth, wrapped).visit(root)


_RISKY = {
    "arithmetic_expansion": "arithmetic expansion",
    "subscript": "an array subscript (evaluated as arithmetic)",
    "c_style_for_statement": "an arithmetic for loop",
    "function_definition": "a function definition",
    "declaration_command": "a declaration (declare, export, local...)",
    "unset_command": "unset",
    "ternary_expression": "arithmetic",
}
_PLAIN_EXPANSION = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}")


def _find_risky(root: Any, out: Analysis) -> None:
    """Record what the read-only proof refuses (``Analysis.risky``), anywhere in the tree."""
    stack = [root]
    while stack:
        node = stack.pop()
        kind = node.type
        why = _RISKY.get(kind)
        if kind == "expansion" and not _PLAIN_EXPANSION.fullmatch(node.text.decode("utf-8", "replace")):
            why = "a parameter expansion with an operator (${!x}, ${x@P}, ${x[...]}...)"
        elif kind in ("test_command", "compound_statement") and node.children and node.children[0].type in ("[[", "(("):
            why = "[[ ]] or (( )), which evaluate arithmetic"
        elif kind == "variable_assignment" and (node.parent is None or node.parent.type != "command"):
            why = "a shell variable assignment"
        elif kind == "test_command" and _has_expansion_or_v(node):
            why = "a [ ] test with -v, -R or an expansion (`test -v` evaluates subscripts)"
        elif not node.children and b"environ" in node.text:
            why = "a process environment (/proc/*/environ holds pi's keys)"
        if why is not None and why not in out.risky:
            out.risky.append(why)
        stack.extend(node.children)


def _has_expansion_or_v(node: Any) -> bool:
    if node.type in ("simple_expansion", "expansion", "command_substitution", "arithmetic_expansion"):
        return True
    if node.type == "test_operator" and node.text in (b"-v", b"-R"):
        return True
    return any(_has_expansion_or_v(child) for child in node.children)


def _has_glob(node: Any) -> bool:
    """An unquoted glob or brace character in a word (it may expand to other words, options too)."""
    if node.type in ("string", "raw_string", "ansi_c_string", "command_substitution", "process_substitution"):
        return False
    if node.type == "word":
        return any(c in node.text.decode("utf-8", "replace") for c in "*?[{")
    return node.type == "brace_expression" or any(_has_glob(child) for child in node.children)


_STRUCTURE = frozenset({"(", ")", "{", "}", ";", ";;", "&", "&&", "||", "|", "|&", "\n", "comment"})
_WRITE_OPS = frozenset({">", ">>", "&>", "&>>", ">|", "<>", ">&"})


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
            if op == ">&" and value is not None and (value.isdigit() or value == "-"):
                return []  # `2>&1`, `>&-`: a descriptor, not a file
            return [value]
        return []

    # ------------------------------------------------------------------ words

    def word(self, node: Any) -> str | None:
        """The value of a word node, or None when an expansion makes it dynamic."""
        kind = node.type
        text: str = node.text.decode("utf-8", "surrogateescape")
        if kind == "word":
            return unescape_word(text)
        if kind == "number":
            return text
        if kind == "raw_string":
            return text[1:-1]
        if kind == "ansi_c_string":
            return ansi_c(text[2:-1])
        if kind == "string":
            parts: list[str] = []
            dynamic = False
            for child in node.children:
                if child.type == '"':
                    continue
                if child.type == "string_content":
                    parts.append(unescape_dq(child.text.decode("utf-8", "surrogateescape")))
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
        globs: list[bool] = []
        writes: list[str | None] = []
        assigns: list[tuple[str, str | None]] = []
        for child in node.children:
            kind = child.type
            if kind == "variable_assignment":
                name = child.child_by_field_name("name")
                value = child.child_by_field_name("value")
                assigns.append(
                    (
                        name.text.decode("utf-8", "replace") if name is not None else "",
                        self.word(value) if value is not None else "",
                    )
                )
            elif kind == "command_name":
                inner = child.children[0] if child.children else child
                argv.append(self.word(inner))
                globs.append(_has_glob(inner))
            elif kind in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
                writes.extend(self.redirect(child))
            elif kind in _STRUCTURE:
                continue
            else:
                argv.append(self.word(child))
                globs.append(_has_glob(child))
        if not argv:
            if writes or assigns:
                self.out.commands.append(
                    SimpleCommand(argv=[":"], writes=writes, wrapped=self.wrapped, assigns=assigns, globs=[False])
                )
            return
        cmd = SimpleCommand(argv=argv, writes=writes, wrapped=self.wrapped, assigns=assigns, globs=globs)
        self.out.commands.append(cmd)
        if cmd.argv[0] is None:
            self.out.fail("the command name is computed at run time")
            return
        self.unwrap(cmd)

    def unwrap(self, cmd: SimpleCommand) -> None:
        inner = inner_command(cmd, self.out)
        if inner is None:
            return
        cmd.wrapper = True
        kind, payload = inner
        if kind == "argv":
            argv = payload
            if not argv:
                return
            start = len(cmd.argv) - len(argv)
            suffix = start >= 0 and cmd.argv[start:] == argv
            globs = cmd.globs[start:] if suffix else [True] * len(argv)  # a cut-out part: assume the worst
            cmd.inner_start = start if suffix else 0
            sub = SimpleCommand(argv=argv, wrapped=True, globs=globs, parent=cmd)
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
