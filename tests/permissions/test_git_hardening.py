"""pi's own git calls (``builtin:git-checkpoint``) run nothing a hostile ``.git/config`` names."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.modes.pirun import PiHome, RpcClient
from tests.support.sse_server import SSEServer, Text, Turn


def _hostile_repo(project: Path, markers: Path) -> None:
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    (project / "a.txt").write_text("one\n")
    subprocess.run([*git, "add", "a.txt"], cwd=project, check=True)
    subprocess.run([*git, "commit", "-qm", "init"], cwd=project, check=True)
    markers.mkdir()
    hooks = project / "hooks"
    hooks.mkdir()
    for hook in (
        "post-checkout",
        "post-merge",
        "pre-commit",
        "post-commit",
        "reference-transaction",
        "post-index-change",
    ):
        (hooks / hook).write_text(f"#!/bin/sh\ntouch {markers}/hook\n")
        (hooks / hook).chmod(0o755)
    (project / "included.cfg").write_text(f'[core]\n\tfsmonitor = "touch {markers}/included; false"\n')
    (project / ".gitattributes").write_text("*.txt filter=evil diff=evil merge=evil\n")
    with open(project / ".git" / "config", "a") as config:
        config.write(
            f'[core]\n\tfsmonitor = "touch {markers}/fsmonitor; false"\n\thooksPath = {hooks}\n'
            f'\tpager = "touch {markers}/pager; cat"\n'
            f'[diff]\n\texternal = "touch {markers}/external; false"\n'
            f'[filter "evil"]\n\tclean = "touch {markers}/clean; cat"\n\tsmudge = "touch {markers}/smudge; cat"\n'
            f'[diff "evil"]\n\ttextconv = "touch {markers}/textconv; cat"\n'
            f'[merge "evil"]\n\tdriver = "touch {markers}/merge; false"\n'
            f"[include]\n\tpath = {project / 'included.cfg'}\n"
        )


def test_the_hostile_config_runs_things_with_plain_git(tmp_path: Path) -> None:
    """The control: the same repository makes plain git touch the markers."""
    project, markers = tmp_path / "p", tmp_path / "m"
    project.mkdir()
    _hostile_repo(project, markers)
    (project / "a.txt").write_text("two\n")
    subprocess.run(["git", "stash", "create"], cwd=project, capture_output=True)
    assert {p.name for p in markers.iterdir()} & {"fsmonitor", "included", "clean"}


def test_git_checkpoint_runs_nothing_the_repository_names(tmp_path: Path, sse_server: SSEServer) -> None:
    pi = PiHome(tmp_path, sse_server)
    markers = tmp_path / "markers"
    _hostile_repo(pi.project, markers)
    (pi.project / "a.txt").write_text("two\n")  # uncommitted work the first turn starts from
    pi.server.enqueue(Turn([Text("first")]), Turn([Text("second")]))
    client = RpcClient(pi, "-e", "builtin:git-checkpoint")
    try:
        client.call({"type": "prompt", "message": "one"})
        client.event("agent_end")
        (pi.project / "a.txt").write_text("one\n")  # work lost after turn one
        client.call({"type": "prompt", "message": "two"})
        client.event("agent_end")
        forks = client.call({"type": "get_fork_messages"})["data"]["messages"]
        client.send(
            {"type": "fork", "entryId": forks[0]["entryId"]}
        )  # back before "one": rev-parse, stash apply
        request = client.event("extension_ui_request")
        assert request["method"] == "confirm"
        client.send_raw(
            (
                json.dumps({"type": "extension_ui_response", "id": request["id"], "confirmed": True}) + "\n"
            ).encode()
        )
        response = client.event("response")
        assert response["command"] == "fork"
    finally:
        client.close()
    assert sorted(p.name for p in markers.iterdir()) == []
    assert (pi.project / "a.txt").read_text() == "two\n"  # the checkpoint still works


@pytest.mark.parametrize("kind", ["fsmonitor", "clean"])
def test_safe_git_options_override(tmp_path: Path, kind: str) -> None:
    from pi_coder.safe_git import safe_git_options

    project, markers = tmp_path / "p", tmp_path / "m"
    project.mkdir()
    _hostile_repo(project, markers)
    (project / "a.txt").write_text("two\n")
    listing = subprocess.run(
        ["git", "config", "--list", "--name-only"], cwd=project, capture_output=True, text=True
    )
    subprocess.run(
        ["git", *safe_git_options(listing.stdout), "stash", "create"], cwd=project, capture_output=True
    )
    assert not (markers / kind).exists()
