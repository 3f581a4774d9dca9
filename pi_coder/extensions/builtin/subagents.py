"""Subagents: the ``task`` tool and ``/agents`` (``pi_coder.subagents``); loaded by pi unless turned off."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_coder.extensions import ExtensionAPI


def extension(pi: ExtensionAPI) -> None:
    from pi_coder.subagents.extension import extension as subagents

    subagents(pi)
