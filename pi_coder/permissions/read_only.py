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
bubblewrap is available (``pi_coder.permissions.sandbox``), so a gap here cannot write.
"""

from __future__ import annotations

import os
import shutil

from pi_coder.permissions.bash_model import Analysis, SimpleCommand
from pi_coder.permissions.read_only_checks import (
    Spec,
    Words,
    at_most,
    date_ok,
    env_ok,
    find_ok,
    git_ok,
    parse_options,
    printf_ok,
    ps_ok,
    safe_assignment,
    sed_ok,
    spec,
    test_ok,
    xxd_ok,
)

__all__ = ["PROGRAMS", "is_read_only"]

PROGRAMS: dict[str, Spec] = {
    "ls": spec(
        "aAbBcCdfFgGhHiklLmnNopqQrRsStuUvxXZ1",
        "IwT",
        "all almost-all author escape directory classify dereference dereference-command-line "
        "group-directories-first human-readable si inode literal numeric-uid-gid no-group "
        "hide-control-chars show-control-chars quote-name recursive reverse size context full-time "
        "color colour hyperlink indicator-style",
        "block-size format hide ignore quoting-style sort time time-style tabsize width",
        free_words=True,
    ),
    "cat": spec(
        "AbeEnstTuv",
        long="show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting",
        free_words=True,
    ),
    "head": spec(
        "qvz", "cn", "quiet silent verbose zero-terminated", "bytes lines", numeric=True, free_words=True
    ),
    "tail": spec(
        "fFqvzr",
        "cns",
        "follow quiet silent verbose zero-terminated retry",
        "bytes lines pid sleep-interval max-unchanged-stats",
        numeric=True,
        free_words=True,
    ),
    "wc": spec(
        "clmwL",
        long="bytes chars lines words max-line-length",
        long_valued="total files0-from",
        free_words=True,
    ),
    "grep": spec(
        "EFGPiywxvcLlonhHbsqaIrRzZTUu",
        "eABCfmdD",
        "extended-regexp fixed-strings basic-regexp perl-regexp ignore-case no-ignore-case word-regexp "
        "line-regexp null-data no-messages invert-match count files-with-matches files-without-match "
        "only-matching quiet silent byte-offset with-filename no-filename line-number line-buffered "
        "initial-tab unix-byte-offsets null text recursive dereference-recursive color colour",
        "regexp file max-count after-context before-context context binary-files devices directories "
        "exclude exclude-from exclude-dir include label",
        numeric=True,
        free_words=True,
    ),
    "rg": spec(
        "iIsSwxvclLnNHhqauUF0",
        "eAmBCgtTfMjr",
        "ignore-case smart-case case-sensitive word-regexp line-regexp invert-match count count-matches "
        "files-with-matches files-without-match line-number no-line-number with-filename no-filename "
        "quiet hidden no-ignore no-ignore-vcs no-ignore-dot no-ignore-parent follow fixed-strings files "
        "json vimgrep no-heading heading column no-column only-matching stats type-list multiline "
        "multiline-dotall trim text null binary no-messages unrestricted crlf pcre2 sort-files",
        "regexp glob iglob type type-not max-count max-depth context after-context before-context "
        "max-columns max-filesize threads replace color colors encoding sort sortr context-separator "
        "field-match-separator path-separator type-add",
        numeric=True,
    ),
    "ag": spec(
        "iQslLcvwSftuUa",
        "GgABCm",
        "ignore-case literal files-with-matches files-without-matches count invert-match word-regexp "
        "hidden unrestricted nocolor nogroup noheading column case-sensitive smart-case",
        "ignore file-search-regex max-count context after before depth",
    ),
    "echo": spec(free_words=True, whole=lambda args: True),
    "printf": spec(whole=printf_ok),
    "pwd": spec("LP", operands=at_most(0)),
    "stat": spec("LftZ", "c", "dereference file-system terse", "format printf cached", free_words=True),
    "file": spec(
        "bhiLNkrsvzZ0El",
        "fFmeP",
        "brief mime mime-type mime-encoding dereference no-dereference keep-going raw special-files "
        "uncompress uncompress-noreport no-pad print0 extension apple no-sandbox",
        "separator files-from magic-file exclude exclude-quiet parameter",
    ),
    "which": spec("as", free_words=True),
    "whereis": spec("bmsul", free_words=True),
    "type": spec("afptP", free_words=True),
    "tree": spec(
        "adlfxipugshDFqNQrtvUcCnASXJ",
        "LPIT",
        "noreport dirsfirst du prune inodes device gitignore matchdirs ignore-case",
        "sort filelimit timefmt charset",
    ),
    "du": spec(
        "abcDhHklLmPsSx0",
        "dBtX",
        "all apparent-size bytes total dereference-args human-readable si summarize separate-dirs "
        "one-file-system count-links null inodes",
        "max-depth block-size threshold exclude time time-style exclude-from files0-from",
        free_words=True,
    ),
    "df": spec(
        "ahHiklPTx",
        "Bt",
        "all human-readable si inodes local portability print-type total sync no-sync",
        "block-size type exclude-type output",
        free_words=True,
    ),
    "sort": spec(
        "bdfgiMhnRrVcCmsuz",
        "ktS",
        "ignore-leading-blanks dictionary-order ignore-case general-numeric-sort ignore-nonprinting "
        "month-sort human-numeric-sort numeric-sort random-sort reverse version-sort merge stable "
        "unique zero-terminated debug",
        "key field-separator buffer-size sort parallel check",
    ),
    "uniq": spec(
        "cdDiuz",
        "fsw",
        "count repeated all-repeated ignore-case unique zero-terminated group",
        "skip-fields skip-chars check-chars",
        operands=at_most(1),
    ),  # `uniq in OUT` writes OUT
    "cut": spec(
        "nsz",
        "bcdf",
        "only-delimited complement zero-terminated",
        "bytes characters delimiter fields output-delimiter",
        free_words=True,
    ),
    "tr": spec("cCdst", long="complement delete squeeze-repeats truncate-set1", free_words=True),
    "jq": spec(
        "nrjacsSCMe",
        long="raw-output join-output compact-output null-input slurp sort-keys "
        "color-output monochrome-output tab exit-status ascii-output raw-input seq stream",
        long_valued="indent",
    ),
    "diff": spec(
        "qsyituwbBEZTNaRrpcenfdH",
        "CUWxXIFSD",
        "brief report-identical-files side-by-side ignore-case ignore-all-space ignore-space-change "
        "ignore-blank-lines ignore-tab-expansion ignore-trailing-space text recursive new-file "
        "unidirectional-new-file unified context color strip-trailing-cr minimal speed-large-files "
        "suppress-common-lines left-column expand-tabs initial-tab no-dereference show-c-function "
        "normal rcs ed",
        "exclude exclude-from ignore-matching-lines label width to-file from-file "
        "show-function-line starting-file tabsize",
        numeric=True,
        free_words=True,
    ),
    "cmp": spec("blsv", "inI", "print-bytes verbose quiet silent", "ignore-initial bytes", free_words=True),
    "date": spec(
        "uRI",
        "dfr",
        "utc universal rfc-email debug iso-8601",
        "date file reference rfc-3339 iso-8601",
        operands=date_ok,
    ),
    "printenv": spec("0", long="null", free_words=True),
    "uname": spec(
        "asnrvmpio",
        long="all kernel-name nodename kernel-release kernel-version machine processor "
        "hardware-platform operating-system",
        operands=at_most(0),
    ),
    "whoami": spec(operands=at_most(0)),
    "id": spec("gGnruzZa", long="group groups name real user zero context", free_words=True),
    "groups": spec(free_words=True),
    "true": spec(free_words=True, whole=lambda args: True),
    "false": spec(free_words=True, whole=lambda args: True),
    ":": spec(free_words=True, whole=lambda args: True),
    "test": spec(whole=test_ok),
    "[": spec(whole=test_ok),
    "basename": spec("asz", "s", "multiple zero", "suffix", free_words=True),
    "dirname": spec("z", long="zero", free_words=True),
    "realpath": spec(
        "eEmLPqsz",
        long="canonicalize-existing canonicalize-missing logical physical quiet strip no-symlinks zero",
        long_valued="relative-to relative-base",
        free_words=True,
    ),
    "readlink": spec(
        "femnqsvz",
        long="canonicalize canonicalize-existing canonicalize-missing no-newline quiet silent verbose zero",
        free_words=True,
    ),
    "nl": spec("pb", "bdfhilnsvw", free_words=True),
    "column": spec("tnexrJ", "csoNRlHWETdS", free_words=True),
    "fold": spec("bs", "w", "bytes spaces", "width", free_words=True),
    "comm": spec(
        "123iz",
        long="check-order nocheck-order total zero-terminated",
        long_valued="output-delimiter",
        free_words=True,
    ),
    "join": spec(
        "iz", "aejotv12", "ignore-case check-order nocheck-order header zero-terminated", free_words=True
    ),
    "paste": spec("sz", "d", "serial zero-terminated", "delimiters", free_words=True),
    "rev": spec(free_words=True),
    "tac": spec("br", "s", "before regex", "separator", free_words=True),
    "od": spec(
        "bcdfilosxv",
        "AjNtSw",
        "output-duplicates traditional",
        "address-radix skip-bytes read-bytes format strings width endian",
        free_words=True,
    ),
    "xxd": spec(whole=xxd_ok),
    "hexdump": spec("bcCdovx", "enfsL", free_words=True),
    "strings": spec(
        "afdw",
        "ntTes",
        "all print-file-name data include-all-whitespace",
        "bytes radix target encoding output-separator",
        numeric=True,
        free_words=True,
    ),
    "md5sum": spec(
        "bctwz", long="binary check tag text ignore-missing quiet status strict warn zero", free_words=True
    ),
    "cksum": spec(free_words=True),
    "seq": spec("w", "fs", "equal-width", "format separator", free_words=True),
    "hostname": spec(
        "sfdiIAa",
        long="short fqdn long domain ip-address all-ip-addresses all-fqdns alias",
        operands=at_most(0),
    ),  # `hostname NAME` renames the machine
    "uptime": spec("ps", long="pretty since", operands=at_most(0)),
    "ps": spec(whole=ps_ok),
    "free": spec(
        "bkmghltwv",
        "sc",
        "bytes kilo mega giga human lohi total wide si",
        "seconds count",
        operands=at_most(0),
    ),
    "env": spec(whole=env_ok),
    "locale": spec("ack", long="all-locales charmaps keyword-name category-name verbose", free_words=True),
    "sleep": spec(free_words=True),
    "expr": spec(free_words=True, whole=lambda args: True),
    "numfmt": spec(
        "dz",
        long="debug grouping header zero-terminated",
        long_valued="from from-unit to to-unit padding round suffix format invalid field delimiter",
        free_words=True,
    ),
    "look": spec("bdf", "t", free_words=True),
    "zcat": spec("fqvlL", long="force quiet verbose list", free_words=True),
    "bat": spec("pnA", "l", "plain number show-all", "language style color theme line-range"),
    "less": spec(
        "NnSRrFXiIMmsEegGJqQwK",
        long="LINE-NUMBERS line-numbers chop-long-lines RAW-CONTROL-CHARS "
        "raw-control-chars quit-if-one-screen no-init ignore-case IGNORE-CASE LONG-PROMPT "
        "squeeze-blank-lines QUIT-AT-EOF quit-at-eof",
    ),
    "more": spec("dlfpcsu", numeric=True),
    "man": spec("kfa", operands=at_most(3)),
    "help": spec("dms", free_words=True),
    "fd": spec(
        "HIsigFapL0u1",
        "tedEcjS",
        "hidden no-ignore unrestricted case-sensitive ignore-case glob regex fixed-strings "
        "absolute-path follow full-path print0 prune show-errors",
        "type extension max-depth min-depth exact-depth exclude color threads size changed-within "
        "changed-before max-results owner base-directory search-path",
    ),
    "find": spec(whole=find_ok),
    "sed": spec(whole=sed_ok),
    "git": spec(whole=git_ok),
    "command": spec("vV", whole=lambda args: bool(args) and args[0] in ("-v", "-V")),
    "nice": spec("", "n", long_valued="adjustment"),
    "timeout": spec("fpv", "sk", "foreground preserve-status verbose", "signal kill-after"),
    "time": spec("p"),
}
for _name in ("egrep", "fgrep"):
    PROGRAMS[_name] = PROGRAMS["grep"]
for _name in ("sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum"):
    PROGRAMS[_name] = PROGRAMS["md5sum"]
PROGRAMS["fdfind"] = PROGRAMS["fd"]

_BUILTINS = frozenset({"echo", "printf", "pwd", "test", "[", "true", "false", ":", "type", "command", "help",
                       "time"})  # fmt: skip
_WRAPPERS = frozenset({"env", "nice", "timeout", "time", "command"})
"""Wrappers whose wrapped command is a separate entry of the analysis, checked on its own."""
_SYSTEM_DIRS = ("/bin/", "/usr/bin/", "/usr/local/bin/", "/sbin/", "/usr/sbin/")


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _system_program(word: str, cwd: str | None) -> bool:
    """The program a word names comes from the system, not the project (see the module doc)."""
    real_cwd = os.path.realpath(cwd) if cwd else None
    if "/" in word:
        real = os.path.realpath(word) if os.path.isabs(word) else ""
        return (
            word.startswith(_SYSTEM_DIRS)
            and real.startswith(_SYSTEM_DIRS)
            and not (real_cwd and _inside(real, real_cwd))
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
    if cmd.writes or not all(safe_assignment(n, v) for n, v in cmd.assigns):
        return False
    name = cmd.argv[0] if cmd.argv else None
    if name is None or cmd.globs[:1] == [True]:
        return False
    base = os.path.basename(name)
    spec = PROGRAMS.get(base)
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
    operands = parse_options(spec, args)
    if operands is None:
        return False
    return spec.operands is None or spec.operands(operands)


def _wrapper_options_ok(base: str, spec: Spec, mine: Words) -> bool:
    """The wrapper's own words (before the command it runs) are allowed options."""
    if base == "env":
        return env_ok(mine)
    if base == "command":
        return not mine
    if base == "timeout":
        mine = mine[:-1] if mine and not mine[-1].startswith("-") else mine  # the duration
    return parse_options(spec, mine) == []


def is_read_only(analysis: Analysis, cwd: str | None = None) -> bool:
    """True only when every command is proven to read and never write or run anything else."""
    if not analysis.understood or not analysis.commands or analysis.risky:
        return False
    return all(_command_read_only(cmd, cwd) for cmd in analysis.commands)
