"""Start-up discipline: cheap entry points must not import heavy or forbidden modules."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

FORBIDDEN_CLI = ("textual", "anthropic", "openai")
PROBE = "import json, sys; {code}; print(json.dumps(sorted(sys.modules)))"


def _env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PI_CODER_HOME"] = str(tmp_path)
    env.pop("PYTHONSTARTUP", None)
    return env


def loaded_after(code: str, tmp_path: Path) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(code=code)],
        capture_output=True,
        text=True,
        timeout=60,
        env=_env(tmp_path),
        check=True,
    )
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def top_level(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def test_import_pi_coder_ai_loads_neither_httpx_nor_textual(tmp_path: Path) -> None:
    loaded = top_level(loaded_after("import pi_coder.ai", tmp_path))
    assert not loaded & {"httpx", "textual", "anthropic", "openai", "rich", "typer"}
    # asyncio (~40 ms here) is imported when a stream or signal first needs the running loop.
    assert "asyncio" not in loaded


def test_creating_models_does_not_import_providers(tmp_path: Path) -> None:
    """Building the collection (catalog + models.toml) imports no HTTP provider module."""
    loaded = loaded_after("import pi_coder.ai as ai; ai.create_models(env={}); ai.faux_provider()", tmp_path)
    assert "httpx" not in top_level(loaded)
    assert not {m for m in loaded if m.startswith("pi_coder.ai.providers.") and not m.endswith(".faux")}


def test_import_cli_loads_no_textual_or_sdk(tmp_path: Path) -> None:
    loaded = top_level(loaded_after("import pi_coder.cli", tmp_path))
    assert not loaded & set(FORBIDDEN_CLI)


def _version_command() -> list[str]:
    """The venv's ``pi`` script, else ``python -m pi_coder``."""
    script = Path(sys.executable).with_name("pi")
    if script.exists():
        return [str(script), "--version"]
    return [sys.executable, "-m", "pi_coder", "--version"]


def test_pi_version_imports_no_textual_or_sdk(tmp_path: Path) -> None:
    """``pi --version`` prints a version without importing textual or an SDK."""
    env = _env(tmp_path) | {"PYTHONPROFILEIMPORTTIME": "1"}
    run = subprocess.run(_version_command(), capture_output=True, text=True, timeout=60, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip()
    imported = {
        line.split("|")[-1].strip().split(".")[0] for line in run.stderr.splitlines() if line.startswith("import time:")
    }
    assert "pi_coder" in imported, "no import-time profile in stderr"
    assert not imported & set(FORBIDDEN_CLI), imported & set(FORBIDDEN_CLI)


def _imported(stderr: str) -> set[str]:
    return {line.split("|")[-1].strip().split(".")[0] for line in stderr.splitlines() if line.startswith("import time:")}


def test_pi_version_and_print_mode_import_no_pillow(tmp_path: Path, sse_server: Any) -> None:
    """Pillow loads only when an image is processed: not for ``--version``, not for a text ``-p`` run."""
    from tests.modes.pirun import PiHome
    from tests.support.sse_server import Text, Turn

    run = subprocess.run(
        _version_command(), capture_output=True, text=True, timeout=60, env=_env(tmp_path) | {"PYTHONPROFILEIMPORTTIME": "1"}
    )
    assert run.returncode == 0 and "PIL" not in _imported(run.stderr)
    pi = PiHome(tmp_path, sse_server)
    sse_server.enqueue(Turn([Text("hi")]))
    printed = pi.run("-p", "hello", PYTHONPROFILEIMPORTTIME="1")
    assert printed.returncode == 0, printed.stderr[-2000:]
    assert printed.stdout == "hi\n"
    imported = _imported(printed.stderr)
    assert "pi_coder" in imported and "PIL" not in imported


def test_print_mode_declares_the_task_tool_without_the_extension_framework(tmp_path: Path, sse_server: Any) -> None:
    """The built-in ``task`` tool is offered to the model, but the extension framework (loader,
    runner, API) loads only when the model calls it (issue 26: ``pi -p`` got ~0.1 s slower)."""
    from tests.modes.pirun import PiHome
    from tests.support.sse_server import Text, Turn

    pi = PiHome(tmp_path, sse_server)
    sse_server.enqueue(Turn([Text("hi")]))
    printed = pi.run("-p", "hello", PYTHONPROFILEIMPORTTIME="1")
    assert printed.returncode == 0, printed.stderr[-2000:]
    modules = {line.split("|")[-1].strip() for line in printed.stderr.splitlines() if line.startswith("import time:")}
    assert "pi_coder.subagents.lazy" in modules
    framework = {"pi_coder.extensions.loader", "pi_coder.extensions.runner", "pi_coder.extensions.api", "pi_coder.extensions.types"}
    assert not modules & framework, modules & framework
    tools = [tool["name"] for tool in sse_server.requests[-1].json["tools"]]
    assert "task" in tools
