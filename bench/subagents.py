"""Subagent overhead: time from the ``task`` call to the child's first model request, in process.

Usage: ``python bench/subagents.py [--children N]``

A parent session (with the subagents extension loaded as pi loads it) asks for one ``task`` per
turn, N turns; each child (the built-in ``general-purpose`` agent, the parent's tools) answers
at once from ``tests/support/sse_server.py``. The figure is each child's ``firstRequestMs``
(from the tool's ``execute`` to the child's stream call: session store, tools, system prompt,
budget hooks). The first child also pays the imports of the subagent modules, so it is shown
apart. Target: at most 50 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.sse_server import SSEServer, Text, ToolCall, Turn  # noqa: E402


async def _measure(children: int, folder: Path) -> list[float]:
    from pi_coder.ai.models import create_models
    from pi_coder.core.factory import create_agent_session, plan_for
    from pi_coder.extensions.loader import discover, load_extensions
    from pi_coder.extensions.runner import ExtensionRunner
    from pi_coder.settings import Settings

    project = folder / "project"
    project.mkdir()
    with SSEServer() as server:
        toml = folder / "models.toml"
        toml.write_text(
            f'[providers.local]\napi = "anthropic-messages"\nbase_url = "{server.anthropic_base_url}"\n'
            'api_key = "none"\nmodels = [{ id = "test-model" }]\n',
            encoding="utf-8",
        )
        models = create_models(include_builtin=False, env={}, models_toml=toml)
        model = models.get_model("local", "test-model")
        runner = ExtensionRunner(str(project), models=models, project_trusted=True)
        sources, _ = discover(
            cli_specs=["pi_coder.subagents.extension"], cwd=str(project), config_dir=folder, no_extensions=True, project_trusted=True
        )
        load_extensions(runner, sources)
        session = create_agent_session(
            plan_for(project, settings=Settings(), models=models, model=model, session_dir=str(folder / "sessions"))
        )
        runner.bind(session)
        for i in range(children):
            server.enqueue(
                Turn([ToolCall("task", {"description": "x", "prompt": f"child {i}"}, id=f"t{i}")]), Turn([Text("ok")])
            )
        server.enqueue(Turn([Text("done")]))
        await session.prompt("go")
        figures = [
            m.details["firstRequestMs"]
            for m in session.messages
            if getattr(m, "role", None) == "toolResult" and isinstance(m.details, dict) and "firstRequestMs" in m.details
        ]
        await session.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--children", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        figures = asyncio.run(_measure(args.children, Path(tmp)))
    if len(figures) < 2:
        raise SystemExit(f"expected {args.children} children, measured {len(figures)}")
    rest = figures[1:]
    print(f"first child: {figures[0]:.1f} ms (imports included)")
    print(f"next {len(rest)} children: median {statistics.median(rest):.1f} ms, max {max(rest):.1f} ms (target 50 ms)")


if __name__ == "__main__":
    main()
