"""Claude Code's command hooks (``.claude/settings.json`` and ``[hooks]`` in settings.toml), run as-is on the extension events."""
