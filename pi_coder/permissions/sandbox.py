"""The OS sandbox: bash and ``!`` commands under bubblewrap (``--sandbox``, ``[sandbox]``).

``workspace-write``: the whole file system is mounted read-only, the working folder, the
temporary folder and ``sandbox.writable`` paths writable; ``read-only``: nothing writable but a
private ``/tmp``. The network is unshared (only a private loopback) unless ``sandbox.network``.
The command gets its own PID namespace and dies with pi (``--die-with-parent``); pi starts
bubblewrap in a new session, so killing that process group (Esc, timeouts, exit) still kills
everything the command started.

What it does not do: hide files from reading (secrets in your home folder stay readable),
limit CPU or memory, or filter system calls.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence

from pi_coder.errors import UserError

__all__ = ["SANDBOX_MODES", "SandboxConfig", "bwrap_argv", "install", "sandbox_main"]

SANDBOX_MODES = ("off", "workspace-write", "read-only")


class SandboxConfig:
    def __init__(self, mode: str, cwd: str, *, network: bool = False, writable: Sequence[str] = ()) -> None:
        if mode not in SANDBOX_MODES:
            raise UserError(f'Unknown sandbox mode "{mode}": use one of {", ".join(SANDBOX_MODES)}')
        self.mode = mode
        self.cwd = os.path.realpath(cwd)
        self.network = network
        self.writable = [os.path.realpath(os.path.expanduser(p)) for p in writable]

    @property
    def active(self) -> bool:
        return self.mode != "off"


def find_bwrap() -> str:
    """bubblewrap's path; ``UserError`` when missing or unusable (never run unconfined)."""
    path = shutil.which("bwrap")
    if path is None:
        raise UserError(
            "The sandbox needs bubblewrap (bwrap), which is not installed: install it "
            "(apt-get install bubblewrap, dnf install bubblewrap) or run with --sandbox off."
        )
    return path


def check_usable(bwrap: str) -> None:
    """Fail with one line when bubblewrap cannot create namespaces here (containers, sysctl)."""
    try:
        probe = subprocess.run(
            [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-net", "--unshare-pid", "true"],
            capture_output=True, timeout=10,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UserError(f"bubblewrap cannot run here ({exc}); refusing to start in a sandbox mode") from None
    if probe.returncode != 0:
        why = probe.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["unknown error"]
        raise UserError(
            f"bubblewrap cannot create a sandbox here ({why[0]}); refusing to start in a sandbox mode"
        )


def bwrap_argv(config: SandboxConfig, bwrap: str = "bwrap") -> list[str]:
    """The bubblewrap prefix for one command (``[...prefix, shell, "-c", source]``)."""
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    tmp = os.path.realpath(tempfile.gettempdir())
    if config.mode == "workspace-write":
        argv += ["--bind", tmp, tmp]
        if tmp != "/tmp" and os.path.isdir("/tmp"):
            argv += ["--bind", "/tmp", "/tmp"]
        for path in (config.cwd, *config.writable):
            if os.path.exists(path):
                argv += ["--bind", path, path]
    else:
        argv += ["--tmpfs", "/tmp"]
        if tmp != "/tmp":
            argv += ["--tmpfs", tmp]
        for path in (config.cwd, *config.writable):  # still visible (read-only) when under a tmpfs
            if os.path.exists(path):
                argv += ["--ro-bind", path, path]
    if not config.network:
        argv.append("--unshare-net")
    argv += ["--unshare-pid", "--die-with-parent", "--chdir", config.cwd, "--"]
    return argv


def install(config: SandboxConfig) -> None:
    """Route every bash tool and ``!`` command of this process through bubblewrap."""
    from pi_coder.tools import set_command_wrapper

    if not config.active:
        set_command_wrapper(None)
        return
    bwrap = find_bwrap()
    check_usable(bwrap)
    prefix = bwrap_argv(config, bwrap)
    set_command_wrapper(lambda argv: [*prefix, *argv])


def sandbox_main(args: list[str]) -> int:
    """``pi sandbox [--mode M] [--network] -- cmd ...``: run one command the way bash runs."""
    mode: str | None = None
    network: bool | None = None
    rest = list(args)
    while rest and rest[0] != "--" and rest[0].startswith("-"):
        flag = rest.pop(0)
        if flag in ("--mode", "--sandbox") and rest:
            mode = rest.pop(0)
        elif flag.startswith(("--mode=", "--sandbox=")):
            mode = flag.split("=", 1)[1]
        elif flag == "--network":
            network = True
        else:
            print(
                f"pi: unknown option {flag} (pi sandbox [--mode workspace-write|read-only] [--network] -- command)",
                file=sys.stderr,
            )
            return 2
    if rest[:1] == ["--"]:
        rest = rest[1:]
    if not rest:
        print("pi: nothing to run: pi sandbox -- command [args...]", file=sys.stderr)
        return 2
    try:
        from pi_coder.settings import load_settings

        settings = load_settings(os.getcwd(), project_trusted=False).settings
        box = settings.sandbox
        chosen = mode or (box.mode if box.mode != "off" else "workspace-write")
        if chosen == "off":
            raise UserError("pi sandbox runs a command in a sandbox: --mode off makes no sense here")
        config = SandboxConfig(
            chosen, os.getcwd(), network=box.network if network is None else network, writable=box.writable
        )
        bwrap = find_bwrap()
        check_usable(bwrap)
    except UserError as exc:
        print(f"pi: {exc}", file=sys.stderr)
        return 1
    argv = [*bwrap_argv(config, bwrap), *rest]
    try:
        return subprocess.call(argv)
    except KeyboardInterrupt:
        return 130
