"""Settings: defaults, global/project merge, warnings for bad files, comment-preserving writes."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from pydantic import BaseModel

from pi_coder.errors import ConfigError
from pi_coder.settings import (
    Settings,
    load_settings,
    save_global_setting,
    update_global_settings,
)

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("PI_CODER_HOME", str(home))
    return home


@pytest.fixture
def project(tmp_path: Path) -> Path:
    proj = tmp_path / "proj"
    proj.mkdir()
    return proj


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_without_files(home: Path, project: Path) -> None:
    """No files: defaults, no warnings."""
    loaded = load_settings(project)
    s = loaded.settings
    assert loaded.warnings == [] and loaded.unknown_keys == []
    assert s.default_thinking_level == "medium"
    assert s.theme == "dark"
    assert s.steering_mode == "one-at-a-time" and s.follow_up_mode == "one-at-a-time"
    assert s.compaction.enabled and s.compaction.reserve_tokens == 16384
    assert s.compaction.keep_recent_tokens == 20000
    assert (s.retry.max_retries, s.retry.base_delay_ms, s.retry.max_delay_ms) == (3, 2000, 60000)
    assert (s.bash.default_timeout, s.bash.max_timeout) == (120, 600)
    assert s.double_escape_action == "tree"
    assert s.default_model is None and s.enabled_models == []
    assert s.thinking_budgets.medium == 8192


def test_project_overrides_global_one_level_deep(home: Path, project: Path) -> None:
    """Tables merge key by key; scalars and arrays are replaced."""
    write(
        home / "settings.toml",
        'theme = "light"\ndefault_model = "g-model"\nenabled_models = ["a/*", "b/*"]\n'
        "[compaction]\nenabled = false\nreserve_tokens = 1000\n"
        '[keybindings]\nexit = "ctrl+q"\nfollow_up = ["alt+enter"]\n',
    )
    write(
        project / ".pi" / "settings.toml",
        'theme = "mine"\nenabled_models = ["c/*"]\n[compaction]\nreserve_tokens = 2000\n'
        '[keybindings]\nexit = "ctrl+x"\n',
    )
    s = load_settings(project).settings
    assert s.theme == "mine"
    assert s.default_model == "g-model"
    assert s.enabled_models == ["c/*"]
    assert s.compaction.enabled is False  # from global, kept by the deep merge
    assert s.compaction.reserve_tokens == 2000
    assert s.compaction.keep_recent_tokens == 20000
    assert s.keybindings == {"exit": "ctrl+x", "follow_up": ["alt+enter"]}


def test_toml_syntax_error_warns_with_file_and_line_and_ignores_scope(home: Path, project: Path) -> None:
    """A TOML error names the file and line; that file is ignored, the other still applies."""
    write(home / "settings.toml", 'theme = "light"\n')
    bad = write(project / ".pi" / "settings.toml", 'default_model = "x"\n\nquiet_startup = = true\n')
    loaded = load_settings(project)
    assert len(loaded.warnings) == 1
    warning = loaded.warnings[0]
    assert str(bad) in warning and "line 3" in warning
    assert loaded.settings.theme == "light"
    assert loaded.settings.default_model is None


def test_wrong_type_names_file_line_and_key(home: Path, project: Path) -> None:
    """A value of the wrong type warns (file, line, key) and that key falls back to its default."""
    path = write(
        home / "settings.toml",
        'default_model = "kept"\n\n[compaction]\nenabled = false\nreserve_tokens = "lots"\n',
    )
    loaded = load_settings(project)
    assert len(loaded.warnings) == 1
    warning = loaded.warnings[0]
    assert str(path) in warning
    assert "compaction.reserve_tokens" in warning and "line 5" in warning
    s = loaded.settings
    assert s.compaction.reserve_tokens == 16384
    assert s.compaction.enabled is False
    assert s.default_model == "kept"


def test_wrong_type_of_table_and_enum_value(home: Path, project: Path) -> None:
    """A scalar where a table belongs, and a value outside an enum, are both reported."""
    write(home / "settings.toml", 'compaction = true\ndouble_escape_action = "explode"\ntheme = "light"\n')
    loaded = load_settings(project)
    (warning,) = loaded.warnings
    assert "compaction" in warning and "line 1" in warning
    assert "double_escape_action" in warning and "line 2" in warning
    assert loaded.settings.compaction.enabled is True
    assert loaded.settings.double_escape_action == "tree"
    assert loaded.settings.theme == "light"


def test_out_of_range_value_falls_back(home: Path, project: Path) -> None:
    write(project / ".pi" / "settings.toml", "editor_padding_x = 9\n")
    loaded = load_settings(project)
    assert loaded.settings.editor_padding_x == 0
    assert "editor_padding_x" in loaded.warnings[0]


def test_unknown_keys_are_kept_and_reported(home: Path, project: Path) -> None:
    write(home / "settings.toml", 'defaultModel = "camel"\n[compaction]\nfoo = 1\n')
    loaded = load_settings(project)
    assert loaded.warnings == []
    assert any(k.endswith(": defaultModel") for k in loaded.unknown_keys)
    assert any(k.endswith(": compaction.foo") for k in loaded.unknown_keys)
    assert loaded.settings.model_extra == {"defaultModel": "camel"}


def test_resource_paths_resolve_against_settings_folder(home: Path, project: Path) -> None:
    write(home / "settings.toml", 'prompts = ["my-prompts"]\n')
    write(project / ".pi" / "settings.toml", 'themes = ["t"]\n')
    s = load_settings(project).settings
    assert s.prompts == [str(home / "my-prompts")]
    assert s.themes == [str(project / ".pi" / "t")]


def test_save_keeps_comments_and_layout(home: Path, project: Path) -> None:
    """Writing a key keeps the user's comments, order and other keys."""
    original = (
        "# my settings\n"
        'theme = "dark"   # I like dark\n'
        "\n"
        "[compaction]\n"
        "# keep lots\n"
        "keep_recent_tokens = 30000\n"
    )
    path = write(home / "settings.toml", original)
    loaded = load_settings(project)
    loaded.save_global_setting("theme", "light")
    loaded.save_global_setting("compaction.enabled", False)
    loaded.save_global_setting(("retry", "max_retries"), 5)
    text = path.read_text()
    assert text.startswith("# my settings\ntheme = \"light\"   # I like dark\n")
    assert "# keep lots\nkeep_recent_tokens = 30000\nenabled = false\n" in text
    assert "[retry]\nmax_retries = 5\n" in text
    data = tomllib.loads(text)
    assert data["compaction"] == {"keep_recent_tokens": 30000, "enabled": False}
    # In memory, and the same Settings object.
    s = loaded.settings
    assert s.theme == "light" and s.compaction.enabled is False and s.retry.max_retries == 5
    assert s.compaction.keep_recent_tokens == 30000


