"""Secrets kept out of an exported page: API-key shapes and the values of secret-named variables.

A session can hold a key the model printed (``env``, ``cat .env``) or one the user pasted. The
page replaces every value that looks like a key, and every value of an environment variable whose
name says it is a secret (``*KEY*``, ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``), with
``[redacted]``. Image data is left alone.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["REDACTED", "Redactor"]

REDACTED = "[redacted]"

_PATTERNS = (
    r"sk-[A-Za-z0-9_\-]{20,}",  # OpenAI, Anthropic (sk-ant-...), DeepSeek...
    r"gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}",
    r"AKIA[0-9A-Z]{16}",
    r"xox[abprs]-[A-Za-z0-9\-]{10,}",
    r"AIza[0-9A-Za-z_\-]{35}",
    r"(?<=[Bb]earer )[A-Za-z0-9._~+/\-]{20,}=*",
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
)
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL", re.IGNORECASE)


class Redactor:
    """Replaces secrets in strings, or in every string of a JSON value."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        values = sorted(
            {
                v
                for k, v in env.items()
                if _SECRET_NAME.search(k) and len(v) >= 8 and not v.isdigit() and not v.startswith(("/", "~"))
            },
            key=len,
            reverse=True,
        )
        alternatives = [*_PATTERNS, *(re.escape(v) for v in values)]
        self._pattern = re.compile("|".join(f"(?:{a})" for a in alternatives))

    def text(self, value: str) -> str:
        return self._pattern.sub(REDACTED, value) if value else value

    def value(self, value: Any) -> Any:
        """A copy of the JSON value ``value`` with its strings redacted (image ``data`` kept)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(item) for item in value]
        if isinstance(value, dict):
            if value.get("type") == "image":
                return {k: (v if k == "data" else self.value(v)) for k, v in value.items()}
            return {k: self.value(v) for k, v in value.items()}
        return value
