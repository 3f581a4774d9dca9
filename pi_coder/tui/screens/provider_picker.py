"""``/login``'s provider list: every provider of the catalog (and models.toml) that takes a key,
searchable, with a ``✓`` and where the key comes from on those already configured."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from pi_coder.tui.screens._picker import PickerEntry, PickerScreen

__all__ = ["ProviderChoice", "ProviderPicker"]

ProviderChoice = tuple[str, str]
"""``(provider, key source)``; the source is ``""`` for a provider without a key."""


class ProviderPicker(PickerScreen[str]):
    """Choose a provider; the result is its name (``None`` when cancelled)."""

    def __init__(self, choices: Sequence[ProviderChoice], *, title: str = "Log in: provider") -> None:
        super().__init__(title, placeholder="Search providers...")
        self.choices = list(choices)

    def load_entries(self) -> list[PickerEntry[str]]:
        entries = []
        for name, source in self.choices:
            mark = Text()
            if source:
                mark.append("✓ ", style="green")
                mark.append(source, style="dim")
            entries.append(PickerEntry(key=name, value=name, prompt=(Text(name), mark), search=name))
        return entries

    def order(self, query: str, entries: Sequence[PickerEntry[str]]) -> list[PickerEntry[str]]:
        return list(entries) if not query.strip() else super().order(query, entries)
