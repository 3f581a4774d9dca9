"""First-party extensions (extensions §8), off by default: ``pi -e builtin:<name>``."""
