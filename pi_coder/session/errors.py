"""Errors raised by the session store (part of the ``UserError`` family of ``pi_coder.errors``)."""

from __future__ import annotations

from pi_coder.errors import SessionNotFoundError, UserError

__all__ = [
    "AmbiguousSessionError",
    "InvalidSessionFileError",
    "SessionNotFoundError",
    "SessionReadError",
    "SessionWriteError",
]


class InvalidSessionFileError(UserError):
    """A non-empty file whose first line is not a session header."""


class AmbiguousSessionError(UserError):
    """A session id prefix matches more than one session."""

    def __init__(self, message: str, candidates: list[str]) -> None:
        super().__init__(message)
        self.candidates = candidates
        """Paths of the matching session files."""


class SessionWriteError(UserError):
    """The session file cannot be written (disk full, folder gone or read-only)."""


class SessionReadError(UserError):
    """The session file exists but cannot be read (permissions, I/O error)."""
