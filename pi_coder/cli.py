"""The ``pi`` command. Only the standard library is imported at module level; modes load lazily."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in ("--version", "-v"):
        from pi_coder import __version__

        print(__version__)
        return
    print("pi: not implemented yet", file=sys.stderr)
    raise SystemExit(1)
