"""A small Chrome DevTools Protocol client over ``--remote-debugging-pipe`` for headless Chromium."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "chromium", "chromium-browser")


def find_chromium() -> str | None:
    for name in CHROMIUM_CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


class Browser:
    """Headless Chromium driven through fds 3 (commands in) and 4 (replies out)."""

    def __init__(self, executable: str, timeout: float = 60.0) -> None:
        self.timeout = timeout
        self._profile = tempfile.mkdtemp(prefix="pi-cdp-")
        self._log = open(os.path.join(self._profile, "stderr.log"), "wb")  # noqa: SIM115 (closed in close())
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        flags = [
            "--headless=new", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
            "--no-first-run", "--no-default-browser-check", "--disable-extensions",
            "--disable-background-networking", "--disable-dev-shm-usage", "--mute-audio",
            f"--user-data-dir={self._profile}", "about:blank",
        ]  # fmt: skip
        self.proc = subprocess.Popen(
            # bash, not sh: dash cannot redirect from descriptors above 9
            ["bash", "-c", f'exec "$0" "$@" 3<&{to_child_r} 4>&{from_child_w}', executable, *flags],
            pass_fds=(to_child_r, from_child_w),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._log,
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        self.session = ""
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call(
            "Target.attachToTarget", {"targetId": target, "flatten": True}, browser=True
        )["sessionId"]
        self.call("Page.enable")
        self.call("Runtime.enable")

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("no reply from chromium")
            chunk = os.read(self._from_child, 1 << 16)
            if not chunk:
                tail = Path(self._log.name).read_bytes()[-1500:].decode(errors="replace")
                raise RuntimeError(f"chromium closed the debugging pipe; its stderr ends:\n{tail}")
            self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        message: dict[str, Any] = json.loads(raw)
        return message

    def call(self, method: str, params: dict[str, Any] | None = None, *, browser: bool = False) -> Any:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if self.session and not browser:
            message["sessionId"] = self.session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def wait_event(self, method: str) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout
        while True:
            for n, event in enumerate(self.events):
                if event.get("method") == method:
                    return self.events.pop(n)
            message = self._read_message(deadline)
            if "method" in message:
                self.events.append(message)

    def open(self, path: Path) -> None:
        self.events.clear()
        self.call("Page.navigate", {"url": path.absolute().as_uri()})
        self.wait_event("Page.loadEventFired")

    def js(self, expression: str) -> Any:
        """The value of ``expression`` (promises awaited); a thrown error raises RuntimeError."""
        result = self.call(
            "Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True}
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:80]}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def close(self) -> None:
        try:
            self.call("Browser.close", browser=True)
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=20)
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        self._log.close()
        shutil.rmtree(self._profile, ignore_errors=True)
