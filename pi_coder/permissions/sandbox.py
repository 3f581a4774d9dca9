"""The OS sandbox: bash and ``!`` commands under bubblewrap (``--sandbox``, ``[sandbox]``).

``workspace-write``: the whole file system is mounted read-only, the working folder, the
temporary folder and ``sandbox.writable`` paths writable; ``read-only``: nothing writable but a
private ``/tmp``. The network is unshared (only a private loopback) unless ``sandbox.network``.
Every mode drops all capabilities (``--cap-drop ALL``) inside a user namespace, so a command
run by root cannot remount anything writable; the command gets its own PID namespace and
session (``--unshare-pid``, ``--new-session``) and dies with pi (``--die-with-parent``).
``~/.ssh`` and pi's config folder (credentials.json, models.toml) are hidden unless
``sandbox.hide_secrets = false``; ``sandbox.hidden`` names more.

The *read-only confinement* is the same machinery for commands the permission gate allowed
only because the parser judged them read-only (plan mode, the unasked commands of ask/deny):
nothing writable, a private ``/tmp``, no network, and the project's ``.env*`` files hidden too,
so a mistake in the parser cannot write (``confine``).

What it does not do: limit CPU or memory, or filter system calls; files not hidden stay readable.
"""

from __future__ import annotations

import functools
import glob
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence

from pi_coder.errors import UserError

__all__ = [
    "SANDBOX_MODES",
    "SandboxConfig",
    "bwrap_argv",
    "confinement_problem",
    "install",
    "install_confinement",
    "sandbox_main",
    "secret_paths",
]

SANDBOX_MODES = ("off", "workspace-write", "read-only")


class SandboxConfig:
    def __init__(
        self,
        mode: str,
        cwd: str,
        *,
        network: bool = False,
        writable: Sequence[str] = (),
        hide_secrets: bool = True,
        hidden: Sequence[str] = (),
        hide_project_env: bool = False,
    ) -> None:
        if mode not in SANDBOX_MODES:
            raise UserError(f'Unknown sandbox mode "{mode}": use one of {", ".join(SANDBOX_MODES)}')
        self.mode = mode
        self.cwd = os.path.realpath(cwd)
        self.network = network
        self.writable = [os.path.realpath(os.path.expanduser(p)) for p in writable]
        self.hide_secrets = hide_secrets
        self.hidden = [os.path.expanduser(p) for p in hidden]
        self.hide_project_env = hide_project_env

    @property
    def active(self) -> bool:
        return self.mode != "off"


def secret_paths(config: SandboxConfig) -> list[str]:
    """The existing real paths a command must not see (see the module docstring)."""
    wanted: list[str] = list(config.hidden)
    if config.hide_secrets:
        from pi_coder.paths import config_dir

        wanted += [os.path.expanduser("~/.ssh"), str(config_dir())]
    if config.hide_project_env:
        wanted += glob.glob(os.path.join(glob.escape(config.cwd), ".env*"))
    out: list[str] = []
    for path in wanted:
        real = os.path.realpath(path)
        inside = config.cwd == real or config.cwd.startswith(real.rstrip(os.sep) + os.sep)
        if os.path.lexists(real) and not inside and real not in out and real != "/":
            out.append(real)  # never hide the working folder itself (nothing would run)
    return out


def find_bwrap() -> str:
    """bubblewrap's path; ``UserError`` when missing or unusable (never run unconfined)."""
    path = shutil.which("bwrap")
    if path is None:
        raise UserError(
            "The sandbox needs bubblewrap (bwrap), which is not installed: install it "
            "(apt-get install bubblewrap, dnf install bubblewrap) or run with --sandbox off."
        )
    return path


_PROBE = ["--ro-bind", "/", "/", "--dev", "/dev", "--unshare-net", "--unshare-pid", "--cap-drop", "ALL"]


@functools.cache
def _user_namespace(bwrap: str) -> bool:
    """Whether ``--unshare-user`` works here (off in some containers; ``--cap-drop ALL`` still holds)."""
    try:
        probe = subprocess.run([bwrap, *_PROBE, "--unshare-user", "true"], capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


def check_usable(bwrap: str) -> None:
    """Fail with one line when bubblewrap cannot create namespaces here (containers, sysctl)."""
    if _user_namespace(bwrap):
        return
    try:
        probe = subprocess.run([bwrap, *_PROBE, "true"], capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UserError(f"bubblewrap cannot run here ({exc}); refusing to start in a sandbox mode") from None
    if probe.returncode != 0:
        why = probe.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["unknown error"]
        raise UserError(
            f"bubblewrap cannot create a sandbox here ({why[0]}); refusing to start in a sandbox mode"
        )


def bwrap_argv(config: SandboxConfig, bwrap: str = "bwrap", *, user_namespace: bool = True) -> list[str]:
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
    for path in secret_paths(config):  # after the binds, so a writable bind cannot uncover them
        if os.path.isdir(path):
            argv += ["--tmpfs", path, "--remount-ro", path]
        else:
            argv += ["--ro-bind", "/dev/null", path]  # reading it: "Permission denied" (nodev)
    if not config.network:
        argv.append("--unshare-net")
    if user_namespace:
        argv.append("--unshare-user")
    argv += ["--cap-drop", "ALL", "--unshare-pid", "--new-session", "--die-with-parent"]
    argv += ["--chdir", config.cwd, "--"]
    return argv


def install(config: SandboxConfig) -> None:
    """Route every bash tool and ``!`` command of this process through bubblewrap."""
    from pi_coder.tools import set_command_wrapper

    if not config.active:
        set_command_wrapper(None)
        return
    bwrap = find_bwrap()
    check_usable(bwrap)
    prefix = bwrap_argv(config, bwrap, user_namespace=_user_namespace(bwrap))
    set_command_wrapper(lambda argv: [*prefix, *argv])


# ---------------------------------------------------------------------------- read-only confinement

@functools.cache
def _confine_bwrap() -> tuple[str | None, str | None]:
    """``(bwrap, None)`` when the confinement works here, else ``(None, why)``; probed once."""
    try:
        bwrap = find_bwrap()
        check_usable(bwrap)
    except UserError as exc:
        return None, str(exc)
    return bwrap, None


def confinement_problem() -> str | None:
    """None when read-only commands run confined; else why they rely on the parser alone."""
    return _confine_bwrap()[1]


def install_confinement(cwd: str, *, hide_secrets: bool = True, hidden: Sequence[str] = ()) -> None:
    """Let the permission gate confine commands it allowed as read-only (``_shell.confine``).

    bubblewrap is looked for on the first confined command, not at start-up."""
    from pi_coder.tools import set_confine_wrapper

    def wrap(argv: list[str]) -> list[str] | None:
        bwrap, _ = _confine_bwrap()
        if bwrap is None:
            return None
        config = SandboxConfig(
            "read-only", cwd, hide_secrets=hide_secrets, hidden=hidden, hide_project_env=True
        )
        return [*bwrap_argv(config, bwrap, user_namespace=_user_namespace(bwrap)), *argv]

    set_confine_wrapper(wrap)


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
            chosen,
            os.getcwd(),
            network=box.network if network is None else network,
            writable=box.writable,
            hide_secrets=box.hide_secrets,
            hidden=box.hidden,
        )
        bwrap = find_bwrap()
        check_usable(bwrap)
    except UserError as exc:
        print(f"pi: {exc}", file=sys.stderr)
        return 1
    argv = [*bwrap_argv(config, bwrap, user_namespace=_user_namespace(bwrap)), *rest]
    try:
        return subprocess.call(argv)
    except KeyboardInterrupt:
        return 130