def test_save_creates_private_file_and_folder(home: Path, project: Path) -> None:
    save_global_setting("default_model", "m1")
    path = home / "settings.toml"
    assert tomllib.loads(path.read_text()) == {"default_model": "m1"}
    if os.name == "posix":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_settings(project).settings.default_model == "m1"


def test_in_memory_update_keeps_project_override(home: Path, project: Path) -> None:
    """The global write lands in the file; the effective value still follows the project scope."""
    write(project / ".pi" / "settings.toml", 'theme = "proj"\n')
    loaded = load_settings(project)
    held = loaded.settings
    update_global_settings({"theme": "light", "default_provider": "openai"}, loaded)
    assert held is loaded.settings
    assert held.theme == "proj" and held.default_provider == "openai"
    assert tomllib.loads((home / "settings.toml").read_text())["theme"] == "light"


def test_save_none_removes_key(home: Path, project: Path) -> None:
    write(home / "settings.toml", 'default_model = "x"\ntheme = "light"\n')
    loaded = load_settings(project)
    loaded.save_global_setting("default_model", None)
    assert tomllib.loads((home / "settings.toml").read_text()) == {"theme": "light"}
    assert loaded.settings.default_model is None


def test_save_rejects_invalid_value_and_leaves_file(home: Path, project: Path) -> None:
    path = write(home / "settings.toml", 'theme = "light"\n')
    loaded = load_settings(project)
    with pytest.raises(ConfigError, match="steering_mode"):
        loaded.save_global_setting("steering_mode", "sometimes")
    with pytest.raises(ConfigError, match="compaction.reserve_tokens"):
        loaded.save_global_setting("compaction.reserve_tokens", "many")
    assert path.read_text() == 'theme = "light"\n'
    assert loaded.settings.steering_mode == "one-at-a-time"


