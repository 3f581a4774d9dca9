"""Claude Code hooks (``pi_coder.hooks``); loaded by pi when some hook is configured."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_coder.extensions import ExtensionAPI


def extension(pi: ExtensionAPI) -> None:
    from pi_coder.hooks.handlers import register

    register(pi)
