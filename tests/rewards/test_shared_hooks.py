"""The trainer hooks share one client, cache and bank per process, and score whole batches."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import agentcredit.skills.bank as bank_module
from agentcredit.llm import ModelClient, register_script
from agentcredit.llm import spec as spec_module
from agentcredit.rewards import hooks
from agentcredit.schema import Lineage
from agentcredit.skills.bank import freeze_bank, make_bank
from tests.rewards import scripted_verifier
from tests.rewards.test_acting_hooks import TOOL_COMPLETION
from tests.skills.helpers import make_skill


@pytest.fixture
def counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    register_script("shared-verifier", scripted_verifier.answer)
    skill = make_skill("sums", lineage=Lineage(stage="import", sources=("x",)))
    freeze_bank(make_bank([skill], benchmark=None, embedding="lexical-tfidf-1",
                          rules_version="r", prompt_version="p"), tmp_path / "bank")
    counts = {"clients": 0, "banks": 0}

    class Counted(ModelClient):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            counts["clients"] += 1
            super().__init__(*args, **kwargs)

    real_load = bank_module.load_bank

    def load(path: Path) -> Any:
        counts["banks"] += 1
        return real_load(path)

    monkeypatch.setattr(spec_module, "ModelClient", Counted)
    monkeypatch.setattr(bank_module, "load_bank", load)
    monkeypatch.setenv("AGENTCREDIT_BANK", str(tmp_path / "bank"))
    monkeypatch.setenv("AGENTCREDIT_VERIFIER_MODEL", "scripted/shared-verifier")
    monkeypatch.setenv("AGENTCREDIT_CACHE", str(tmp_path / "cache.sqlite"))
    hooks.reset_shared()
    yield counts
    hooks.reset_shared()


def _extra(i: int) -> dict[str, Any]:
    return {"prompt": [{"role": "user", "content": f"Sum it ({i})."}], "skill_id": "sums"}


def test_verl_single_and_batch_and_trl_share_one_client_and_one_bank(
        counted: dict[str, int]) -> None:
    single = [hooks.compute_score("math", TOOL_COMPLETION, "42", _extra(i))  # type: ignore[arg-type]
              for i in range(3)]
    batch = hooks.compute_score_batch(["math"] * 3, [TOOL_COMPLETION] * 3,  # type: ignore[list-item]
                                      ["42"] * 3, [_extra(i) for i in range(3)])
    assert batch == single
    assert [r["score"] for r in batch] == [1.5] * 3  # outcome 1 + 0.5 x satisfaction 1
    reward = hooks.verl_reward()
    prompts = [_extra(0)["prompt"]] * 2
    assert reward(prompts, [TOOL_COMPLETION] * 2, ground_truth=["42", "1"],
                  skill_id=["sums"] * 2) == [1.5, 0.5]
    asynchronous = hooks.AsyncSkillRubricReward(bank=reward.bank, verifier=reward.verifier,
                                                process_weight=0.5)
    assert asyncio.run(asynchronous(prompts, [TOOL_COMPLETION] * 2, ground_truth=["42", "1"],
                                    skill_id=["sums"] * 2)) == [1.5, 0.5]
    assert counted == {"clients": 1, "banks": 1}


def test_a_changed_bank_is_loaded_again(counted: dict[str, int], tmp_path: Path) -> None:
    hooks.compute_score("math", "<answer>1</answer>", "1", _extra(0))
    skill = make_skill("sums", lineage=Lineage(stage="import", sources=("y",)))
    freeze_bank(make_bank([skill], benchmark="other", embedding="lexical-tfidf-1",
                          rules_version="r", prompt_version="p"), tmp_path / "bank")
    hooks.compute_score("math", "<answer>1</answer>", "1", _extra(0))
    assert counted["banks"] == 2 and counted["clients"] == 2  # a new bank hash: a new reward
