"""``pi install``/``update``/``remove``/``list`` from a local folder, a wheel in a local folder and
a bare git repository made in the test; what each package contributes loads in a real ``pi``."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tests.modes.pirun import PiHome, RpcClient
from tests.packages.support import make_git_repo, make_source, make_wheel, push_change
from tests.support.sse_server import Text, Turn


def commands(pi: PiHome, *args: str) -> dict[str, dict[str, Any]]:
    client = RpcClient(pi, "--no-session", *args)
    try:
        data = client.call({"type": "get_commands"})["data"]
    finally:
        assert client.close() == 0, client.stderr
    return {record["name"]: record for record in data["commands"]}


def assert_loaded(found: dict[str, dict[str, Any]], name: str) -> None:
    assert found[f"{name}-hello"]["source"] == "extension"
    assert found[f"{name}-prompt"]["source"] == "prompt"
    assert found[f"skill:{name}-skill"]["source"] == "skill"


def themes(pi: PiHome) -> list[str]:
    """The theme names the TUI would offer, from a session started in this process."""
    from pi_coder.cli import parse_args as parse_cli
    from pi_coder.modes.setup import prepare
    from pi_coder.resources.themes import list_themes
    from pi_coder.tui.theming import session_theme_paths

    startup = prepare(parse_cli(["--no-session", "-p", "x"]), mode="print", cwd=str(pi.project))
    return [info.name for info in list_themes(None, extra_paths=session_theme_paths(startup.session))]


def test_install_a_local_folder(pi: PiHome) -> None:
    source = make_source(pi.project.parent / "alpha-src", "alpha")
    started = time.perf_counter()
    run = pi.run("install", str(source))
    took = time.perf_counter() - started
    assert run.returncode == 0, run.stderr
    assert "Installed alpha-src 1.0.0 for you: extensions: alpha; skills: alpha-skill" in run.stdout
    print(f"pi install of a local package took {took:.2f} s")  # measured for the README (goal < 10 s)
    found = commands(pi)
    assert_loaded(found, "alpha")
    # Pi 1.6's sourceInfo: a package's resources say so, with the package folder (issue 33)
    for name in ("alpha-hello", "alpha-prompt", "skill:alpha-skill"):
        info = found[name]["sourceInfo"]
        assert {k: info[k] for k in ("source", "scope", "origin", "baseDir")} == {
            "source": str(source), "scope": "user", "origin": "package", "baseDir": str(source),
        }, (name, info)  # fmt: skip
    assert found["alpha-prompt"]["sourceInfo"]["path"].endswith("prompts/alpha-prompt.md")
    assert "alpha-theme" in themes(pi)
    listing = pi.run("list").stdout
    assert "alpha-src  1.0.0" in listing and "themes: alpha-theme" in listing
    # used in place: an edit shows without reinstalling
    (source / "src" / "pi_demo_alpha" / "prompts" / "alpha-second.md").write_text("Second.\n")
    assert "alpha-second" in commands(pi)
    removed = pi.run("remove", "alpha-src")
    assert removed.returncode == 0, removed.stderr
    assert "alpha-hello" not in commands(pi)
    assert source.is_dir()  # a local folder is never deleted


def test_install_update_remove_a_wheel_from_a_local_folder(pi: PiHome, tmp_path: Path) -> None:
    make_wheel(tmp_path / "wheels", "beta", "1.0.0")
    run = pi.run("install", "pi-demo-beta>=1")
    assert run.returncode == 0, run.stderr
    site = next((pi.home / "packages" / "user" / "venv").glob("lib/python*/site-packages"))
    assert (site / "pi_demo_beta-1.0.0.dist-info").is_dir()
    found = commands(pi)
    assert_loaded(found, "beta")
    assert found["beta-hello"]["description"] == "hello from beta 1.0.0"
    assert "beta-theme" in themes(pi)

    make_wheel(tmp_path / "wheels", "beta", "2.0.0")
    updated = pi.run("update", "pi-demo-beta")
    assert updated.returncode == 0, updated.stderr
    assert "Updated pi-demo-beta 2.0.0" in updated.stdout
    assert commands(pi)["beta-hello"]["description"] == "hello from beta 2.0.0"

    removed = pi.run("remove", "pi-demo-beta")
    assert removed.returncode == 0, removed.stderr
    assert not list(site.glob("pi_demo_beta-*"))
    assert "beta-hello" not in commands(pi)
    assert "packages" not in (pi.home / "settings.toml").read_text()


def test_install_from_a_bare_git_repository(pi: PiHome, tmp_path: Path) -> None:
    tagged = make_git_repo(tmp_path, "gamma")
    plain = make_git_repo(tmp_path, "delta", plain=True)
    assert pi.run("install", f"git:file://{tagged}@v1").returncode == 0
    run = pi.run("install", f"{plain}@main")
    assert run.returncode == 0, run.stderr
    assert "extensions: delta; skills: delta-skill; prompts: delta-prompt; themes: delta-theme" in run.stdout
    found = commands(pi)
    assert_loaded(found, "gamma")
    assert_loaded(found, "delta")
    assert {"gamma-theme", "delta-theme"} <= set(themes(pi))

    push_change(tmp_path, "gamma", "src/pi_demo_gamma/prompts/gamma-new.md", "New.\n")
    push_change(tmp_path, "delta", "prompts/delta-new.md", "New.\n")
    updated = pi.run("update")
    assert updated.returncode == 0, updated.stderr
    found = commands(pi)
    assert "delta-new" in found  # a branch moves
    assert "gamma-new" not in found  # a tag stays where it is

    assert pi.run("remove", "delta").returncode == 0
    assert not list((pi.home / "packages" / "user" / "git").glob("delta-*"))
    assert "delta-hello" not in commands(pi)


def test_resources_turned_off_in_settings_do_not_load(pi: PiHome) -> None:
    source = make_source(pi.project.parent / "alpha-src", "alpha")
    (pi.home / "settings.toml").write_text(
        f'packages = [{{ source = "{source}", skills = ["-alpha-skill"], extensions = [] }}]\n'
    )
    found = commands(pi)
    assert "alpha-prompt" in found
    assert "skill:alpha-skill" not in found and "alpha-hello" not in found
    listing = pi.run("list").stdout
    assert "off (skills): alpha-skill" in listing and "off (extensions): alpha" in listing


def test_a_missing_package_is_one_line_and_nothing_is_installed(pi: PiHome) -> None:
    (pi.home / "settings.toml").write_text('packages = ["pi-demo-missing"]\n')
    pi.server.enqueue(Turn([Text("ok")]))
    run = pi.run("--no-session", "-p", "hi")
    assert run.returncode == 0, run.stderr
    assert "Package pi-demo-missing is not installed; run pi update pi-demo-missing to install it" in run.stderr
    assert not (pi.home / "packages").exists()


def test_install_mistakes_are_one_line(pi: PiHome) -> None:
    run = pi.run("install", "./nowhere")
    assert (run.returncode, run.stderr.strip().count("\n")) == (1, 0)
    assert "no folder" in run.stderr
    run = pi.run("install", "pi-demo-absent")
    assert run.returncode == 1 and run.stderr.startswith("pi: pip install failed")
    assert "Traceback" not in run.stderr
    assert not (pi.home / "settings.toml").exists() or "packages" not in (pi.home / "settings.toml").read_text()
    assert pi.run("remove", "nothing").stderr.strip() == "pi: no package 'nothing' in your settings (pi list shows them)"


def test_verbose_names_each_package_and_what_it_contributes(pi: PiHome, tmp_path: Path) -> None:
    source = make_source(tmp_path / "alpha-src", "alpha")
    assert pi.run("install", str(source)).returncode == 0
    pi.server.enqueue(Turn([Text("ok")]))
    run = pi.run("--verbose", "--no-session", "-p", "hi")
    assert run.returncode == 0, run.stderr
    assert (
        f"[verbose] package: alpha-src 1.0.0 (user, {source}): extensions: alpha; skills: alpha-skill; "
        "prompts: alpha-prompt; themes: alpha-theme"
    ) in run.stderr


def test_reload_picks_up_a_package_installed_meanwhile(pi: PiHome, tmp_path: Path) -> None:
    from pi_coder.cli import parse_args
    from pi_coder.modes.setup import prepare
    from pi_coder.packages.manage import Packages

    startup = prepare(parse_args(["--no-session", "-p", "x"]), mode="text", cwd=str(pi.project))
    session = startup.session
    assert not any(t.name == "zeta-prompt" for t in session.prompt_templates)
    Packages("user", str(pi.project)).install(str(make_source(tmp_path / "zeta-src", "zeta")))
    session.reload_resources()  # what /reload does once extensions are re-read
    assert any(t.name == "zeta-prompt" for t in session.prompt_templates)
    assert session.discovered_paths.packages == [
        f"zeta-src 1.0.0 (user, {tmp_path / 'zeta-src'}): extensions: zeta; skills: zeta-skill; "
        "prompts: zeta-prompt; themes: zeta-theme"
    ]


def test_usage_lines(pi: PiHome) -> None:
    run = pi.run("install")
    assert (run.returncode, run.stderr.strip()) == (
        2,
        "usage: pi install <source> [-l]   (source: a PyPI requirement, a git URL[@ref], or a path)",
    )
    assert pi.run("list", "extra").returncode == 2
    assert pi.run("list").stdout == "No packages (pi install <source> adds one)\n"
    config = pi.run("config")  # stdout is a pipe here
    assert (config.returncode, config.stderr.count("\n")) == (1, 1)
    assert "pi config needs a terminal" in config.stderr
