"""A scripted server that answers each child agent from its own queue (children run in parallel).

A request whose body contains a route's marker (a word of that agent's system prompt) takes the
route's next turn; any other request takes the shared queue (the parent). ``barrier`` markers:
their first requests wait until every barrier marker has sent one, so a test proves the
children ran at the same time (run one after the other, they would never all arrive).
``hold(marker)``: that route's second and later requests wait until ``release(marker)``.
"""

from __future__ import annotations

from collections import deque

from tests.support.sse_server import RecordedRequest, SSEServer, Turn


class RoutedServer(SSEServer):
    def __init__(self) -> None:
        super().__init__()
        self.routes: dict[str, deque[Turn]] = {}
        self.barrier: set[str] = set()
        self.seen: dict[str, int] = {}
        self.held: dict[str, bool] = {}

    def hold(self, marker: str) -> None:
        with self._lock:
            self.held[marker] = True

    def release(self, marker: str) -> None:
        with self._lock:
            self.held[marker] = False
            self._lock.notify_all()

    def route(self, marker: str, *turns: Turn) -> None:
        with self._lock:
            self.routes.setdefault(marker, deque()).extend(turns)

    def marker_of(self, record: RecordedRequest) -> str | None:
        text = record.body.decode("utf-8", "replace")
        return next((m for m in self.routes if m in text), None)

    def _take(self, record: RecordedRequest) -> Turn | None:
        with self._lock:
            self.requests.append(record)
            marker = self.marker_of(record)
            if marker is not None:
                self.seen[marker] = self.seen.get(marker, 0) + 1
            self._lock.notify_all()
            if marker is None:
                return self._turns.popleft() if self._turns else None
            if marker in self.barrier:
                self._lock.wait_for(lambda: all(self.seen.get(m) for m in self.barrier), timeout=30)
            if self.seen[marker] >= 2:
                self._lock.wait_for(lambda: not self.held.get(marker), timeout=30)
            queue = self.routes[marker]
            return queue.popleft() if queue else None
