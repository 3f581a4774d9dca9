"""What the session tells its shell commands through the environment.

The bash tool and the user's ``!`` commands get pi's environment without secrets
(``pi_coder.tools._env``) plus these markers, as Pi 1.6 sets them: ``PI_SESSION_ID``,
``PI_SESSION_FILE`` (absent without a session file), ``PI_PROVIDER``, ``PI_MODEL`` and
``PI_REASONING_LEVEL``. They are read for every command, so a model switch shows at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pi_coder.ai.keys import env_reference
from pi_coder.ai.models import Models

if TYPE_CHECKING:
    from pi_coder.core.host import SessionHost

__all__ = ["SessionMarkers", "secret_env_names", "session_markers"]


def session_markers(session: SessionHost) -> dict[str, str]:
    """The ``PI_*`` variables describing ``session`` for its commands."""
    markers = {"PI_SESSION_ID": session.session_id}
    if session.session_file:
        markers["PI_SESSION_FILE"] = session.session_file
    model = session.model
    if model is not None:
        markers["PI_PROVIDER"] = model.provider
        markers["PI_MODEL"] = model.id
    markers["PI_REASONING_LEVEL"] = session.thinking_level
    return markers


def secret_env_names(models: Models) -> tuple[str, ...]:
    """Every variable the providers of ``models`` read a key (or header value) from."""
    names: set[str] = set()
    for provider in models.providers():
        names.update(provider.env_vars)
        for value in (provider.api_key, *(provider.headers or {}).values()):
            ref = env_reference(value)
            if ref:
                names.add(ref)
    return tuple(sorted(names))


class SessionMarkers:
    """``session_markers`` of a session bound after the tools were built (the tools' ``env_extra``)."""

    def __init__(self) -> None:
        self.session: SessionHost | None = None

    def __call__(self) -> dict[str, str]:
        return session_markers(self.session) if self.session is not None else {}
