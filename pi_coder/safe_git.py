"""Settings that keep ``git`` from running programs a repository names (``.git/config``).

A repository's configuration (and the files it includes with ``include.path`` /
``includeIf``) can name programs git runs on its own: ``core.fsmonitor``, hooks
(``core.hooksPath``), pagers, ``diff.external``, textconv, clean/smudge filters and merge
drivers. Whoever can write ``.git/config`` (a model, a sandboxed command, a tool) would get them
run by pi's own git calls, outside any sandbox. ``safe_git_options`` gives the ``-c`` options
that override each such key at the command-line level, which beats every configuration file
(included ones too): the fixed keys, plus one override per driver the repository configures
(``filter.<name>.clean``, ``diff.<name>.textconv``, ...) found in ``git config --list``.
README.md (Safety) says what this covers.
"""

from __future__ import annotations

import re

__all__ = ["FIXED_OVERRIDES", "GIT_ENV", "driver_overrides", "safe_git_options"]

FIXED_OVERRIDES: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.attributesFile", "/dev/null"),
    ("core.sshCommand", "false"),
    ("core.askPass", "false"),
    ("core.editor", "false"),
    ("sequence.editor", "false"),
    ("credential.helper", ""),
    ("diff.external", "false"),
    ("gpg.program", "false"),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("protocol.ext.allow", "never"),
)
"""Keys overridden on every call: hooks, fsmonitor, pager, external diff, signing, editors."""

GIT_ENV: dict[str, str] = {
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_CONFIG_NOSYSTEM": "1",
}
"""Environment for pi's own git calls (no pager, no prompt, no system-wide configuration)."""

# Keys naming a program per driver: `<section>.<driver>.<key>` -> the harmless value to use.
_DRIVER_KEYS = {
    ("filter", "clean"): "cat",
    ("filter", "smudge"): "cat",
    ("filter", "process"): "false",
    ("filter", "required"): "false",
    ("diff", "textconv"): "cat",
    ("diff", "command"): "false",
    ("merge", "driver"): "false",
}
_KEY = re.compile(
    r"^(filter|diff|merge)\.(.+)\.(clean|smudge|process|required|textconv|command|driver)$", re.I
)


def driver_overrides(config_list: str) -> list[tuple[str, str]]:
    """Overrides for every driver key in ``git config --list --name-only`` output."""
    out: list[tuple[str, str]] = []
    for line in config_list.splitlines():
        name = line.strip()
        match = _KEY.match(name)
        if match:
            value = _DRIVER_KEYS.get((match.group(1).lower(), match.group(3).lower()))
            if value is not None:
                out.append((name, value))
        elif name.lower().startswith("pager."):
            out.append((name, "false"))
    return out


def safe_git_options(config_list: str = "") -> list[str]:
    """``--no-pager`` and the ``-c key=value`` options for one git call (see the module doc)."""
    argv = ["--no-pager"]
    for key, value in (*FIXED_OVERRIDES, *driver_overrides(config_list)):
        argv += ["-c", f"{key}={value}"]
    return argv
