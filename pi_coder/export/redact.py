"""Secrets kept out of an exported page: the one redactor of ``pi_coder.ai.secrets``.

A session can hold a key the model printed (``env``, ``cat .env``) or one the user pasted. The
page replaces every configured key value (whatever its shape), every value that looks like a key,
and every value of an environment variable whose name says it is a secret with ``[redacted]``.
Image data is left alone.
"""

from __future__ import annotations

from pi_coder.ai.secrets import REDACTED, Redactor

__all__ = ["REDACTED", "Redactor"]
