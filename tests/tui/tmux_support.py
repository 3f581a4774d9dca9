"""Driving the installed ``pi`` in a real terminal (tmux) against a local scripted model server.

``Tmux`` sends keys and reads the screen; ``pi_home`` makes a configuration home whose
models.toml points at an ``SSEServer`` (model ``local/test-model``) and a project folder;
``start_pi`` runs ``pi`` there in a detached session that prints ``PI-EXIT=<code>`` on exit.
"""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.sse_server import SSEServer

PI = Path(sys.executable).parent / "pi"


class Tmux:
    """One tmux session; ``socket`` names a tmux server of its own (``tmux -L``, no config file),
    for tests that change server options or nest one tmux in another."""

    def __init__(self, name: str, socket: str | None = None) -> None:
        self.name = name
        self.socket = socket

    def run(self, *args: str) -> str:
        server = ["-L", self.socket, "-f", "/dev/null"] if self.socket else []
        done = subprocess.run(["tmux", *server, *args], capture_output=True, text=True, timeout=10, check=False)
        return done.stdout

    def raw(self, data: bytes) -> None:
        """Type ``data`` byte for byte, escape sequences included, as a terminal would send them."""
        self.run("send-keys", "-t", self.name, "-H", *(f"{b:02x}" for b in data))

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", self.name)

    def keys(self, *keys: str) -> None:
        self.run("send-keys", "-t", self.name, *keys)

    def text(self, text: str) -> None:
        self.run("send-keys", "-t", self.name, "-l", text)

    def exited(self) -> bool:
        return "PI-EXIT=" in self.screen()

    def wait(self, condition: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; screen:\n{self.screen()}")
            time.sleep(0.1)

    def wait_text(self, needle: str, timeout: float = 30.0) -> None:
        self.wait(lambda: needle in self.screen(), repr(needle), timeout)


@contextmanager
def pi_home(tmp_path: Path, *, api: str = "openai-completions", model_extra: str = "") -> Iterator[tuple[Path, Path, SSEServer]]:
    """(home, project, server): ``home/models.toml`` names ``local/test-model`` on ``server``."""
    if not PI.exists():
        pytest.skip(f"the pi entry point is not installed next to {sys.executable}")
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir(exist_ok=True)
    project.mkdir(exist_ok=True)
    with SSEServer() as server:
        base = server.openai_base_url if api == "openai-completions" else server.anthropic_base_url
        (home / "models.toml").write_text(
            "[providers.local]\n"
            f'api = "{api}"\n'
            f'base_url = "{base}"\n'
            'api_key = "none"\n'
            f'models = [{{ id = "test-model", context_window = 32000{model_extra} }}]\n'
        )
        yield home, project, server


def start_pi(home: Path, project: Path, args: str = "", *, prefix: str = "pi-test", size: tuple[int, int] = (100, 30)) -> Tmux:
    """``pi --model local/test-model ARGS`` in a new detached tmux session (no provider keys)."""
    tmux = Tmux(f"{prefix}-{uuid.uuid4().hex[:8]}")
    command = (
        f"env -u ANTHROPIC_API_KEY -u OPENAI_API_KEY PI_CODER_HOME={home} {PI} --model local/test-model {args};"
        " echo PI-EXIT=$?; sleep 60"
    )
    width, height = size
    tmux.run("new-session", "-d", "-s", tmux.name, "-x", str(width), "-y", str(height), "-c", str(project), command)
    return tmux
