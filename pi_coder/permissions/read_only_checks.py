"""The option parser and the checks of programs whose operands can write or run (sed scripts,
find expressions, git subcommands...), for the read-only proof (``read_only``)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Spec", "Words", "at_most", "date_ok", "env_ok", "find_ok", "git_ok", "parse_options", "printf_ok",
           "ps_ok", "safe_assignment", "sed_ok", "spec", "test_ok", "xxd_ok"]  # fmt: skip

Words = list[str]


@dataclass(frozen=True, slots=True)
class Spec:
    flags: str = ""
    """Short options without a value (``-la`` is ``-l -a``)."""
    valued: str = ""
    """Short options taking a value (``-n 5``, ``-n5``)."""
    long: frozenset[str] = frozenset()
    """Long options without a value (``--name``; ``--name=x`` is accepted too)."""
    long_valued: frozenset[str] = frozenset()
    """Long options taking a value (``--name x`` or ``--name=x``)."""
    numeric: bool = False
    """``-5`` is an option (head, tail, grep context)."""
    free_words: bool = False
    """No option or operand of this program can write or run anything: dynamic words and globs
    are fine (whatever they expand to, the worst is an error)."""
    operands: Callable[[Words], bool] | None = None
    """Checks the operands (words that are not options)."""
    whole: Callable[[Words], bool] | None = None
    """Checks the whole argument list instead of the option parser (find, git, sed...)."""


def spec(
    flags: str = "",
    valued: str = "",
    long: str = "",
    long_valued: str = "",
    *,
    numeric: bool = False,
    free_words: bool = False,
    operands: Callable[[Words], bool] | None = None,
    whole: Callable[[Words], bool] | None = None,
) -> Spec:
    return Spec(
        flags,
        valued,
        frozenset(long.split()),
        frozenset(long_valued.split()),
        numeric,
        free_words,
        operands,
        whole,
    )


def at_most(count: int) -> Callable[[Words], bool]:
    return lambda operands: len(operands) <= count


def parse_options(spec: Spec, args: Words) -> Words | None:
    """The operands of ``args`` when every option is allowed, else None."""
    operands: Words = []
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word == "--":
            operands += args[i:]
            break
        if word.startswith("--"):
            name, eq, _ = word[2:].partition("=")
            if name in spec.long:
                continue
            if name in spec.long_valued:
                if not eq:
                    i += 1
                continue
            return None
        if word.startswith("-") and word != "-":
            if spec.numeric and word[1:].isdigit():
                continue
            j = 1
            while j < len(word):
                ch = word[j]
                if ch in spec.valued:
                    if j == len(word) - 1:
                        i += 1
                    break
                if ch not in spec.flags:
                    return None
                j += 1
            continue
        operands.append(word)
    return operands


# ---------------------------------------------------------------------------- special programs

_SED_SIMPLE = set("pdDnNPhHgGxlz=")


def _sed_script_ok(script: str) -> bool:
    """Only commands that print, delete or substitute (``s`` without ``e``/``w`` flags)."""
    i, n = 0, len(script)
    while i < n:
        ch = script[i]
        if ch in " \t\n;{}!":
            i += 1
            continue
        if ch.isdigit() or ch in "$,~+":
            i += 1
            continue
        if ch == "/" or ch == "\\":
            delim = "/" if ch == "/" else (script[i + 1] if i + 1 < n else "")
            i = _skip_body(script, i + (1 if ch == "/" else 2), delim)
            if i < 0:
                return False
            while i < n and script[i] in "IM":
                i += 1
            continue
        if ch in _SED_SIMPLE:
            i += 1
            continue
        if ch in "qQ":
            i += 1
            while i < n and script[i].isdigit():
                i += 1
            continue
        if ch == "#":
            while i < n and script[i] != "\n":
                i += 1
            continue
        if ch in "sy":
            if i + 1 >= n or script[i + 1] in "\\\n":
                return False
            delim = script[i + 1]
            i = _skip_body(script, i + 2, delim)
            if i < 0:
                return False
            i = _skip_body(script, i, delim)
            if i < 0:
                return False
            while i < n and script[i] not in " \t\n;}":
                if ch == "y" or script[i] not in "gpiI0123456789":
                    return False  # e (run), w (write), m... : not read-only
                i += 1
            continue
        return False  # e, w, W, r, R, a, i, c, b, t, v, F, ...: refuse what is not plainly harmless
    return True


def _skip_body(script: str, i: int, delim: str) -> int:
    """The index after the closing ``delim`` (escapes skipped), or -1."""
    while i < len(script):
        ch = script[i]
        if ch == "\\":
            i += 2
            continue
        if ch == delim:
            return i + 1
        if ch == "\n":
            return -1
        i += 1
    return -1


_SED = spec("nEruszl", "el", "quiet silent regexp-extended posix debug separate unbuffered null-data sandbox",
             "expression line-length")  # fmt: skip


def sed_ok(args: Words) -> bool:
    scripts: Words = []
    operands: Words = []
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word == "--":
            operands += args[i:]
            break
        if word in ("-e", "--expression"):
            if i >= len(args):
                return False
            scripts.append(args[i])
            i += 1
        elif word.startswith("--expression="):
            scripts.append(word.split("=", 1)[1])
        elif word.startswith("-e") and not word.startswith("--"):
            scripts.append(word[2:])
        elif word.startswith("-") and word != "-":
            if parse_options(_SED, [word]) is None:
                return False
        else:
            operands.append(word)
    if not scripts:
        if not operands:
            return False
        scripts.append(operands.pop(0))
    return all(_sed_script_ok(s) for s in scripts)


_FIND_TESTS_VALUED = frozenset(
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -type -xtype -size -mtime -mmin "
    "-atime -amin -ctime -cmin -newer -anewer -cnewer -perm -user -group -uid -gid -links -inum -samefile "
    "-maxdepth -mindepth -regextype -fstype -lname -ilname -used -newermt -newerat -newerct -newermm "
    "-printf".split()
)
_FIND_TESTS = frozenset(
    "-empty -nouser -nogroup -readable -writable -executable -depth -mount -xdev -follow -noleaf -print "
    "-print0 -ls -prune -quit -true -false -not -and -or -a -o ! ( ) , -daystart -ignore_readdir_race "
    "-noignore_readdir_race -nowarn -warn".split()
)


def find_ok(args: Words) -> bool:
    i = 0
    while i < len(args) and args[i] in ("-H", "-L", "-P"):
        i += 1
    while i < len(args):
        word = args[i]
        i += 1
        if word in _FIND_TESTS_VALUED:
            i += 1
        elif word not in _FIND_TESTS and (word.startswith("-") or word in "()!,"):
            return False  # -delete, -exec, -fprint, -ok ... and unknown ones
    return i <= len(args)


_GIT_SUBCOMMANDS = frozenset(
    "status log diff show blame ls-files ls-tree rev-parse describe shortlog grep cat-file whatchanged "
    "name-rev merge-base count-objects version rev-list show-ref reflog branch tag remote stash config "
    "help".split()
)
_GIT_DANGEROUS_LONG = ("output", "open-files-in-pager", "ext-diff", "exec", "paginate", "upload-pack",
                       "receive-pack", "config-env", "exec-path", "run", "edit", "file", "pre")  # fmt: skip


def _git_option_ok(word: str) -> bool:
    if word.startswith("--"):
        name = word[2:].split("=", 1)[0]
        # git accepts any unambiguous prefix of a long option: `--out` is `--output`
        return bool(name) and not any(d.startswith(name) for d in _GIT_DANGEROUS_LONG)
    return not word.startswith("-O")


def git_ok(args: Words) -> bool:
    i = 0
    while i < len(args) and args[i].startswith("-"):
        word = args[i]
        if word in ("--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs", "--no-replace-objects"):
            i += 1
        else:
            return False  # -c, -C (another repository's configuration), --git-dir, -p (pager)...
    if i >= len(args) or args[i] not in _GIT_SUBCOMMANDS:
        return False
    sub, rest = args[i], args[i + 1 :]
    options = [w for w in rest if w.startswith("-")]
    if not all(_git_option_ok(w) for w in options):
        return False
    plain = [w for w in rest if not w.startswith("-")]
    if sub == "help":
        return not options  # `git help -w` starts a browser
    if sub == "reflog":
        return not plain or plain[0] == "show"
    if sub == "stash":
        return bool(plain) and plain[0] in ("list", "show")
    if sub == "config":
        return (
            bool(options)
            and options[0] in ("--get", "--get-all", "--get-regexp", "--list", "-l")
            and all(
                w
                in (
                    "--get",
                    "--get-all",
                    "--get-regexp",
                    "--list",
                    "-l",
                    "--show-origin",
                    "--show-scope",
                    "-z",
                    "--null",
                    "--local",
                    "--global",
                    "--includes",
                    "--name-only",
                )  # fmt: skip
                for w in options
            )
        )
    if sub == "branch":
        listing = {
            "-a",
            "-r",
            "-v",
            "-vv",
            "--list",
            "-l",
            "--all",
            "--remotes",
            "--show-current",
            "--verbose",
        }
        valued = {"--contains", "--no-contains", "--merged", "--no-merged", "--points-at"}
        ok = all(w in listing or w.split("=", 1)[0] in valued or w.startswith("--sort=") for w in options)
        return ok and (
            not plain or bool({"--list", "-l"} & set(options)) or any(o in valued for o in options)
        )
    if sub == "tag":
        return all(
            w in ("-l", "--list", "-n") or w.startswith(("--sort=", "--contains", "--points-at"))
            for w in options
        ) and (not plain or bool({"-l", "--list"} & set(options)))
    if sub == "remote":
        return all(w in ("-v", "--verbose") for w in options) and (
            not plain or plain[0] == "get-url"  # `remote show` contacts the remote (ssh, helpers)
        )
    return True


def date_ok(operands: Words) -> bool:
    return all(w.startswith("+") for w in operands)  # `date 0101...` sets the clock


def printf_ok(args: Words) -> bool:
    return not args or not args[0].startswith("-") or args[0] == "--"  # `printf -v var` assigns


def test_ok(args: Words) -> bool:
    return not any(w in ("-v", "-R") for w in args)  # `test -v 'a[$(cmd)]'` evaluates the subscript


_XXD_FLAGS = frozenset("-a -autoskip -b -bits -C -capitalize -E -EBCDIC -e -h -help -i -include -p -ps -postscript "
                       "-plain -u -d -r -revert -v -version".split())  # fmt: skip
_XXD_VALUED = frozenset("-c -cols -g -groupsize -l -len -o -offset -s -seek -n -name".split())


def xxd_ok(args: Words) -> bool:
    operands: Words = []
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word in _XXD_VALUED:
            i += 1
        elif word.startswith("-") and word != "-":
            if word not in _XXD_FLAGS and not any(
                word.startswith(v) and word[len(v) :].isdigit() for v in _XXD_VALUED
            ):
                return False
        else:
            operands.append(word)
    return len(operands) <= 1  # `xxd in OUT` writes OUT


def ps_ok(args: Words) -> bool:
    # `ps e` / `-o environ` print other processes' environments (pi's API keys)
    return not any("env" in w or (not w.startswith("-") and "e" in w) for w in args)


def env_ok(args: Words) -> bool:
    """``env`` itself: no option but ``-i``/``-0``/``-u NAME``; its assignments are checked as such."""
    i = 0
    while i < len(args):
        word = args[i]
        if word in ("-i", "--ignore-environment", "-0", "--null", "-"):
            i += 1
        elif word in ("-u", "--unset"):
            i += 2
        elif word.startswith("-"):
            return False  # -S (split a string into a command line), -C, ...
        elif "=" in word:
            if not safe_assignment(word.split("=", 1)[0], word.split("=", 1)[1]):
                return False
            i += 1
        else:
            return True  # the command it runs is checked on its own
    return True


_SAFE_ASSIGNMENT = re.compile(r"LC_[A-Z]+|LANG|LANGUAGE|TZ|NO_COLOR|COLUMNS|LINES|GREP_COLOR|GREP_COLORS")


def safe_assignment(name: str, value: str | None) -> bool:
    return value is not None and _SAFE_ASSIGNMENT.fullmatch(name) is not None
