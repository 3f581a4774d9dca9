"""``/fork``: choose one of this branch's user messages (pi-product 3.5).

The result is the entry id; ``AgentSession.fork`` then writes a new session file holding the
history before that message, and the message text goes into the editor.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from pi_coder.tui.screens._picker import PickerEntry, PickerScreen

__all__ = ["ForkPicker"]


class ForkPicker(PickerScreen[str]):
    """Pick a user message to fork from.

    Args:
        candidates: ``(entry_id, text)`` pairs, oldest first (``session.fork_candidates()``).
    """

    def __init__(self, candidates: Sequence[tuple[str, str]]) -> None:
        items = list(candidates)
        super().__init__(
            "Fork from message",
            placeholder="Search messages...",
            hint="↑↓ move · Enter fork from here · Esc cancel",
            initial_key=items[-1][0] if items else None,
        )
        self.candidates = items

    def load_entries(self) -> list[PickerEntry[str]]:
        entries = []
        for number, (entry_id, text) in enumerate(self.candidates, start=1):
            flat = " ".join(text.split())
            line = Text(no_wrap=True, overflow="ellipsis")
            line.append(f"{number:>3}. ", style="dim")
            line.append(flat)
            entries.append(PickerEntry(key=entry_id, value=entry_id, prompt=line, search=flat))
        return entries

    def order(self, query: str, entries: Sequence[PickerEntry[str]]) -> list[PickerEntry[str]]:
        from pi_coder.tui.screens._fuzzy import rank

        return rank(query, entries, lambda entry: entry.search, stable=True)
