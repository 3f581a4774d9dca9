"""Start-up of the hooks: read the configuration and hand ``builtin:hooks`` its engine."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_coder.ai.models import Models
    from pi_coder.settings import LoadedSettings

__all__ = ["HOOKS_SPEC", "configure_hooks"]

HOOKS_SPEC = "builtin:hooks"


def configure_hooks(
    no_hooks: bool, loaded: LoadedSettings, cwd: str, models: Models, *, trusted: bool, notices: list[str]
) -> bool:
    """Read the hooks (none with ``--no-hooks`` or ``disable_all_hooks``); True when some are
    configured and ``builtin:hooks`` must be loaded. Problems in the files go to ``notices``."""
    import sys

    if "pi_coder.hooks.handlers" in sys.modules:  # a second start-up in one process (tests)
        sys.modules["pi_coder.hooks.handlers"].configure(None)
    settings = loaded.settings
    if no_hooks or settings.disable_all_hooks:
        return False
    from pi_coder.hooks.config import load_hook_config

    config = load_hook_config(
        cwd,
        global_settings=loaded.global_data,
        project_settings=loaded.project_data,
        trusted=trusted,
        claude_files=settings.claude_hooks,
    )
    notices.extend(w for w in config.warnings if w not in notices)
    if not config.hooks:
        return False
    from pi_coder.core.shell_env import secret_env_names
    from pi_coder.hooks.engine import HookEngine
    from pi_coder.hooks.handlers import configure

    engine = HookEngine(config, cwd, env_allow=settings.bash.env_allow, secret_names=secret_env_names(models))
    configure(engine)
    return True
