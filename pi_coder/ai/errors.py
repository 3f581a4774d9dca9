"""Provider errors and the classifiers the product uses on failed assistant messages.

Providers never raise to their callers: internally they raise the
``ProviderError`` family below, and the stream turns the exception into an ``error`` event
whose message carries ``errorMessage``. What the rest of the product sees is that text, so
:func:`is_context_overflow` and :func:`is_retryable_error` classify messages, not exceptions::

    PiError
    └── ProviderError                 any failure talking to a model API
        ├── ProviderStatusError       the API answered with an HTTP error status
        │   ├── AuthError             401/403: the key was rejected
        │   ├── RateLimitError        429
        │   ├── OverloadedError       529 and 503 "overloaded"
        │   └── ContextOverflowError  the request does not fit the context window
        ├── ProviderConnectionError   could not connect, or the connection broke
        │   └── ProviderTimeoutError  connect timeout or no data for too long
        └── ProviderResponseError     the stream ended badly (bad stop reason, API error event)
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pi_coder.errors import PiError

if TYPE_CHECKING:
    from pi_coder.ai.types import AssistantMessage

__all__ = [
    "AuthError",
    "ContextOverflowError",
    "OverloadedError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderResponseError",
    "ProviderStatusError",
    "ProviderTimeoutError",
    "RateLimitError",
    "is_context_overflow",
    "is_overflow_text",
    "is_retryable_error",
    "is_retryable_text",
]


class ProviderError(PiError):
    """A failure talking to a model API; ``str(error)`` is the user-facing message."""


class ProviderStatusError(ProviderError):
    """The API answered with an HTTP error status.

    Attributes:
        status: The HTTP status code.
        request_id: The provider's request id header, when present.
        retry_after_s: The delay the server asked for (``retry-after`` / ``retry-after-ms``).
    """

    def __init__(
        self,
        message: str,
        *,
        status: int,
        request_id: str | None = None,
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.request_id = request_id
        self.retry_after_s = retry_after_s


class AuthError(ProviderStatusError):
    """401/403: the API key was missing or rejected."""


class RateLimitError(ProviderStatusError):
    """429 Too Many Requests."""


class OverloadedError(ProviderStatusError):
    """The provider is overloaded (Anthropic 529)."""


class ContextOverflowError(ProviderStatusError):
    """The prompt does not fit the model's context window."""


class ProviderConnectionError(ProviderError):
    """Could not connect, or the connection broke before the response was complete."""


class ProviderTimeoutError(ProviderConnectionError):
    """Connecting took too long, or the server sent nothing for too long."""


class ProviderResponseError(ProviderError):
    """The response stream ended badly: an error event, a refusal, an unknown stop reason."""


# Provider wordings for "the prompt is larger than the context window".
_OVERFLOW = re.compile(
    "|".join(
        [
            r"prompt is too long",  # Anthropic
            r"prompt too long",  # Ollama
            r"input is too long for requested model",  # Bedrock
            r"exceeds the context window",  # OpenAI
            r"input token count.*exceeds the maximum",  # Gemini
            r"maximum prompt length is \d+",  # xAI
            r"reduce the length of the messages",  # Groq
            r"maximum context length",  # OpenAI-compatible servers, OpenRouter
            r"exceeds the limit of \d+",  # GitHub Copilot
            r"exceeds the available context size",  # llama.cpp
            r"greater than the context length",  # LM Studio
            r"context window exceeds limit",  # MiniMax
            r"exceeded model token limit",  # Kimi
            r"context[_ ]length[_ ]exceeded",
            r"too many tokens",
            r"token limit exceeded",
        ]
    ),
    re.IGNORECASE,
)
# Cerebras answers an oversized prompt with a bare 400/413 and no body.
_OVERFLOW_NO_BODY = re.compile(r"^4(?:00|13)\s*(?:status code)?\s*\(no body\)", re.IGNORECASE)

_RETRYABLE = re.compile(
    r"overloaded|rate.?limit|too many requests|\b429\b|\b500\b|\b502\b|\b503\b|\b504\b|\b529\b"
    r"|service.?unavailable|server.?error|internal.?error|connection.?error|connection.?refused"
    r"|other side closed|fetch failed|upstream.?connect|reset before headers|terminated|retry delay"
    r"|timed out",
    re.IGNORECASE,
)


def is_overflow_text(error_message: str) -> bool:
    """Whether a provider's error text says the prompt overflowed the context window."""
    return bool(_OVERFLOW.search(error_message) or _OVERFLOW_NO_BODY.search(error_message.strip()))


def is_retryable_text(error_message: str) -> bool:
    """Whether a provider's error text is a transient failure worth retrying (see ``is_retryable_error``)."""
    if is_overflow_text(error_message) or _PROVIDER_RETRIED.search(error_message):
        return False
    return _RETRYABLE.search(error_message) is not None


def is_context_overflow(message: AssistantMessage, context_window: int | None = None) -> bool:
    """Whether an assistant message shows that the prompt overflowed the context window.

    True for an ``error`` message whose ``errorMessage`` matches a known provider wording
    ("prompt is too long", "exceeds the context window", "maximum context length",
    "context_length_exceeded", "too many tokens", ...), and for a silent overflow: a
    successful message whose ``usage.input + usage.cacheRead`` exceeds ``context_window``.

    Args:
        message: The assistant message.
        context_window: The model's context window, to detect silent overflow.

    Returns:
        True when the message is an overflow.
    """
    if message.stop_reason == "error" and message.error_message and is_overflow_text(message.error_message):
        return True
    if context_window and message.stop_reason == "stop":
        usage = message.usage
        return usage.input + usage.cache_read > context_window
    return False


def is_retryable_error(message: AssistantMessage) -> bool:
    """Whether a failed assistant message is worth retrying.

    True for an ``error`` message mentioning overload, rate limits, 429/5xx statuses,
    connection failures or a request timeout (as Pi 1.6 does), unless it is a context overflow (that goes to compaction instead), or
    unless the provider already retried it before the first byte ("... (after N retries)"):
    retrying such a failure again at the session level would multiply the two retry layers
    (a server that is down would be tried 16 times over 40 s instead of 4 times over 7 s).

    Args:
        message: The assistant message.

    Returns:
        True when an automatic retry may succeed.
    """
    if message.stop_reason != "error" or not message.error_message:
        return False
    return is_retryable_text(message.error_message)


_PROVIDER_RETRIED = re.compile(r"\(after \d+ retries\)")