def test_save_refuses_to_clobber_broken_file(home: Path, project: Path) -> None:
    path = write(home / "settings.toml", "theme = = \n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        save_global_setting("theme", "light")
    assert path.read_text() == "theme = = \n"


def test_save_follows_symlink(home: Path, tmp_path: Path) -> None:
    """A settings.toml symlinked from a dotfiles repo stays a symlink."""
    real = write(tmp_path / "dotfiles" / "pi.toml", "# dotfiles\n")
    home.mkdir()
    (home / "settings.toml").symlink_to(real)
    save_global_setting("theme", "light")
    assert (home / "settings.toml").is_symlink()
    assert real.read_text() == '# dotfiles\ntheme = "light"\n'


def _all_fields(model: type[BaseModel], prefix: str = "") -> list[tuple[str, str, object]]:
    out = []
    for name, info in model.model_fields.items():
        ann = info.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            out.extend(_all_fields(ann, f"{prefix}{name}."))
        else:
            out.append((prefix, name, info))
    return out


def test_example_file_documents_every_key() -> None:
    """settings.example.toml names every field (and sub-field) of Settings, each after a comment."""
    text = (REPO / "settings.example.toml").read_text()
    lines = text.splitlines()
    starts = {"": 0}
    for i, line in enumerate(lines):
        if m := re.match(r"^\[([\w.]+)\]$", line):
            starts[m.group(1) + "."] = i
    bounds = sorted(starts.values()) + [len(lines)]
    for prefix, name, _info in _all_fields(Settings):
        if name == "keybindings":  # a free-form table: documented by its header and examples
            assert "keybindings." in starts
            continue
        start = starts.get(prefix)
        assert start is not None, f"table [{prefix[:-1]}] missing from settings.example.toml"
        end = next(b for b in bounds if b > start)
        pattern = re.compile(rf"^(# )?{name} = ")
        hits = [i for i in range(start, end) if pattern.match(lines[i])]
        assert hits, f"{prefix}{name} missing from settings.example.toml"
        above = lines[hits[0] - 1]
        assert above.startswith("#") or re.match(r"^\w+ = ", above), f"{prefix}{name} has no comment"


def test_example_file_parses_to_defaults() -> None:
    data = tomllib.loads((REPO / "settings.example.toml").read_text())
    assert Settings.model_validate(data) == Settings()
    assert Settings.model_validate(data).model_extra == {}


def test_import_does_no_io_and_loading_is_fast(tmp_path: Path) -> None:
    """Importing pi_coder.settings reads no TOML module; load_settings is quick."""
    code = (
        "import sys, time\n"
        "import pi_coder.settings as s\n"
        "assert 'tomllib' not in sys.modules and 'tomlkit' not in sys.modules\n"
        "s.load_settings(sys.argv[1])\n"  # the first load imports pydantic and the schema
        "t = time.process_time(); s.load_settings(sys.argv[1]); print(time.process_time() - t)\n"
    )
    write(tmp_path / "home" / "settings.toml", 'theme = "light"\n[compaction]\nenabled = false\n')
    env = {**os.environ, "PI_CODER_HOME": str(tmp_path / "home")}
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, env=env, check=True
    )
    # CPU time of a load once imported: typically ~6 ms; wall time failed on a loaded machine.
    assert float(out.stdout) < 0.5


def test_settings_that_do_nothing_are_not_offered() -> None:
    """``collapse_changelog`` and ``terminal.show_images`` had no effect: they are not settings (issue 14)."""
    from pi_coder.settings import Settings, TerminalSettings

    assert "collapse_changelog" not in Settings.model_fields
    assert "show_images" not in TerminalSettings.model_fields
    text = (REPO / "settings.example.toml").read_text()
    assert "collapse_changelog" not in text and "show_images" not in text
