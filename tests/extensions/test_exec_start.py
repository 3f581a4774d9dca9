"""``pi.exec`` (``run_process``) cancelled while its program starts (see tests/support/start_race.py)."""

from __future__ import annotations

from pathlib import Path

from pi_coder.extensions.exec import run_process
from tests.support.start_race import BACKGROUND_SCRIPT, assert_cancel_while_starting_kills_all


def test_a_cancel_while_the_program_starts_kills_its_group(tmp_path: Path) -> None:
    """The extension's handler is cancelled (Ctrl+C in print mode) while ``pi.exec`` starts its
    program: the program's whole group is killed and the call ends at once. (asyncio alone kills
    only the program, and its background child kept running.)"""
    pids = tmp_path / "pids"
    assert_cancel_while_starting_kills_all(
        lambda: run_process("bash", ["-c", BACKGROUND_SCRIPT, "bash", str(pids)], cwd=str(tmp_path), timeout=60),
        pids,
        "pi.exec",
    )
