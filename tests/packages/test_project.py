"""Project packages (``-l``): recorded in .pi/settings.toml, installed and loaded only in a trusted folder."""

from __future__ import annotations

from pathlib import Path

from tests.modes.pirun import PiHome
from tests.packages.support import make_source, make_wheel
from tests.packages.test_install import assert_loaded, commands
from tests.support.sse_server import Text, Turn


def test_local_install_is_recorded_for_the_project(pi: PiHome) -> None:
    source = make_source(pi.project / "tools", "alpha")
    run = pi.run("install", "-l", "./tools", "-a")
    assert run.returncode == 0, run.stderr
    assert 'packages = ["../tools"]' in (pi.project / ".pi" / "settings.toml").read_text()
    assert "packages" not in ((pi.home / "settings.toml").read_text() if (pi.home / "settings.toml").exists() else "")
    assert_loaded(commands(pi, "-a"), "alpha")
    assert "alpha-hello" not in commands(pi, "-na")
    assert source.is_dir()


def test_untrusted_project_packages_are_neither_installed_nor_loaded(pi: PiHome, tmp_path: Path) -> None:
    make_wheel(tmp_path / "wheels", "beta")
    marker_src = make_source(tmp_path / "marked", "marked")
    init = marker_src / "src" / "pi_demo_marked" / "__init__.py"
    init.write_text("open(__file__ + '.imported', 'w').close()\n" + init.read_text())
    settings = pi.project / ".pi" / "settings.toml"
    settings.parent.mkdir()
    settings.write_text(f'packages = ["pi-demo-beta", "{marker_src}"]\n')

    refused = pi.run("update", "-l")
    assert refused.returncode == 1
    assert "is not trusted, so its packages are not installed" in refused.stderr
    assert not (pi.home / "packages").exists()
    found = commands(pi, "-na")
    assert "marked-hello" not in found and "beta-hello" not in found
    assert not Path(str(init) + ".imported").exists()

    pi.server.enqueue(Turn([Text("ok")]))
    trusted_run = pi.run("-a", "--no-session", "-p", "hi")
    assert "Package pi-demo-beta is not installed; run pi update -l pi-demo-beta to install it" in trusted_run.stderr
    assert not (pi.home / "packages").exists()  # starting never installs

    installed = pi.run("update", "-l", "-a")
    assert installed.returncode == 0, installed.stderr
    assert "Updated pi-demo-beta 1.0.0 for this project" in installed.stdout
    found = commands(pi, "-a")
    assert_loaded(found, "beta")
    assert_loaded(found, "marked")
    assert Path(str(init) + ".imported").exists()
