"""A loop that closes right after a prompt (``asyncio.run``'s end, a test's teardown) cancels the
checkpoints' background snapshot; every task must then end.

On Python 3.11 a task cancelled while ``asyncio.create_subprocess_exec`` connects the child's pipes
never ends: the shadow git's snapshot, started with the prompt and still starting git when a
quick answer came back, hung each such shutdown (seen as test teardowns timing out).
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from pi_coder.ai.providers.faux import faux_provider
from tests.core._agent_session_support import make_models, make_session


@pytest.mark.skipif(shutil.which("git") is None, reason="checkpoints need git")
def test_cancelling_every_task_after_a_prompt_ends_them_all(cwd: Path) -> None:
    loop = asyncio.new_event_loop()
    try:
        for round_ in range(3):
            session = make_session(cwd, make_models(faux_provider([f"answer {round_}"])))
            loop.run_until_complete(session.prompt("hi"))
            pending = asyncio.all_tasks(loop)
            for task in pending:
                task.cancel()
            done, stuck = loop.run_until_complete(asyncio.wait(pending, timeout=20)) if pending else (set(), set())
            assert not stuck, f"tasks that never ended after cancel: {stuck}"
        loop.run_until_complete(asyncio.wait_for(loop.shutdown_default_executor(), 20))
    finally:
        loop.close()
