"""The ``agent_before_settle`` extension event (the Stop hook's seam) for any extension."""

from __future__ import annotations

import json
import textwrap

from tests.hooks.conftest import HookHome
from tests.modes.pirun import all_text
from tests.support.sse_server import Text, Turn

EXT = """
    from pi_coder.extensions import CustomMessageSpec, ExtensionAPI

    def extension(pi: ExtensionAPI) -> None:
        seen = []

        @pi.on("agent_before_settle")
        def remind(event, ctx):
            seen.append(event.outcome)
            if len(seen) > 1:
                return None
            spec = CustomMessageSpec(custom_type="review", content="Review the diff first.", display=False)
            return {"entries": [*event.entries, spec, {"type": "custom", "custom_type": "mark", "data": 1}],
                    "continue": True}

        @pi.on("agent_settled")
        def done(event, ctx):
            ctx.ui.notify(f"settle calls: {seen}")
"""


def test_agent_before_settle_appends_entries_and_continues_once(pi: HookHome) -> None:
    ext = pi.project / "remind.py"
    ext.write_text(textwrap.dedent(EXT))
    pi.server.enqueue(Turn([Text("First answer.")]), Turn([Text("Reviewed.")]))
    run = pi.run("-p", "-e", str(ext), "go")
    assert run.returncode == 0, run.stderr
    assert len(pi.server.requests) == 2
    assert "Review the diff first." in all_text(pi.server.requests[1].json)
    assert "settle calls: ['completed', 'completed']" in run.stderr
    entries = [json.loads(line) for line in pi.session_files()[0].read_text().splitlines()]
    kinds = [(e["type"], e.get("customType")) for e in entries[1:]]
    assert ("custom_message", "review") in kinds and ("custom", "mark") in kinds
