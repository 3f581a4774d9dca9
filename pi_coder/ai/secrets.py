"""The key values this process knows, and the one redactor that keeps them out of files.

Every configured key is remembered when pi reads or resolves it: ``--api-key``, the providers'
environment variables, ``credentials.json``, literal ``api_key`` values in models.toml and the
results of ``$NAME`` / ``!command`` values (keys and headers). :class:`Redactor` replaces those
values, whatever their shape (``tk-``, ``ck-``, ``gsk_``, ...), plus well-known key shapes
(``sk-...``, ``ghp_...``, ``AKIA...``, private key blocks) and the values of secret-named
environment variables (``*KEY*``, ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``) with ``[redacted]``.
It is used for session files, the HTML export, ``/debug`` and the log files. Image data is left
alone, and so are provider signatures (opaque blobs the provider checks on replay).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import overload

from pi_coder.json_types import JsonObject, JsonValue

__all__ = ["REDACTED", "Redactor", "current", "known_secrets", "redact", "remember"]

REDACTED = "[redacted]"
MIN_SECRET = 8

_PATTERNS = (
    r"sk-[A-Za-z0-9_\-]{20,}",  # OpenAI, Anthropic (sk-ant-...), DeepSeek...
    r"gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}",
    r"AKIA[0-9A-Z]{16}",
    r"xox[abprs]-[A-Za-z0-9\-]{10,}",
    r"AIza[0-9A-Za-z_\-]{35}",
    r"gsk_[A-Za-z0-9]{20,}",  # Groq
    r"xai-[A-Za-z0-9]{20,}",
    r"hf_[A-Za-z0-9]{30,}",
    r"(?<=[Bb]earer )[A-Za-z0-9._~+/\-]{20,}=*",
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
)
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL", re.IGNORECASE)
_OPAQUE_FIELDS = frozenset({"thinkingSignature", "textSignature", "thoughtSignature", "signature"})

_known: set[str] = set()


def _usable(value: str) -> bool:
    value = value.strip()
    return len(value) >= MIN_SECRET and not value.isdigit() and not value.startswith(("/", "~"))


def remember(value: str | None) -> None:
    """Add a key value to the ones every redactor replaces (short or path-like values are not keys)."""
    if isinstance(value, str) and _usable(value):
        _known.add(value.strip())


def known_secrets() -> frozenset[str]:
    return frozenset(_known)


class Redactor:
    """Replaces secrets in strings, or in every string of a JSON value.

    Args:
        values: Extra key values (besides the remembered ones).
        environ: Where to find secret-named variables (default ``os.environ``).
    """

    def __init__(self, values: Iterable[str] = (), environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        found = {v.strip() for v in values if isinstance(v, str) and _usable(v)} | _known
        found |= {v for k, v in env.items() if _SECRET_NAME.search(k) and _usable(v)}
        ordered = sorted(found, key=len, reverse=True)
        alternatives = [*(re.escape(v) for v in ordered), *_PATTERNS]
        self._pattern = re.compile("|".join(f"(?:{a})" for a in alternatives))

    def text(self, value: str) -> str:
        return self._pattern.sub(REDACTED, value) if value else value

    @overload
    def value(self, value: JsonObject) -> JsonObject: ...
    @overload
    def value(self, value: JsonValue) -> JsonValue: ...
    def value(self, value: JsonValue) -> JsonValue:
        """A copy of the JSON value ``value`` with its strings redacted (image ``data`` and
        provider signatures kept)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(item) for item in value]
        if isinstance(value, dict):
            image = value.get("type") == "image"
            return {
                k: (v if (image and k == "data") or k in _OPAQUE_FIELDS else self.value(v)) for k, v in value.items()
            }
        return value


_cache: tuple[tuple[int, int], Redactor] | None = None


def current() -> Redactor:
    """A redactor with every key known now (rebuilt when a new key was remembered)."""
    global _cache
    stamp = (len(_known), len(os.environ))
    if _cache is None or _cache[0] != stamp:
        _cache = (stamp, Redactor())
    return _cache[1]


def redact(text: str) -> str:
    """``text`` with every known secret replaced by ``[redacted]``."""
    return current().text(text)
