"""The read-only proof: when a bash command may run unasked in plan mode (and ask/deny).

A command is read-only only when every simple command it contains is

- a program on the allow-list below, run by its bare name from the system ``PATH`` (or from
  ``/bin``, ``/usr/bin``...), never a project file (``./tools/cat``) nor a ``PATH`` that points
  into the project or is relative;
- given only options on that program's own allow-list (an unknown option means "not read-only":
  a new option that writes cannot slip through), with its operands checked where an operand can
  write or run (``uniq in OUT``, ``date MMDDhhmm``, a ``sed`` script's ``e``/``w`` commands);
- free of dynamic words that could become an option or an operand (``$x``, ``$(...)``, a glob
  like ``-*``), except for programs none of whose options or operands can write or run;
- without redirections that write (``>``, ``>&``, ``&>``), and with no assignment but harmless
  locale ones (``LC_ALL=C``; never ``PATH``, ``GIT_*``, ``LESS*``, ``LD_*``);

and the line as a whole has no construct that evaluates code at expansion time (arithmetic,
``${!x}``, ``${x@P}``, subscripts, ``[[ ]]``, assignments, functions: ``Analysis.risky``).

The parser is one layer: commands allowed this way also run in a read-only sandbox when
bubblewrap is available (``pi_coder.core.sandbox``), so a gap here cannot write.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass

from pi_coder.core.permissions.bash_model import Analysis, SimpleCommand

__all__ = ["is_read_only"]

Words = list[str]


@dataclass(frozen=True, slots=True)
class _Spec:
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


def _spec(
    flags: str = "",
    valued: str = "",
    long: str = "",
    long_valued: str = "",
    *,
    numeric: bool = False,
    free_words: bool = False,
    operands: Callable[[Words], bool] | None = None,
    whole: Callable[[Words], bool] | None = None,
) -> _Spec:
    return _Spec(
        flags, valued, frozenset(long.split()), frozenset(long_valued.split()), numeric, free_words, operands, whole
    )


def _at_most(count: int) -> Callable[[Words], bool]:
    return lambda operands: len(operands) <= count


def _parse(spec: _Spec, args: Words) -> Words | None:
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


_SED = _spec("nEruszl", "el", "quiet silent regexp-extended posix debug separate unbuffered null-data sandbox",
             "expression line-length")  # fmt: skip


def _sed(args: Words) -> bool:
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
            if _parse(_SED, [word]) is None:
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


def _find(args: Words) -> bool:
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


def _git(args: Words) -> bool:
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
    if sub == "reflog":
        return not plain or plain[0] == "show"
    if sub == "stash":
        return bool(plain) and plain[0] in ("list", "show")
    if sub == "config":
        return bool(options) and options[0] in ("--get", "--get-all", "--get-regexp", "--list", "-l") and all(
            w in ("--get", "--get-all", "--get-regexp", "--list", "-l", "--show-origin", "--show-scope", "-z", "--null",
                  "--local", "--global", "--includes", "--name-only")  # fmt: skip
            for w in options
        )
    if sub == "branch":
        listing = {"-a", "-r", "-v", "-vv", "--list", "-l", "--all", "--remotes", "--show-current", "--verbose"}
        valued = {"--contains", "--no-contains", "--merged", "--no-merged", "--points-at"}
        ok = all(w in listing or w.split("=", 1)[0] in valued or w.startswith("--sort=") for w in options)
        return ok and (not plain or bool({"--list", "-l"} & set(options)) or any(o in valued for o in options))
    if sub == "tag":
        return all(w in ("-l", "--list", "-n") or w.startswith(("--sort=", "--contains", "--points-at")) for w in options) and (
            not plain or bool({"-l", "--list"} & set(options))
        )
    if sub == "remote":
        return all(w in ("-v", "--verbose") for w in options) and (not plain or plain[0] in ("show", "get-url"))
    return True


def _date(operands: Words) -> bool:
    return all(w.startswith("+") for w in operands)  # `date 0101...` sets the clock


def _printf(args: Words) -> bool:
    return not args or not args[0].startswith("-") or args[0] == "--"  # `printf -v var` assigns


def _test(args: Words) -> bool:
    return not any(w in ("-v", "-R") for w in args)  # `test -v 'a[$(cmd)]'` evaluates the subscript


_XXD_FLAGS = frozenset("-a -autoskip -b -bits -C -capitalize -E -EBCDIC -e -h -help -i -include -p -ps -postscript "
                       "-plain -u -d -r -revert -v -version".split())  # fmt: skip
_XXD_VALUED = frozenset("-c -cols -g -groupsize -l -len -o -offset -s -seek -n -name".split())


def _xxd(args: Words) -> bool:
    operands: Words = []
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word in _XXD_VALUED:
            i += 1
        elif word.startswith("-") and word != "-":
            if word not in _XXD_FLAGS and not any(word.startswith(v) and word[len(v) :].isdigit() for v in _XXD_VALUED):
                return False
        else:
            operands.append(word)
    return len(operands) <= 1  # `xxd in OUT` writes OUT


def _ps(args: Words) -> bool:
    # `ps e` / `-o environ` print other processes' environments (pi's API keys)
    return not any("env" in w or (not w.startswith("-") and "e" in w) for w in args)


def _env(args: Words) -> bool:
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
            if not _safe_assignment(word.split("=", 1)[0], word.split("=", 1)[1]):
                return False
            i += 1
        else:
            return True  # the command it runs is checked on its own
    return True


_READ_ONLY: dict[str, _Spec] = {
    "ls": _spec("aAbBcCdfFgGhHiklLmnNopqQrRsStuUvxXZ1", "IwT",
                "all almost-all author escape directory classify dereference dereference-command-line "
                "group-directories-first human-readable si inode literal numeric-uid-gid no-group "
                "hide-control-chars show-control-chars quote-name recursive reverse size context full-time "
                "color colour hyperlink indicator-style",
                "block-size format hide ignore quoting-style sort time time-style tabsize width",
                free_words=True),
    "cat": _spec("AbeEnstTuv", long="show-all number-nonblank show-ends number squeeze-blank show-tabs "
                 "show-nonprinting", free_words=True),
    "head": _spec("qvz", "cn", "quiet silent verbose zero-terminated", "bytes lines", numeric=True, free_words=True),
    "tail": _spec("fFqvzr", "cns", "follow quiet silent verbose zero-terminated retry",
                  "bytes lines pid sleep-interval max-unchanged-stats", numeric=True, free_words=True),
    "wc": _spec("clmwL", long="bytes chars lines words max-line-length", long_valued="total files0-from",
                free_words=True),
    "grep": _spec("EFGPiywxvcLlonhHbsqaIrRzZTUu", "eABCfmdD",
                  "extended-regexp fixed-strings basic-regexp perl-regexp ignore-case no-ignore-case word-regexp "
                  "line-regexp null-data no-messages invert-match count files-with-matches files-without-match "
                  "only-matching quiet silent byte-offset with-filename no-filename line-number line-buffered "
                  "initial-tab unix-byte-offsets null text recursive dereference-recursive color colour",
                  "regexp file max-count after-context before-context context binary-files devices directories "
                  "exclude exclude-from exclude-dir include label", numeric=True, free_words=True),
    "rg": _spec("iIsSwxvclLnNHhqauUF0", "eAmBCgtTfMjr",
                "ignore-case smart-case case-sensitive word-regexp line-regexp invert-match count count-matches "
                "files-with-matches files-without-match line-number no-line-number with-filename no-filename "
                "quiet hidden no-ignore no-ignore-vcs no-ignore-dot no-ignore-parent follow fixed-strings files "
                "json vimgrep no-heading heading column no-column only-matching stats type-list multiline "
                "multiline-dotall trim text null binary no-messages unrestricted crlf pcre2 sort-files",
                "regexp glob iglob type type-not max-count max-depth context after-context before-context "
                "max-columns max-filesize threads replace color colors encoding sort sortr context-separator "
                "field-match-separator path-separator type-add", numeric=True),
    "ag": _spec("iQslLcvwSftuUa", "GgABCm",
                "ignore-case literal files-with-matches files-without-matches count invert-match word-regexp "
                "hidden unrestricted nocolor nogroup noheading column case-sensitive smart-case",
                "ignore file-search-regex max-count context after before depth"),
    "echo": _spec(free_words=True, whole=lambda args: True),
    "printf": _spec(whole=_printf),
    "pwd": _spec("LP", operands=_at_most(0)),
    "stat": _spec("LftZ", "c", "dereference file-system terse", "format printf cached", free_words=True),
    "file": _spec("bhiLNkrsvzZ0El", "fFmeP",
                  "brief mime mime-type mime-encoding dereference no-dereference keep-going raw special-files "
                  "uncompress uncompress-noreport no-pad print0 extension apple no-sandbox",
                  "separator files-from magic-file exclude exclude-quiet parameter"),
    "which": _spec("as", free_words=True),
    "whereis": _spec("bmsul", free_words=True),
    "type": _spec("afptP", free_words=True),
    "tree": _spec("adlfxipugshDFqNQrtvUcCnASXJ", "LPIT",
                  "noreport dirsfirst du prune inodes device gitignore matchdirs ignore-case",
                  "sort filelimit timefmt charset"),
    "du": _spec("abcDhHklLmPsSx0", "dBtX",
                "all apparent-size bytes total dereference-args human-readable si summarize separate-dirs "
                "one-file-system count-links null inodes",
                "max-depth block-size threshold exclude time time-style exclude-from files0-from", free_words=True),
    "df": _spec("ahHiklPTx", "Bt", "all human-readable si inodes local portability print-type total sync no-sync",
                "block-size type exclude-type output", free_words=True),
    "sort": _spec("bdfgiMhnRrVcCmsuz", "ktS",
                  "ignore-leading-blanks dictionary-order ignore-case general-numeric-sort ignore-nonprinting "
                  "month-sort human-numeric-sort numeric-sort random-sort reverse version-sort merge stable "
                  "unique zero-terminated debug", "key field-separator buffer-size sort parallel check"),
    "uniq": _spec("cdDiuz", "fsw", "count repeated all-repeated ignore-case unique zero-terminated group",
                  "skip-fields skip-chars check-chars", operands=_at_most(1)),  # `uniq in OUT` writes OUT
    "cut": _spec("nsz", "bcdf", "only-delimited complement zero-terminated",
                 "bytes characters delimiter fields output-delimiter", free_words=True),
    "tr": _spec("cCdst", long="complement delete squeeze-repeats truncate-set1", free_words=True),
    "jq": _spec("nrjacsSCMe", long="raw-output join-output compact-output null-input slurp sort-keys "
                "color-output monochrome-output tab exit-status ascii-output raw-input seq stream",
                long_valued="indent"),
    "diff": _spec("qsyituwbBEZTNaRrpcenfdH", "CUWxXIFSD",
                  "brief report-identical-files side-by-side ignore-case ignore-all-space ignore-space-change "
                  "ignore-blank-lines ignore-tab-expansion ignore-trailing-space text recursive new-file "
                  "unidirectional-new-file unified context color strip-trailing-cr minimal speed-large-files "
                  "suppress-common-lines left-column expand-tabs initial-tab no-dereference show-c-function "
                  "normal rcs ed", "exclude exclude-from ignore-matching-lines label width to-file from-file "
                  "show-function-line starting-file tabsize", numeric=True, free_words=True),
    "cmp": _spec("blsv", "inI", "print-bytes verbose quiet silent", "ignore-initial bytes", free_words=True),
    "date": _spec("uRI", "dfr", "utc universal rfc-email debug iso-8601",
                  "date file reference rfc-3339 iso-8601", operands=_date),
    "printenv": _spec("0", long="null", free_words=True),
    "uname": _spec("asnrvmpio", long="all kernel-name nodename kernel-release kernel-version machine processor "
                   "hardware-platform operating-system", operands=_at_most(0)),
    "whoami": _spec(operands=_at_most(0)),
    "id": _spec("gGnruzZa", long="group groups name real user zero context", free_words=True),
    "groups": _spec(free_words=True),
    "true": _spec(free_words=True, whole=lambda args: True),
    "false": _spec(free_words=True, whole=lambda args: True),
    ":": _spec(free_words=True, whole=lambda args: True),
    "test": _spec(whole=_test),
    "[": _spec(whole=_test),
    "basename": _spec("asz", "s", "multiple zero", "suffix", free_words=True),
    "dirname": _spec("z", long="zero", free_words=True),
    "realpath": _spec("eEmLPqsz", long="canonicalize-existing canonicalize-missing logical physical quiet "
                      "strip no-symlinks zero", long_valued="relative-to relative-base", free_words=True),
    "readlink": _spec("femnqsvz", long="canonicalize canonicalize-existing canonicalize-missing no-newline "
                      "quiet silent verbose zero", free_words=True),
    "nl": _spec("pb", "bdfhilnsvw", free_words=True),
    "column": _spec("tnexrJ", "csoNRlHWETdS", free_words=True),
    "fold": _spec("bs", "w", "bytes spaces", "width", free_words=True),
    "comm": _spec("123iz", long="check-order nocheck-order total zero-terminated",
                  long_valued="output-delimiter", free_words=True),
    "join": _spec("iz", "aejotv12", "ignore-case check-order nocheck-order header zero-terminated", free_words=True),
    "paste": _spec("sz", "d", "serial zero-terminated", "delimiters", free_words=True),
    "rev": _spec(free_words=True),
    "tac": _spec("br", "s", "before regex", "separator", free_words=True),
    "od": _spec("bcdfilosxv", "AjNtSw", "output-duplicates traditional",
                "address-radix skip-bytes read-bytes format strings width endian", free_words=True),
    "xxd": _spec(whole=_xxd),
    "hexdump": _spec("bcCdovx", "enfsL", free_words=True),
    "strings": _spec("afdw", "ntTes", "all print-file-name data include-all-whitespace",
                     "bytes radix target encoding output-separator", numeric=True, free_words=True),
    "md5sum": _spec("bctwz", long="binary check tag text ignore-missing quiet status strict warn zero",
                    free_words=True),
    "cksum": _spec(free_words=True),
    "seq": _spec("w", "fs", "equal-width", "format separator", free_words=True),
    "hostname": _spec("sfdiIAa", long="short fqdn long domain ip-address all-ip-addresses all-fqdns alias",
                      operands=_at_most(0)),  # `hostname NAME` renames the machine
    "uptime": _spec("ps", long="pretty since", operands=_at_most(0)),
    "ps": _spec(whole=_ps),
    "free": _spec("bkmghltwv", "sc", "bytes kilo mega giga human lohi total wide si", "seconds count",
                  operands=_at_most(0)),
    "env": _spec(whole=_env),
    "locale": _spec("ack", long="all-locales charmaps keyword-name category-name verbose", free_words=True),
    "sleep": _spec(free_words=True),
    "expr": _spec(free_words=True, whole=lambda args: True),
    "numfmt": _spec("dz", long="debug grouping header zero-terminated",
                    long_valued="from from-unit to to-unit padding round suffix format invalid field delimiter",
                    free_words=True),
    "look": _spec("bdf", "t", free_words=True),
    "zcat": _spec("fqvlL", long="force quiet verbose list", free_words=True),
    "bat": _spec("pnA", "l", "plain number show-all", "language style color theme line-range"),
    "less": _spec("NnSRrFXiIMmsEegGJqQwK", long="LINE-NUMBERS line-numbers chop-long-lines RAW-CONTROL-CHARS "
                  "raw-control-chars quit-if-one-screen no-init ignore-case IGNORE-CASE LONG-PROMPT "
                  "squeeze-blank-lines QUIT-AT-EOF quit-at-eof"),
    "more": _spec("dlfpcsu", numeric=True),
    "man": _spec("kfa", operands=_at_most(3)),
    "help": _spec("dms", free_words=True),
    "fd": _spec("HIsigFapL0u1", "tedEcjS",
                "hidden no-ignore unrestricted case-sensitive ignore-case glob regex fixed-strings "
                "absolute-path follow full-path print0 prune show-errors",
                "type extension max-depth min-depth exact-depth exclude color threads size changed-within "
                "changed-before max-results owner base-directory search-path"),
    "find": _spec(whole=_find),
    "sed": _spec(whole=_sed),
    "git": _spec(whole=_git),
    "command": _spec("vV", whole=lambda args: bool(args) and args[0] in ("-v", "-V")),
    "nice": _spec("", "n", long_valued="adjustment"),
    "timeout": _spec("fpv", "sk", "foreground preserve-status verbose", "signal kill-after"),
    "time": _spec("p"),
}
for _name in ("egrep", "fgrep"):
    _READ_ONLY[_name] = _READ_ONLY["grep"]
for _name in ("sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum"):
    _READ_ONLY[_name] = _READ_ONLY["md5sum"]
_READ_ONLY["fdfind"] = _READ_ONLY["fd"]

_BUILTINS = frozenset({"echo", "printf", "pwd", "test", "[", "true", "false", ":", "type", "command", "help",
                       "time"})  # fmt: skip
_WRAPPERS = frozenset({"env", "nice", "timeout", "time", "command"})
"""Wrappers whose wrapped command is a separate entry of the analysis, checked on its own."""
_SYSTEM_DIRS = ("/bin/", "/usr/bin/", "/usr/local/bin/", "/sbin/", "/usr/sbin/")
_SAFE_ASSIGNMENT = re.compile(r"LC_[A-Z]+|LANG|LANGUAGE|TZ|NO_COLOR|COLUMNS|LINES|GREP_COLOR|GREP_COLORS")


def _safe_assignment(name: str, value: str | None) -> bool:
    return value is not None and _SAFE_ASSIGNMENT.fullmatch(name) is not None


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _system_program(word: str, cwd: str | None) -> bool:
    """The program a word names comes from the system, not the project (see the module doc)."""
    real_cwd = os.path.realpath(cwd) if cwd else None
    if "/" in word:
        real = os.path.realpath(word) if os.path.isabs(word) else ""
        return word.startswith(_SYSTEM_DIRS) and real.startswith(_SYSTEM_DIRS) and not (
            real_cwd and _inside(real, real_cwd)
        )
    if word in _BUILTINS:
        return True
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            return False  # "" and "." resolve in the working folder
        if real_cwd and _inside(os.path.realpath(entry), real_cwd):
            return False
    found = shutil.which(word)
    return found is None or not (real_cwd and _inside(os.path.realpath(found), real_cwd))


def _command_read_only(cmd: SimpleCommand, cwd: str | None) -> bool:
    if cmd.writes or not all(_safe_assignment(n, v) for n, v in cmd.assigns):
        return False
    name = cmd.argv[0] if cmd.argv else None
    if name is None or cmd.globs[:1] == [True]:
        return False
    base = os.path.basename(name)
    spec = _READ_ONLY.get(base)
    if spec is None or not _system_program(name, cwd):
        return False
    if cmd.parent is not None and os.path.basename(cmd.parent.argv[0] or "") not in _WRAPPERS:
        return False  # run by sudo, xargs, find -exec, ...
    raw = cmd.argv[1:]
    globs = cmd.globs[1:]
    if any(w is None for w in raw) or any(globs):
        if not spec.free_words:
            return False
        if base == "env" or (cmd.wrapper and base in _WRAPPERS):
            return False  # a computed word could be the wrapped command's name or an option
        return True
    args = [w for w in raw if w is not None]
    if cmd.wrapper and base in _WRAPPERS:
        return cmd.inner_start > 0 and _wrapper_options_ok(base, spec, args[: cmd.inner_start - 1])
    if spec.whole is not None:
        return spec.whole(args)
    operands = _parse(spec, args)
    if operands is None:
        return False
    return spec.operands is None or spec.operands(operands)


def _wrapper_options_ok(base: str, spec: _Spec, mine: Words) -> bool:
    """The wrapper's own words (before the command it runs) are allowed options."""
    if base == "env":
        return _env(mine)
    if base == "command":
        return not mine
    if base == "timeout":
        mine = mine[:-1] if mine and not mine[-1].startswith("-") else mine  # the duration
    return _parse(spec, mine) == []


def is_read_only(analysis: Analysis, cwd: str | None = None) -> bool:
    """True only when every command is proven to read and never write or run anything else."""
    if not analysis.understood or not analysis.commands or analysis.risky:
        return False
    return all(_command_read_only(cmd, cwd) for cmd in analysis.commands)
