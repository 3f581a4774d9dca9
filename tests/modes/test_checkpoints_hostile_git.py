"""The shadow git runs nothing a repository or the user's git configuration names: hooks, fsmonitor,
filters, textconv, external diff, pagers, includes. A hostile ``.git/config``, ``.gitattributes``,
``~/.gitconfig`` and environment all point at a command that leaves a marker; none may run."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.modes.pirun import PiHome, RpcClient
from tests.support.sse_server import SSEServer, Text, ToolCall, Turn

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def test_hostile_git_configuration_runs_nothing(tmp_path: Path, sse_server: SSEServer) -> None:
    pi = PiHome(tmp_path, sse_server)
    project = pi.project
    marker = tmp_path / "marker"
    evil = tmp_path / "evil.sh"
    evil.write_text(f'#!/bin/sh\necho "$0 $*" >> {marker}\ncat\n')
    evil.chmod(0o755)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for name in ("pre-commit", "post-commit", "post-checkout", "post-index-change", "reference-transaction"):
        (hooks / name).write_text(f"#!/bin/sh\necho hook {name} >> {marker}\n")
        (hooks / name).chmod(0o755)
    hostile = (
        f"[core]\n\tfsmonitor = {evil}\n\thooksPath = {hooks}\n\tpager = {evil}\n\tattributesFile = {tmp_path / 'attrs'}\n"
        f'[filter "evil"]\n\tclean = {evil}\n\tsmudge = {evil}\n\trequired = true\n'
        f'[diff "evil"]\n\ttextconv = {evil}\n\tcommand = {evil}\n'
        f"[diff]\n\texternal = {evil}\n"
        f"[include]\n\tpath = {tmp_path / 'more.inc'}\n"
    )
    with (project / ".git" / "config").open("a") as config:
        config.write(hostile)
    (tmp_path / "more.inc").write_text(hostile)
    (tmp_path / "attrs").write_text("* filter=evil diff=evil\n")
    (project / ".gitattributes").write_text("* filter=evil diff=evil\n")
    fake_home = tmp_path / "userhome"
    fake_home.mkdir()
    (fake_home / ".gitconfig").write_text(hostile)
    (project / "a.txt").write_text("alpha\n")
    sse_server.enqueue(
        Turn([ToolCall("write", {"path": "a.txt", "content": "beta\n"}, id="c1")]), Turn([Text("Done.")])
    )
    env = {
        "HOME": str(fake_home),
        "XDG_CONFIG_HOME": str(fake_home),
        "PAGER": str(evil),
        "GIT_PAGER": str(evil),
        "GIT_EXTERNAL_DIFF": str(evil),
        "GIT_CONFIG_PARAMETERS": f"'core.fsmonitor={evil}'",
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "core.fsmonitor",
        "GIT_CONFIG_VALUE_0": str(evil),
    }
    rpc = RpcClient(pi, env=pi.env(**env))
    try:
        assert rpc.call({"type": "prompt", "message": "change a"})["success"]
        rpc.event("agent_settled", timeout=30)
        (cp,) = rpc.call({"type": "get_checkpoints"})["data"]["checkpoints"]
        diff = rpc.call({"type": "get_checkpoint_diff", "checkpointId": cp["id"]}, timeout=30)
        assert "-alpha\n+beta" in diff["data"]["diff"]
        undo = rpc.call({"type": "undo"}, timeout=30)
        assert undo["success"], undo
    finally:
        rpc.close()
    assert (project / "a.txt").read_text() == "alpha\n"
    assert not marker.exists(), marker.read_text()
