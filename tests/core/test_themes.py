"""Theme files: built-ins, user/project overrides, var resolution, validation errors."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_coder.resources.themes import (
    TOKENS,
    ThemeError,
    builtin_themes_dir,
    color_to_hex,
    color_to_rich,
    detect_theme_name,
    list_themes,
    load_theme,
    load_theme_file,
    load_theme_or_default,
)

REPO = Path(__file__).resolve().parents[2]

SPEC_TOKENS = """
accent border borderAccent borderMuted success error warning muted dim text thinkingText
selectedBg userMessageBg userMessageText customMessageBg customMessageText customMessageLabel
toolPendingBg toolSuccessBg toolErrorBg toolTitle toolOutput
mdHeading mdLink mdLinkUrl mdCode mdCodeBlock mdCodeBlockBorder mdQuote mdQuoteBorder mdHr mdListBullet
toolDiffAdded toolDiffRemoved toolDiffContext
syntaxComment syntaxKeyword syntaxFunction syntaxVariable syntaxString syntaxNumber syntaxType
syntaxOperator syntaxPunctuation
thinkingOff thinkingMinimal thinkingLow thinkingMedium thinkingHigh thinkingXhigh
bashMode
""".split()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / "themes").mkdir(parents=True)
    monkeypatch.setenv("PI_CODER_HOME", str(home))
    return home


def theme_data(name: str, **overrides: Any) -> dict[str, Any]:
    colors: dict[str, Any] = {token: "#102030" for token in TOKENS}
    colors.update(overrides)
    return {"name": name, "vars": {}, "colors": colors}


def write_theme(path: Path, data: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def test_token_list_matches_spec() -> None:
    assert len(TOKENS) == 51 and len(set(TOKENS)) == 51
    assert list(TOKENS) == SPEC_TOKENS


@pytest.mark.parametrize("name", ["dark", "light"])
def test_builtin_themes_load_with_all_tokens(home: Path, name: str) -> None:
    theme = load_theme(name)
    assert theme.name == name and theme.source == "builtin"
    assert set(theme.colors) == set(TOKENS)
    for token in TOKENS:
        value = theme.colors[token]
        assert value == "" or (isinstance(value, str) and value.startswith("#") and len(value) == 7), token
    assert theme.path == builtin_themes_dir() / f"{name}.json"
    assert set(theme.export) == {"pageBg", "cardBg", "infoBg"}
    assert theme.mtime is not None and not theme.changed_on_disk()


def test_builtin_dark_and_light_differ(home: Path) -> None:
    dark, light = load_theme("dark"), load_theme("light")
    assert dark.colors["userMessageBg"] != light.colors["userMessageBg"]


def test_builtin_dir_in_source_checkout_is_repo_themes() -> None:
    assert builtin_themes_dir() == REPO / "themes"


def test_builtin_dir_in_installed_layout(tmp_path: Path) -> None:
    """Installed as a wheel, the themes live in pi_coder/_themes (pyproject force-include)."""
    site = tmp_path / "site"
    shutil.copytree(REPO / "pi_coder", site / "pi_coder", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "themes", site / "pi_coder" / "_themes")
    code = "from pi_coder.resources.themes import load_theme; t = load_theme('light'); print(t.path)"
    env = {**os.environ, "PYTHONPATH": str(site), "PI_CODER_HOME": str(tmp_path / "home")}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True, cwd=tmp_path
    )
    assert out.stdout.strip() == str(site / "pi_coder" / "_themes" / "light.json")


def test_user_theme_overrides_builtin_by_name_and_project_wins(home: Path, tmp_path: Path) -> None:
    write_theme(home / "themes" / "dark.json", theme_data("dark", accent="#ff0000"))
    assert load_theme("dark").colors["accent"] == "#ff0000"
    assert load_theme("dark").source == "user"

    proj = tmp_path / "proj"
    write_theme(proj / ".pi" / "themes" / "whatever.json", theme_data("dark", accent="#00ff00"))
    theme = load_theme("dark", proj)
    assert theme.colors["accent"] == "#00ff00" and theme.source == "project"
    assert load_theme("light", proj).source == "builtin"


def test_list_themes(home: Path, tmp_path: Path) -> None:
    write_theme(home / "themes" / "ocean.json", theme_data("ocean"))
    (home / "themes" / "broken.json").write_text("{nope")
    (home / "themes" / "readme.txt").write_text("ignored")
    extra = write_theme(tmp_path / "elsewhere" / "x.json", theme_data("forest"))
    infos = list_themes(tmp_path, extra_paths=[extra])
    assert [(i.name, i.source) for i in infos] == [
        ("broken", "user"),
        ("dark", "builtin"),
        ("forest", "path"),
        ("light", "builtin"),
        ("ocean", "user"),
        ("system", "builtin"),
    ]


def test_no_discovery_leaves_builtins_and_given_paths(home: Path, tmp_path: Path) -> None:
    """``--no-themes``: neither the config folder's nor the project's ``.pi/themes`` themes."""
    write_theme(home / "themes" / "ocean.json", theme_data("ocean"))
    write_theme(tmp_path / ".pi" / "themes" / "mine.json", theme_data("mine"))
    extra = write_theme(tmp_path / "elsewhere" / "x.json", theme_data("forest"))
    assert {i.name for i in list_themes(tmp_path)} == {"dark", "light", "ocean", "mine", "system"}
    infos = list_themes(tmp_path, extra_paths=[extra], discover=False)
    assert [(i.name, i.source) for i in infos] == [
        ("dark", "builtin"), ("forest", "path"), ("light", "builtin"), ("system", "builtin"),
    ]  # fmt: skip
    with pytest.raises(ThemeError, match="'ocean' not found"):
        load_theme("ocean", tmp_path, discover=False)
    assert load_theme("forest", tmp_path, extra_paths=[extra], discover=False).name == "forest"
    theme, warning = load_theme_or_default("mine", tmp_path, discover=False)
    assert theme.name == "dark" and warning is not None and "'mine' not found" in warning


def test_vars_ints_and_default_resolve(home: Path) -> None:
    data = theme_data("v", accent="brand", border="alias", dim=244, text="")
    data["vars"] = {"brand": "#AABBCC", "alias": "brand", "grey": 8}
    data["export"] = {"pageBg": "grey"}
    theme = load_theme_file(write_theme(home / "themes" / "v.json", data))
    assert theme.colors["accent"] == "#AABBCC" and theme.hex("accent") == "#aabbcc"
    assert theme.colors["border"] == "#AABBCC"
    assert theme.colors["dim"] == 244 and theme.hex("dim") == "#808080" and theme.rich("dim") == "color(244)"
    assert theme.hex("text") is None and theme.rich("text") == "default"
    assert theme.export == {"pageBg": 8}


def test_load_by_path_and_auto(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_theme(tmp_path / "mine.json", theme_data("mine"))
    assert load_theme(str(path)).name == "mine"
    monkeypatch.setenv("COLORFGBG", "0;15")
    assert load_theme("auto").name == "light"
    monkeypatch.setenv("COLORFGBG", "15;default;0")
    assert load_theme("auto").name == "dark"


@pytest.mark.parametrize(
    ("value", "expected"),
    [("0;15", "light"), ("0;7", "light"), ("15;0", "dark"), ("", "dark"), ("12;default", "dark"), ("0;231", "light"), ("0;8", "dark"), ("0;999", "dark")],
)
def test_detect_theme_name(value: str, expected: str) -> None:
    assert detect_theme_name({"COLORFGBG": value}) == expected


def test_missing_tokens_named(home: Path) -> None:
    data = theme_data("partial")
    del data["colors"]["mdHr"], data["colors"]["bashMode"]
    path = write_theme(home / "themes" / "partial.json", data)
    with pytest.raises(ThemeError) as info:
        load_theme("partial")
    message = str(info.value)
    assert str(path) in message and "mdHr" in message and "bashMode" in message


@pytest.mark.parametrize(
    ("colors", "vars", "fragments"),
    [
        ({"accent": "#12345"}, {}, ["colors.accent", "#12345"]),
        ({"error": "nosuchvar"}, {}, ["colors.error", "nosuchvar"]),
        ({"dim": 300}, {}, ["colors.dim", "0-255"]),
        ({"muted": True}, {}, ["colors.muted"]),
        ({"accent": "a"}, {"a": "b", "b": "a"}, ["circular", "a -> b -> a"]),
        ({"accent": "a"}, {"a": "red"}, ["vars.a", "red"]),
    ],
)
def test_invalid_values_name_file_and_token(
    home: Path, colors: dict[str, Any], vars: dict[str, Any], fragments: list[str]
) -> None:
    data = theme_data("bad", **colors)
    data["vars"] = vars
    path = write_theme(home / "themes" / "bad.json", data)
    with pytest.raises(ThemeError) as info:
        load_theme_file(path)
    message = str(info.value)
    assert str(path) in message
    for fragment in fragments:
        assert fragment in message


def test_structural_errors(home: Path) -> None:
    bad_json = home / "themes" / "j.json"
    bad_json.write_text('{"name": "j",')
    with pytest.raises(ThemeError, match="invalid JSON"):
        load_theme_file(bad_json)
    no_colors = write_theme(home / "themes" / "n.json", {"name": "n"})
    with pytest.raises(ThemeError, match='"colors" must be an object'):
        load_theme_file(no_colors)
    no_name = write_theme(home / "themes" / "x.json", {**theme_data("x"), "name": ""})
    with pytest.raises(ThemeError, match='"name"'):
        load_theme_file(no_name)


def test_unknown_theme_and_fallback(home: Path) -> None:
    with pytest.raises(ThemeError, match="'nope' not found.*dark, light"):
        load_theme("nope")
    theme, warning = load_theme_or_default("nope")
    assert theme.name == "dark" and warning is not None and "nope" in warning
    theme, warning = load_theme_or_default("light")
    assert theme.name == "light" and warning is None


def test_changed_on_disk(home: Path) -> None:
    path = write_theme(home / "themes" / "live.json", theme_data("live"))
    theme = load_theme("live")
    assert not theme.changed_on_disk()
    os.utime(path, (theme.mtime + 5, theme.mtime + 5))  # type: ignore[operator]
    assert theme.changed_on_disk()
    assert load_theme("live").mtime == pytest.approx(theme.mtime + 5)  # type: ignore[operator]
    path.unlink()
    assert theme.changed_on_disk()


def test_color_conversions() -> None:
    assert color_to_hex(0) == "#000000" and color_to_hex(15) == "#ffffff"
    assert color_to_hex(16) == "#000000" and color_to_hex(21) == "#0000ff" and color_to_hex(231) == "#ffffff"
    assert color_to_hex(232) == "#080808" and color_to_hex(255) == "#eeeeee"
    assert color_to_hex("#ABCDEF") == "#abcdef" and color_to_hex("") is None
    assert color_to_rich(5) == "color(5)" and color_to_rich("") == "default"
