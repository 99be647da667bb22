"""Issue 61: the TRL recipe of the turn-rewards guide runs as written (the paid model swapped
for a script)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentcredit.llm import register_script
from tests.conftest import ROOT
from tests.rewards import scripted_verifier
from tests.rewards.test_turn_verifier import _bank


def _trl_block() -> str:
    text = (ROOT / "docs" / "guides" / "turn-rewards.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    [block] = [b for b in blocks if "SkillRubricReward(bank=bank" in b]
    return "\n".join(line.removeprefix("  ") for line in block.splitlines())


def test_the_trl_recipe_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _bank(tmp_path)  # the `skills import` the recipe's comment names
    monkeypatch.chdir(tmp_path)
    register_script("readme-verifier", scripted_verifier.answer)
    code = _trl_block()
    assert '"openai/gpt-4o-mini"' in code
    scope: dict[str, object] = {}
    exec(code.replace('"openai/gpt-4o-mini"', '"scripted/readme-verifier"'), scope)
    rewards = scope["rewards"]
    assert isinstance(rewards, list) and len(rewards) == 1
    assert isinstance(rewards[0], float), scope["reward"].last_details  # type: ignore[attr-defined]
