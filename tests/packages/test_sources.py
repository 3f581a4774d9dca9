"""Reading package sources and resource filters (no disk, no network)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_coder.errors import UserError
from pi_coder.packages.sources import allowed, parse_source


def test_pypi_requirements_keep_their_specifier() -> None:
    source = parse_source("Pi_Tools>=1.2,<2", "/tmp")
    assert (source.kind, source.name, source.requirement) == ("pypi", "pi-tools", "Pi_Tools>=1.2,<2")
    assert parse_source("pypi:pi-tools==1.0", "/tmp").requirement == "pi-tools==1.0"


def test_git_sources_split_the_ref() -> None:
    source = parse_source("git:github.com/example/pi-tools@v1", "/tmp")
    assert (source.kind, source.url, source.ref, source.name) == ("git", "https://github.com/example/pi-tools", "v1", "pi-tools")
    ssh = parse_source("git@github.com:example/tools.git", "/tmp")
    assert (ssh.url, ssh.ref, ssh.name) == ("git@github.com:example/tools.git", None, "tools")
    assert parse_source("https://host/x/repo.git@main", "/tmp").ref == "main"


def test_paths_are_local_and_bare_repositories_are_git(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    local = parse_source("./pkg", tmp_path)
    assert (local.kind, local.path) == ("local", str(tmp_path / "pkg"))
    bare = parse_source("./repo.git@v2", tmp_path)
    assert (bare.kind, bare.url, bare.ref) == ("git", str(tmp_path / "repo.git"), "v2")


def test_nonsense_is_one_clear_error() -> None:
    with pytest.raises(UserError, match="give a PyPI requirement"):
        parse_source("not a package!", "/tmp")


def test_filters_follow_pi_rules() -> None:
    assert allowed(None, "a")
    assert not allowed([], "a")
    assert allowed(["-b"], "a") and not allowed(["-b"], "b")
    assert allowed(["a"], "a") and not allowed(["a"], "b")
    assert allowed(["a", "+b"], "b")
