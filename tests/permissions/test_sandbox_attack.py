"""The sandbox as an attacker meets it: every mode, as root and as a normal user, real bwrap.

An attack script tries to remount the file system writable, write to /etc, /root, the working
folder, ``~/.ssh`` and pi's config folder, and read the private key and credentials.json.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_coder.permissions import sandbox
from tests.permissions.test_sandbox import _PROBLEM

pytestmark = pytest.mark.skipif(_PROBLEM is not None, reason=_PROBLEM or "")

_ATTACK = r"""
for t in / "$PWD" "$HOME/.ssh" "$PI_CODER_HOME" /etc /root /tmp; do
  mount -o remount,bind,rw "$t" 2>/dev/null && echo "REMOUNTED $t"
  mount -o remount,rw "$t" 2>/dev/null && echo "REMOUNTED $t"
done
unshare -rm sh -c 'mount -o remount,bind,rw / && echo REMOUNTED-IN-USERNS' 2>/dev/null
echo pwned > /etc/pi-attack-$TAG 2>/dev/null && echo WROTE-etc
echo pwned > /root/pi-attack-$TAG 2>/dev/null && echo WROTE-root
echo pwned > "$PWD/pi-attack" 2>/dev/null && echo WROTE-pwd
echo pwned >> "$HOME/.ssh/authorized_keys" 2>/dev/null && echo WROTE-ssh
echo pwned > "$PI_CODER_HOME/credentials.json" 2>/dev/null && echo WROTE-config
echo pwned > "$PI_CODER_HOME/models.toml" 2>/dev/null && echo WROTE-config
cat "$HOME/.ssh/id_rsa" "$PI_CODER_HOME/credentials.json" "$PWD/.env.local" 2>/dev/null
grep CapEff /proc/self/status
"""

_USERS = {"root": [], "nobody": ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]}


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A project, a home with ~/.ssh and a config folder, all writable by everyone outside the
    sandbox (so only the sandbox stops the writes), in /var/tmp (read-only mode hides /tmp)."""
    base = Path(tempfile.mkdtemp(prefix="pi-attack-", dir="/var/tmp"))
    (base / "project").mkdir()
    (base / "project" / ".env.local").write_text("PROJECT-SECRET\n")
    (base / "home" / ".ssh").mkdir(parents=True)
    (base / "home" / ".ssh" / "id_rsa").write_text("SSH-SECRET\n")
    (base / "home" / ".ssh" / "authorized_keys").write_text("")
    (base / "config").mkdir()
    (base / "config" / "credentials.json").write_text('{"k": "CONFIG-SECRET"}\n')
    (base / "config" / "models.toml").write_text("")
    for folder, _dirs, files in os.walk(base):
        os.chmod(folder, 0o777)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o666)
    monkeypatch.setenv("HOME", str(base / "home"))
    monkeypatch.setenv("PI_CODER_HOME", str(base / "config"))
    yield base
    shutil.rmtree(base, ignore_errors=True)


def _attack(world: Path, config: sandbox.SandboxConfig, user: str) -> tuple[str, str]:
    tag = uuid.uuid4().hex[:8]
    bwrap = shutil.which("bwrap") or "bwrap"
    argv = [*_USERS[user], *sandbox.bwrap_argv(config, bwrap), "sh", "-c", _ATTACK]
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(world / "home"),
        "PI_CODER_HOME": str(world / "config"),
        "TAG": tag,
    }
    try:
        out = subprocess.run(argv, cwd=world / "project", env=env, capture_output=True, text=True, timeout=60)
    finally:
        for leftover in (Path(f"/etc/pi-attack-{tag}"), Path(f"/root/pi-attack-{tag}")):
            if leftover.exists():
                leftover.unlink()
                pytest.fail(f"the attack wrote {leftover}")
    return out.stdout, out.stderr


_MODES = {
    "workspace-write": {},
    "read-only": {},
    "confined": {"hide_project_env": True},
}


@pytest.mark.parametrize("user", list(_USERS))
@pytest.mark.parametrize("mode", list(_MODES))
def test_the_attack_fails(world: Path, mode: str, user: str) -> None:
    if user == "root" and os.getuid() != 0:
        pytest.skip("the root case needs the tests to run as root")
    config = sandbox.SandboxConfig(
        "read-only" if mode == "confined" else mode, str(world / "project"), **_MODES[mode]
    )
    stdout, stderr = _attack(world, config, user)
    assert "REMOUNTED" not in stdout, stdout
    for what in ("WROTE-etc", "WROTE-root", "WROTE-ssh", "WROTE-config"):
        assert what not in stdout, stdout
    assert ("WROTE-pwd" in stdout) == (mode == "workspace-write"), stdout
    assert "CapEff:\t0000000000000000" in stdout, stdout + stderr
    assert "SSH-SECRET" not in stdout and "CONFIG-SECRET" not in stdout
    assert ("PROJECT-SECRET" in stdout) == (mode != "confined")  # .env* hidden from confined commands
    assert (world / "home" / ".ssh" / "authorized_keys").read_text() == ""
    assert "pwned" not in (world / "config" / "credentials.json").read_text()


def test_hide_secrets_off_shows_them(world: Path) -> None:
    config = sandbox.SandboxConfig("read-only", str(world / "project"), hide_secrets=False)
    stdout, _ = _attack(world, config, "root" if os.getuid() == 0 else "nobody")
    assert "SSH-SECRET" in stdout and "CONFIG-SECRET" in stdout
    assert "WROTE" not in stdout and "REMOUNTED" not in stdout


def test_hidden_setting_hides_more(world: Path) -> None:
    (world / "home" / "token.txt").write_text("EXTRA-SECRET\n")
    config = sandbox.SandboxConfig("read-only", str(world / "project"), hidden=["~/token.txt"])
    argv = [*sandbox.bwrap_argv(config), "cat", str(world / "home" / "token.txt")]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert "EXTRA-SECRET" not in out.stdout
