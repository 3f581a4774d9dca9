"""Crash safety with real processes: SIGKILL mid-write (forked writers), and two writers on one file."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from pi_coder.ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage
from pi_coder.session import SessionStore


def _writer(directory: Path, seed: int, out: int) -> None:
    """Append big entries forever (tool calls, then their results), reporting each entry id on
    ``out`` once ``append_message`` has returned, i.e. once its line is fully written."""
    rng = random.Random(seed)
    store = SessionStore.create("/proj", directory)
    os.write(out, f"{store.append_message(UserMessage(content='start'))}\n".encode())
    i = 0
    while True:
        call = ToolCall(id=f"call{i}", name="bash", arguments={"command": "x" * rng.randrange(10, 100_000)})
        entry = store.append_message(AssistantMessage(content=[TextContent(text="go"), call], stop_reason="toolUse"))
        os.write(out, f"{entry}\n".encode())
        if i == 0:
            os.write(out, f"FILE {store.session_file}\n".encode())
        text = "y" * rng.randrange(10_000, 600_000)
        result = ToolResultMessage(tool_call_id=f"call{i}", tool_name="bash", content=[TextContent(text=text)])
        os.write(out, f"{store.append_message(result)}\n".encode())
        i += 1


def _kill_batch(tmp_path: Path, seeds: list[int], rng: random.Random) -> list[tuple[int, Path, list[str]]]:
    """Fork one writer per seed, let each run for a random time once its file exists, SIGKILL it."""
    # Build the message schemas (deferred by pydantic) before forking, so no child needs a lock
    # that another thread of this process might have held at fork time.
    for warm in (UserMessage(content="w"), AssistantMessage(content=[ToolCall(id="w", name="w")])):
        warm.to_json_dict()
    ToolResultMessage(tool_call_id="w", tool_name="w", content=[TextContent(text="w")]).to_json_dict()
    started = []
    for seed in seeds:
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child never returns into pytest
            try:
                os.close(read_end)
                _writer(tmp_path / f"run{seed}", seed, write_end)
            finally:
                os._exit(1)
        os.close(write_end)
        reader = os.fdopen(read_end, "r")
        ids = [reader.readline().strip(), reader.readline().strip()]
        marker = reader.readline().strip()
        assert marker.startswith("FILE "), marker
        started.append((seed, pid, reader, Path(marker[5:]), ids, time.monotonic() + rng.uniform(0.0, 0.15)))
    results = []
    for seed, pid, reader, path, ids, deadline in sorted(started, key=lambda run: run[5]):
        time.sleep(max(0.0, deadline - time.monotonic()))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        ids += [line for line in reader.read().splitlines() if line]
        reader.close()
        results.append((seed, path, ids))
    return results


def _check_pairing(messages: list) -> None:
    for index, message in enumerate(messages):
        if isinstance(message, AssistantMessage) and message.stop_reason == "toolUse":
            answered = set()
            for following in messages[index + 1 :]:
                if following.role in ("user", "assistant"):
                    break
                if isinstance(following, ToolResultMessage):
                    answered.add(following.tool_call_id)
            assert {call.id for call in message.tool_calls()} <= answered


def test_sigkill_at_random_points_never_loses_written_entries(tmp_path: Path) -> None:
    """20 writers killed mid-stream: files reload, written entries survive, appends start on a fresh line."""
    rng = random.Random(20240611)
    torn = 0
    for batch in range(5):
        for seed, path, ids in _kill_batch(tmp_path, [batch * 4 + k for k in range(4)], rng):
            store = SessionStore.open(path)
            assert store.malformed_lines == 0
            torn += store.torn_tail
            present = {entry.id for entry in store.get_entries()}
            assert set(ids) <= present, f"run {seed}: lost entries"
            assert len(present) - len(ids) <= 1  # at most the entry being written when killed
            leaf = store.leaf_id
            _check_pairing(store.build_session_context().messages)

            new_id = store.append_message(UserMessage(content="after the crash"))
            again = SessionStore.open(path)
            assert again.get_entry(new_id).parent_id == leaf
            assert again.malformed_lines == (1 if store.torn_tail else 0)
            assert {entry.id for entry in again.get_entries()} == present | {new_id}
            messages = again.build_session_context().messages
            _check_pairing(messages)
            assert messages[-1].content == "after the crash"
            path.unlink()
    # The writes are big enough that some kills land mid-line; not asserted (timing-dependent),
    # but reported when the test is run with -s.
    print(f"torn last lines: {torn}/20")


_APPENDER = textwrap.dedent(
    """
    import sys
    from pi_coder.ai.types import TextContent, UserMessage
    from pi_coder.session import SessionStore

    path, tag, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    store = SessionStore.open(path)
    sys.stdout.write("ready\\n"); sys.stdout.flush(); sys.stdin.readline()
    for i in range(count):
        store.append_message(UserMessage(content=[TextContent(text=f"{tag}{i}:" + tag * (1000 + 37 * i))]))
    """
)


def test_two_processes_appending_never_interleave_lines(tmp_path: Path) -> None:
    store = SessionStore.create("/proj", tmp_path)
    store.append_message(UserMessage(content="q"))
    store.append_message(AssistantMessage(content=[]))
    path = store.session_file
    count = 150
    children = [
        subprocess.Popen(
            [sys.executable, "-c", _APPENDER, str(path), tag, str(count)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for tag in ("A", "B")
    ]
    for child in children:
        assert child.stdout.readline().strip() == "ready"
    for child in children:  # release both at once
        child.stdin.write("go\n")
        child.stdin.flush()
    for child in children:
        assert child.wait(timeout=60) == 0
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b""
    decoded = [json.loads(line) for line in lines[:-1]]  # every line is whole JSON
    texts = [d["message"]["content"][0]["text"] for d in decoded[3:]]
    for tag in "AB":
        mine = [t for t in texts if t.startswith(tag)]
        assert mine == [f"{tag}{i}:" + tag * (1000 + 37 * i) for i in range(count)]
    reloaded = SessionStore.open(path)
    assert reloaded.malformed_lines == 0 and len(reloaded.get_entries()) == 2 + 2 * count


_FULL_DISK = textwrap.dedent(
    """
    # A real failing write: RLIMIT_FSIZE makes write() fail with EFBIG past the limit (SIGXFSZ
    # ignored), as a full disk fails it with ENOSPC; raising the limit again "frees space".
    import json, resource, signal, sys
    from pathlib import Path
    from pi_coder.ai.types import AssistantMessage, TextContent, UserMessage
    from pi_coder.session import SessionStore

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    folder = Path(sys.argv[1])
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)

    def limit(size):
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, hard))

    def answer(text):
        return AssistantMessage(content=[TextContent(text=text)], provider="p", model="m")

    out = {}
    # 1. The first save fails, later saves recover once there is space.
    limit(100)
    store = SessionStore.create("/proj", folder / "first")
    store.append_message(UserMessage(content="q1" * 100))
    out["first_error"] = store.write_error
    out["first_exists"] = store.session_file.exists()
    store.append_message(answer("a1"))
    out["second_error"] = store.write_error
    limit(hard)
    store.append_message(UserMessage(content="q2"))
    out["recovered_error"] = store.write_error
    out["first_file"] = str(store.session_file)

    # 2. An append fails mid-session; the entries wait and go out in order with the next save.
    store = SessionStore.create("/proj", folder / "append")
    store.append_message(UserMessage(content="u1"))
    store.append_message(answer("r1"))
    size = store.session_file.stat().st_size
    limit(size + 10)
    store.append_message(UserMessage(content="u2" * 50))
    store.append_message(answer("r2" * 50))
    out["pending"] = store.pending_count
    out["size_kept"] = store.session_file.stat().st_size == size
    limit(hard)
    store.append_message(UserMessage(content="u3"))
    out["pending_after"] = store.pending_count
    out["append_file"] = str(store.session_file)
    print(json.dumps(out))
    """
)


def test_full_disk_keeps_the_chain_valid_and_the_first_save_recovers(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", _FULL_DISK, str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["first_error"] and "Cannot save the session" in out["first_error"]
    assert out["first_exists"] is False  # no half-written file left to make later saves fail
    assert out["second_error"]
    assert out["recovered_error"] is None
    first = SessionStore.open(out["first_file"])
    assert [m.content for m in first.build_session_context().messages if m.role == "user"] == ["q1" * 100, "q2"]

    assert out["pending"] == 2 and out["size_kept"]  # the failed line was cut off again
    assert out["pending_after"] == 0
    store = SessionStore.open(out["append_file"])
    assert store.malformed_lines == 0 and store.repairs == []
    messages = store.build_session_context().messages
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant", "user"]
    assert messages[2].content == "u2" * 50 and messages[-1].content == "u3"
