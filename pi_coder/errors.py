"""The error tree of pi_coder.

::

    PiError                      root of every error this product raises on purpose
    ├── UserError                a user mistake: printed as one line, exit code 1, no traceback
    │   ├── ConfigError          invalid settings.toml / models.toml
    │   ├── ModelNotFoundError   --model matched nothing
    │   ├── MissingApiKeyError   no key for the chosen provider
    │   └── SessionNotFoundError --session/-c/-r found nothing
    ├── ToolError                raised by a tool; becomes an error tool result for the model
    └── ProviderError            (pi_coder.ai.errors) failures talking to a model API

Providers never raise for request failures: they encode them in the stream.
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "MissingApiKeyError",
    "ModelNotFoundError",
    "PiError",
    "SessionNotFoundError",
    "ToolError",
    "UserError",
]


class PiError(Exception):
    """Root of pi_coder's errors."""


class UserError(PiError):
    """A mistake the user can fix; shown as one line without a traceback."""


class ConfigError(UserError):
    pass


class ModelNotFoundError(UserError):
    pass


class MissingApiKeyError(UserError):
    pass


class SessionNotFoundError(UserError):
    pass


class ToolError(PiError):
    """A tool failure whose message is shown to the model as an error result."""
