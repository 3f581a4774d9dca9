"""TUI benchmarks: time to first frame, streaming a 400 KB answer, idle CPU.

1. First frame: ``pi`` is started in a pseudo-terminal (fresh PI_CODER_HOME, no model configured)
   and timed from spawn until the header (``pi v``) has been written to the terminal.
2. Streaming: one 400 KB Markdown answer from the faux provider (deltas of 12-20 characters,
   about 25,000 events) through a headless PiApp, from submit until the last block is rendered,
   compared with print mode's work on the same session setup (run the prompt, print the final
   text) and with draining the events with a no-op subscriber.
3. Idle CPU: process CPU time of the running ``pi`` over a few idle seconds.

Run: ``.venv/bin/python bench/tui.py [--runs 5] [--idle 5]``.
Targets: first frame < 500 ms; streaming <= 1.5x print mode; idle CPU < 1 %.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import pty
import select
import signal
import statistics
import sys
import tempfile
import time
from contextlib import redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _pi_command() -> list[str]:
    script = Path(sys.executable).parent / "pi"
    return [str(script)] if script.exists() else [sys.executable, "-m", "pi_coder"]


def _env(home: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(PI_CODER_HOME=home, TERM="xterm-256color", COLUMNS="120", LINES="40")
    return env


def _spawn(home: str, cwd: str) -> tuple[int, int]:
    pid, fd = pty.fork()
    if pid == 0:  # child
        os.chdir(cwd)
        os.execvpe(_pi_command()[0], _pi_command(), _env(home))
    import fcntl
    import struct
    import termios

    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    return pid, fd


def _read_until(fd: int, needle: bytes, timeout: float) -> bytes:
    buffer = b""
    deadline = time.monotonic() + timeout
    while needle not in buffer:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError(f"no {needle!r} within {timeout}s; got {buffer[-300:]!r}")
        ready, _, _ = select.select([fd], [], [], remaining)
        if ready:
            try:
                buffer += os.read(fd, 65536)
            except OSError:
                break
    return buffer


def _drain(fd: int, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if ready:
            try:
                os.read(fd, 65536)
            except OSError:
                return


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks  # utime + stime


def _stop(pid: int, fd: int) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
        _drain(fd, 0.3)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass
    os.close(fd)


def bench_first_frame(runs: int, idle_seconds: float) -> tuple[list[float], float | None]:
    times: list[float] = []
    idle_pct: float | None = None
    with tempfile.TemporaryDirectory() as tmp:
        home, cwd = Path(tmp, "home"), Path(tmp, "project")
        home.mkdir()
        cwd.mkdir()
        for index in range(runs):
            start = time.perf_counter()
            pid, fd = _spawn(str(home), str(cwd))
            try:
                _read_until(fd, b"pi v", timeout=20)
                times.append(time.perf_counter() - start)
                if index == runs - 1 and Path(f"/proc/{pid}/stat").exists():
                    _drain(fd, 1.5)  # let start-up work settle
                    before = _cpu_seconds(pid)
                    t0 = time.monotonic()
                    _drain(fd, idle_seconds)
                    idle_pct = 100 * (_cpu_seconds(pid) - before) / (time.monotonic() - t0)
            finally:
                _stop(pid, fd)
    return times, idle_pct


# ---------------------------------------------------------------------------- streaming


def big_answer(size: int = 400_000) -> str:
    paragraph = (
        "Streaming **Markdown** keeps the terminal responsive: each delta is queued, and the "
        "widget re-renders only its last block, at most thirty times a second. "
    )
    code = "```python\ndef handler(event):\n    return render(event.delta)  # hot path\n```\n\n"
    items = "- first point about `code`\n- second point\n- third point\n\n"
    parts: list[str] = []
    total = 0
    index = 0
    while total < size:
        if index % 12 == 0:
            chunk = f"## Section {index // 12 + 1}\n\n"
        elif index % 5 == 0:
            chunk = code
        elif index % 7 == 0:
            chunk = items
        else:
            chunk = paragraph * 2 + "\n\n"
        parts.append(chunk)
        total += len(chunk)
        index += 1
    return "".join(parts)[:size]


def _make_session(cwd: str, text: str):
    from pi_coder.ai.models import create_models
    from pi_coder.ai.providers.faux import faux_provider
    from pi_coder.core import create_agent_session
    from pi_coder.settings import load_settings

    faux = faux_provider([text])
    models = create_models(include_builtin=False, env={}, models_toml=Path("/nonexistent/models.toml"))
    models.set_provider(faux)
    return create_agent_session(
        cwd, settings=load_settings(cwd), models=models, model=faux.model, no_session=True, tools=[]
    )


async def _print_mode_run(cwd: str, text: str) -> float:
    session = _make_session(cwd, text)
    start = time.perf_counter()
    await session.prompt("write a long answer")
    with redirect_stdout(io.StringIO()):
        message = session.messages[-1]
        print(message.text())
    elapsed = time.perf_counter() - start
    await session.close()
    return elapsed


async def _drain_run(cwd: str, text: str) -> float:
    session = _make_session(cwd, text)
    count = 0

    def listener(event: object) -> None:
        nonlocal count
        count += 1

    session.subscribe(listener)
    start = time.perf_counter()
    await session.prompt("write a long answer")
    elapsed = time.perf_counter() - start
    await session.close()
    return elapsed


async def _tui_run(cwd: str, text: str) -> tuple[float, int]:
    from pi_coder.tui.app import PiApp
    from pi_coder.tui.widgets.assistant_message import AssistantText

    session = _make_session(cwd, text)
    app = PiApp(session, version="bench", cwd_display="~/bench", branch="", animate=False)
    frames = 0
    async with app.run_test(headless=True, size=(120, 40)) as pilot:
        await pilot.pause(1.2)  # as a user would: start-up work (GC freeze at 1 s) is done
        original = app._display

        def counting_display(*args, **kwargs):  # count screen updates (frames)
            nonlocal frames
            frames += 1
            return original(*args, **kwargs)

        app._display = counting_display  # type: ignore[method-assign]
        start = time.perf_counter()
        await session.prompt("write a long answer")
        # Rendered: every event handled and the answer's markdown fully written.
        while True:
            widgets = list(app.query(AssistantText))
            done = (
                not app.events_pending
                and widgets
                and len(widgets[-1].source) >= len(text.strip()) - 1
                and not widgets[-1].has_pending
            )
            if done:
                break
            await asyncio.sleep(0.005)
        await pilot.pause()
        elapsed = time.perf_counter() - start
        app._display = original  # type: ignore[method-assign]
    await session.close()
    return elapsed, frames


def bench_streaming(runs: int) -> dict[str, list[float]]:
    text = big_answer()
    results: dict[str, list[float]] = {"print": [], "drain": [], "tui": [], "frames": []}
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["PI_CODER_HOME"] = str(Path(tmp, "home"))
        cwd = str(Path(tmp))
        for _ in range(runs):
            results["print"].append(asyncio.run(_print_mode_run(cwd, text)))
            results["drain"].append(asyncio.run(_drain_run(cwd, text)))
            elapsed, frames = asyncio.run(_tui_run(cwd, text))
            results["tui"].append(elapsed)
            results["frames"].append(frames)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--idle", type=float, default=5.0, help="seconds of idle CPU measurement")
    parser.add_argument("--skip-terminal", action="store_true", help="skip the pty measurements")
    parser.add_argument("--skip-stream", action="store_true", help="skip the streaming comparison")
    args = parser.parse_args()

    if not args.skip_terminal:
        times, idle = bench_first_frame(args.runs, args.idle)
        med = statistics.median(times) * 1000
        print(
            f"first frame (pty, pi start -> header drawn): median {med:.0f} ms, "
            f"min {min(times) * 1000:.0f} ms over {len(times)} runs  [target < 500 ms]"
        )
        if idle is not None:
            print(f"idle CPU: {idle:.2f} % over {args.idle:.0f} s  [target < 1 %]")

    if args.skip_stream:
        return
    res = bench_streaming(args.runs)
    p, d, t = (statistics.median(res[k]) for k in ("print", "drain", "tui"))
    ratio = statistics.median(t_ / p_ for t_, p_ in zip(res["tui"], res["print"], strict=True))
    size_kb = len(big_answer()) // 1000
    print(
        f"stream {size_kb} KB answer: print mode {p:.2f} s, drain (no UI) {d:.2f} s, "
        f"TUI headless {t:.2f} s (medians of {args.runs}); median per-run ratio TUI/print "
        f"{ratio:.2f}x  [target <= 1.5x]"
    )
    print(
        f"  TUI screen updates during the stream: median {statistics.median(res['frames']):.0f} "
        f"({statistics.median(res['frames']) / t:.0f}/s)"
    )


if __name__ == "__main__":
    main()
