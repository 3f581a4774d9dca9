"""The environment of the agent's shell commands: no secrets, plus the agent markers.

A model that runs ``env`` or ``printenv`` would put every key of pi's environment into the
transcript and the provider's logs, so the bash tool and the user's ``!`` commands get pi's
environment without:

- every provider key variable pi knows (``ANTHROPIC_API_KEY``, ``HF_TOKEN``, ... and the
  ``$NAME`` variables models.toml refers to, passed in as ``secret_names``);
- any variable whose name looks like a credential (``SECRET_NAME``: ``*_API_KEY``,
  ``*_TOKEN*``, ``*_SECRET*``, ``*_PASSWORD``, ``*_ACCESS_KEY``, ...),

unless the name is in the ``bash.env_allow`` setting (exact names or ``fnmatch`` patterns).
Then the markers are added (``AI_AGENT=pi``, ``PI_CODING_AGENT=true`` and the session's
``PI_SESSION_ID``, ``PI_MODEL``, ...), which always win over inherited values.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping

from pi_coder.ai.keys import ENV_API_KEYS

__all__ = ["AGENT_MARKERS", "SECRET_NAME", "is_secret_name", "safe_environment"]

SECRET_NAME = re.compile(
    r"(?:^|_)(?:API_?KEYS?|TOKENS?|SECRETS?)(?:_|$)"  # a word anywhere: OPENAI_API_KEY, AWS_SESSION_TOKEN
    r"|(?:^|_)(?:PASSWORD|PASSWD|PASSPHRASE|ACCESS_KEY|PRIVATE_KEY|CREDENTIALS?)$",  # a suffix
    re.IGNORECASE,
)
"""Names treated as secrets whatever their provider (``GITHUB_TOKEN``, ``AWS_SECRET_ACCESS_KEY``)."""

AGENT_MARKERS: Mapping[str, str] = {"AI_AGENT": "pi", "PI_CODING_AGENT": "true"}
"""Set for every command, as Pi 1.6 does, so scripts can tell they run under an agent."""

_PROVIDER_KEY_NAMES = frozenset(name for names in ENV_API_KEYS.values() for name in names)


def is_secret_name(name: str, secret_names: Iterable[str] = ()) -> bool:
    """Whether the variable ``name`` is kept out of command environments (before the allow-list)."""
    return name in _PROVIDER_KEY_NAMES or name in secret_names or SECRET_NAME.search(name) is not None


def safe_environment(
    base: Mapping[str, str],
    *,
    allow: Iterable[str] = (),
    secret_names: Iterable[str] = (),
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """``base`` without secrets, plus ``AGENT_MARKERS`` and ``extra``.

    Args:
        base: The environment to start from (usually ``os.environ``).
        allow: Names (or ``fnmatch`` patterns) passed through even though they look secret.
        secret_names: More variables to drop (e.g. those models.toml reads keys from).
        extra: Variables to set (the session markers); they override ``base``.

    Returns:
        A new dictionary.
    """
    patterns = tuple(allow)
    known = frozenset(secret_names)
    env = {
        name: value
        for name, value in base.items()
        if not is_secret_name(name, known) or any(fnmatch.fnmatchcase(name, p) for p in patterns)
    }
    env.update(AGENT_MARKERS)
    if extra:
        env.update(extra)
    return env
