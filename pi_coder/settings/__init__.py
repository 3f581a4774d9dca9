"""User settings: the ``Settings`` model (``schema.py``), loading and merging the global and
project scopes (``load.py``) and comment-preserving writes (``write.py``).

Two scopes: global ``config_dir()/settings.toml`` and project ``<cwd>/.pi/settings.toml``; see
``load.py`` for how they merge and what an untrusted project may set. Nothing here does I/O at
import time; tomllib and tomlkit are imported on use.
"""

from __future__ import annotations

from pi_coder.settings.load import (
    LoadedSettings,
    gated_project_keys,
    global_settings_path,
    load_settings,
    project_settings_path,
    save_global_setting,
    update_global_settings,
)
from pi_coder.settings.schema import (
    PROJECT_SAFE_KEYS,
    BashSettings,
    BranchSummarySettings,
    CheckpointSettings,
    CompactionSettings,
    ImageSettings,
    MarkdownSettings,
    McpSettings,
    PermissionSettings,
    ProviderRetrySettings,
    QueueMode,
    RetrySettings,
    SandboxSettings,
    Settings,
    SubagentSettings,
    TerminalSettings,
    ThinkingBudgets,
    TrustDefault,
)
from pi_coder.settings.write import folder_lock, update_settings_file

__all__ = [
    "PROJECT_SAFE_KEYS",
    "BashSettings",
    "BranchSummarySettings",
    "CheckpointSettings",
    "CompactionSettings",
    "ImageSettings",
    "LoadedSettings",
    "MarkdownSettings",
    "McpSettings",
    "PermissionSettings",
    "ProviderRetrySettings",
    "QueueMode",
    "RetrySettings",
    "SandboxSettings",
    "Settings",
    "SubagentSettings",
    "TerminalSettings",
    "ThinkingBudgets",
    "TrustDefault",
    "folder_lock",
    "gated_project_keys",
    "global_settings_path",
    "load_settings",
    "project_settings_path",
    "save_global_setting",
    "update_global_settings",
    "update_settings_file",
]
