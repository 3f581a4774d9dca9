"""Permission modes and rules (``pi_coder.permissions.gate``); loaded by pi when they are configured."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_coder.extensions import ExtensionAPI


def extension(pi: ExtensionAPI) -> None:
    from pi_coder.permissions.gate import register

    register(pi)
