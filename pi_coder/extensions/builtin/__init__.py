"""First-party extensions (docs/extensions-runtime.md#first-party-extensions), off by default: ``pi -e builtin:<name>``."""
