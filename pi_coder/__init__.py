"""pi_coder: a terminal coding agent. Nothing is imported here; see the subpackages."""

from __future__ import annotations

__all__ = ["__version__"]


def __getattr__(name: str) -> str:  # no typing import: it costs ~10 ms of `pi --version`
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("pi-coder")
        except PackageNotFoundError:  # running from a source tree
            return "0.0.0+unknown"
    raise AttributeError(name)
