"""What keeps the TUI's start-up quick (no timings here; ``bench/tui_dialogs.py`` times it).

A resumed ``read`` block's language used to be guessed by Rich, which imports every Pygments
lexer module on its first guess; ``tool_render`` now reads Pygments' table of file patterns and
must pick the same lexer, and keeps one lexer per language (Rich looked it up by name on every
render) that must draw the same.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from pygments.lexers import get_all_lexers
from rich.console import Console
from rich.syntax import Syntax

from pi_coder.tui.tool_render import _lexer_name, _syntax

NAMES = [
    "a.py", "x.txt", "Makefile", "Makefile.am", "a.ts", "a.d.ts", "a.rs", "a.h", "a.m", "a.pl", "a.md",
    "a.json", "a.jsonl", "a.yaml", "a.toml", "pyproject.toml", "Dockerfile", "a.sh", ".bashrc", "a.js",
    "a.html", "a.css", "a.go", "a.c", "a.cpp", "a.sql", "CMakeLists.txt", "a.tsx", "a.vue", "man.1",
    "a.php3", "a.b.c.rb", ".py", "noext", "foo.unknownext", "test.PY", "x.tar.gz",
]  # fmt: skip


def _pattern_names() -> list[str]:
    """A file name for every pattern in Pygments' table (``*.ext`` -> ``zz.ext``, ``[345]`` -> ``4``)."""
    names = []
    for _name, _aliases, patterns, _mimetypes in get_all_lexers(plugins=False):
        for pattern in patterns:
            name = pattern.replace("*", "zz").replace("?", "q")
            while "[" in name and "]" in name:
                start = name.index("[")
                name = name[:start] + name[start + 1] + name[name.index("]", start) + 1 :]
            names.append(name)
    return names


@pytest.mark.parametrize("code", ["int x;", "def f():\n    return 1\n", "#include <stdio.h>\n@interface A\n@end\n"])
def test_read_block_lexer_is_richs_guess(code: str) -> None:
    for name in [*NAMES, *_pattern_names()]:
        assert _lexer_name(name, code) == Syntax.guess_lexer(name, code=code), name


def test_read_block_lexer_imports_one_lexer_module() -> None:
    script = (
        "import sys\n"
        "from pi_coder.tui.tool_render import _lexer_name\n"
        "assert _lexer_name('file_1.py', 'x = 1') == 'python'\n"
        "assert _lexer_name('main.rs', 'fn main() {}') == 'rust'\n"
        "print(sorted(m for m in sys.modules if m.startswith('pygments.lexers.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['pygments.lexers._mapping']"


@pytest.mark.parametrize(
    ("path", "code"),
    [("a.py", "def f(x):\n\treturn x  # hi"), ("notes.unknownext", "a\tb"), ("main.rs", "fn main() {}"), ("", "plain")],
)
def test_read_block_draws_as_richs_syntax_by_name(path: str, code: str) -> None:
    console = Console(width=40, color_system="truecolor", force_terminal=True)
    name = Syntax.guess_lexer(path, code=code) if path else "text"
    expected = console.render_lines(Syntax(code, name, theme="ansi_dark", word_wrap=True), console.options)
    for _ in range(2):  # the kept lexer draws the same again
        assert console.render_lines(_syntax(code.split("\n"), path), console.options) == expected
