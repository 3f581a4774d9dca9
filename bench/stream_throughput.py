"""Provider streaming throughput: a 400 KB answer as 50,000 SSE deltas, end to end.

The local test server (tests/support/sse_server.py, in a thread of this process) streams a
prebuilt body; the provider decodes SSE, parses JSON, grows the live partial and pushes
events; a consumer iterates every event and awaits the result. Reported per wire format:
median wall time over several runs, SSE events per second, protocol events per second, and
peak memory (peak RSS of the process, plus the peak of Python allocations in a separate
tracemalloc run, which is slower and not timed).

Run: ``.venv/bin/python bench/stream_throughput.py [--runs 7] [--events 50000]``.
Target: at least 100,000 SSE events/s.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import math
import resource
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pi_coder.ai.options import StreamOptions  # noqa: E402
from pi_coder.ai.providers import anthropic, openai_completions  # noqa: E402
from pi_coder.ai.types import Context, UserMessage  # noqa: E402
from tests.support.sse_server import SSEServer, Text, Turn, encode_anthropic, encode_openai  # noqa: E402

DELTA_CHARS = 8


def answer_text(events: int) -> str:
    words = "the quick brown fox jumps over a lazy dog while streaming tokens fast ".split()
    out: list[str] = []
    size = 0
    i = 0
    target = events * DELTA_CHARS
    while size < target:
        word = words[i % len(words)] + " "
        out.append(word)
        size += len(word)
        i += 1
    return "".join(out)[:target]


async def one_run(server: SSEServer, api: str, body: bytes, expected_len: int) -> tuple[float, int]:
    module = anthropic if api == "anthropic-messages" else openai_completions
    server.enqueue(Turn(raw=body, chunk_size=64 * 1024))
    model = server.model(api)
    context = Context(messages=[UserMessage(content="write a long answer")])
    start = time.perf_counter()
    stream = module.stream(model, context, StreamOptions(api_key="bench"))
    count = 0
    async for _event in stream:
        count += 1
    message = await stream.result()
    elapsed = time.perf_counter() - start
    if message.stop_reason != "stop" or len(message.text()) != expected_len:
        raise SystemExit(f"{api}: bad result: {message.stop_reason} {message.error_message}")
    return elapsed, count


async def bench(runs: int, events: int) -> None:
    text = answer_text(events)
    turn = Turn([Text(text)], delta_chars=DELTA_CHARS, usage={"input": 10, "output": events})
    bodies = {"anthropic-messages": encode_anthropic(turn), "openai-completions": encode_openai(turn)}
    print(
        f"answer: {len(text.encode()) / 1000:.0f} KB in {events} deltas of {DELTA_CHARS} chars; {runs} runs each"
    )
    print(f"calibration: sum(range(10**6)) takes {calibrate() * 1000:.1f} ms on this machine now")
    with SSEServer() as server:
        for api, body in bodies.items():
            sse_events = body.count(b"\n\n")
            await one_run(server, api, body, len(text))  # warm-up: connection, imports
            times = []
            protocol_events = 0
            for _ in range(runs):
                gc.collect()
                elapsed, protocol_events = await one_run(server, api, body, len(text))
                times.append(elapsed)
            median = statistics.median(times)
            gc.collect()
            tracemalloc.start()
            await one_run(server, api, body, len(text))
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            print(
                f"{api:20s} body {len(body) / 1e6:.2f} MB, {sse_events} SSE events: "
                f"median {median * 1000:.0f} ms (min {min(times) * 1000:.0f}, max {max(times) * 1000:.0f}), "
                f"{sse_events / median:,.0f} SSE events/s median ({sse_events / min(times):,.0f} best), "
                f"{protocol_events / median:,.0f} protocol events/s, "
                f"peak traced {peak / 1e6:.1f} MB"
            )
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS of the process: {rss_mb:.0f} MB")


def calibrate() -> float:
    """Best of 5 timings of a fixed pure-Python loop, to compare figures across machines and load."""
    best = math.inf
    for _ in range(5):
        start = time.perf_counter()
        sum(range(10**6))
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--events", type=int, default=50_000)
    args = parser.parse_args()
    asyncio.run(bench(args.runs, args.events))


if __name__ == "__main__":
    main()
