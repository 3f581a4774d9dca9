"""The TUI's edit preview never opens a FIFO (the open would freeze the interface)."""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path

from pi_coder.tui.edit_preview import preview_edit


def test_edit_preview_of_a_fifo_returns_at_once(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    outcome: list[tuple[str | None, str | None]] = []
    worker = threading.Thread(
        target=lambda: outcome.append(preview_edit({"path": "pipe", "oldText": "a", "newText": "b"}, str(tmp_path))),
        daemon=True,
    )
    worker.start()
    worker.join(timeout=30)
    if worker.is_alive():  # the bug: unblock the stuck open so the test run can end
        with contextlib.suppress(OSError):
            os.close(os.open(tmp_path / "pipe", os.O_WRONLY | os.O_NONBLOCK))
        worker.join(timeout=5)
    assert outcome and outcome[0] == (None, None)
