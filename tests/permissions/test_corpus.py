"""The permission corpus (corpus.toml): each command or call gets the decision written next to it."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from pi_coder.permissions.policy import Policy
from pi_coder.permissions.rules import RuleSet

_DATA = tomllib.loads((Path(__file__).parent / "corpus.toml").read_text(encoding="utf-8"))
_CASES = [
    pytest.param(group["mode"], case, id=f"{group['mode']}:{' '.join(case[:-1])!r}")
    for group in _DATA["group"]
    for case in group["cases"]
]
_CWD = "/work/project"


def test_corpus_is_big_enough() -> None:
    assert len(_CASES) >= 300


@pytest.mark.parametrize(("mode", "case"), _CASES)
def test_decision(mode: str, case: list[str]) -> None:
    rules = _DATA["rules"]
    policy = Policy(mode, RuleSet(rules["allow"], rules["ask"], rules["deny"]), _CWD)
    *call, expected = case
    if len(call) == 1:
        tool, args = "bash", {"command": call[0]}
    elif call[0] == "tool":
        tool, args = call[1], {}
    else:
        tool, args = call[0], {"path": call[1]}
    decision = policy.decide(tool, args)
    assert decision.action == expected, decision.reason
