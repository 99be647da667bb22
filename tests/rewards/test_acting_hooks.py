"""Acting with a skill, the answer evaluator, and the TRL / verl hooks (no trainer needed)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import numpy as np
import pytest

from agentcredit.errors import ProviderError
from agentcredit.llm import ModelClient, make_provider, register_script
from agentcredit.rewards.acting import (
    score_answer,
    score_answer_semantic,
    with_guidance,
)
from agentcredit.rewards.hooks import (
    AsyncSkillRubricReward,
    SkillRubricReward,
    compute_score,
    trial_from_completion,
    turn_advantages,
)
from agentcredit.rewards.table import Scored, reward_table
from agentcredit.schema import Lineage
from agentcredit.skills.bank import make_bank
from tests.owned_values import FOREIGN, OWNED, PLANTED, capturing
from tests.rewards import scripted_verifier
from tests.skills.helpers import make_skill


def test_the_actor_sees_guidance_only() -> None:
    skill = make_skill(applicability="SECRET-APPLICABILITY")
    messages = with_guidance([{"role": "system", "content": "You are an agent."},
                              {"role": "user", "content": "Do it."}], skill)
    system = messages[0]["content"]
    assert system.startswith("You are an agent.") and "Stage 1" in system
    assert "SECRET-APPLICABILITY" not in system
    assert all(c.statement not in system and c.evidence not in system
               for c in skill.rubric or ())
    fresh = with_guidance([{"role": "user", "content": "Do it."}], skill)
    assert fresh[0]["role"] == "system" and fresh[1]["content"] == "Do it."


@pytest.mark.parametrize(("response", "truth", "score", "reason"), [
    ("<answer>The Sri Lanka team</answer>", "sri lanka team", 1.0, "exact"),
    ("<answer>Oban</answer> <answer>Highland Park</answer>", "highland park.", 1.0, "exact"),
    ("<answer>105</answer>", "100", 1.0, "numeric"),
    ("<answer>95</answer>", "100", 1.0, "numeric"),
    ("<answer>105.5</answer>", "100", 0.0, "mismatch"),
    ("<answer>$1,050</answer>", "1000", 1.0, "numeric"),
    ("<answer>about 100 apples</answer>", "100", 0.0, "mismatch"),
    ("<answer>0</answer>", "0", 1.0, "exact"),
    ("The answer is 100.", "100", 0.0, "no_answer"),
    ("<answer>  </answer>", "x", 0.0, "no_answer"),
])
def test_answer_evaluator(response: str, truth: str, score: float, reason: str) -> None:
    result = score_answer(response, truth)
    assert (result.score, result.reason) == (score, reason)


def test_semantic_equivalence_is_asked_only_on_a_text_mismatch() -> None:
    asked: list[str] = []

    def judge(messages: list[dict[str, Any]], schema: Any) -> str:
        asked.append(messages[-1]["content"])
        candidate = messages[-1]["content"].split("CANDIDATE ANSWER:")[1].splitlines()[0]
        return json.dumps({"equivalent": "Ranatunga" in candidate})

    register_script("equiv", judge)
    model = ModelClient(make_provider("scripted/equiv"))
    yes = asyncio.run(score_answer_semantic("<answer>Arjuna Ranatunga</answer>",
                                            "A. Ranatunga", model))
    no = asyncio.run(score_answer_semantic("<answer>Sangakkara</answer>", "A. Ranatunga",
                                           model))
    numbers = asyncio.run(score_answer_semantic("<answer>75</answer>", "66", model))
    assert (yes.score, yes.reason, no.score, numbers.score) == (1.0, "semantic", 0.0, 0.0)
    assert len(asked) == 2  # never for numbers
    register_script("equiv-down", [ProviderError("server_error", "down")] * 10)
    down = ModelClient(make_provider("scripted/equiv-down"))
    down.retry = down.retry.__class__(max_attempts=1)
    failed = asyncio.run(score_answer_semantic("<answer>x</answer>", "y", down))
    assert failed.score == 0.0 and failed.reason == "mismatch"


def test_trl_reward_function_outcome_only_and_none() -> None:
    reward = SkillRubricReward()
    out = reward(["q1", "q2", "q3"], ["<answer>4</answer>", "no tags", "<answer>x</answer>"],
                 ground_truth=["4", "4", None], trainer_state=object())
    assert out == [1.0, 0.0, None]
    conversational = reward([[{"role": "user", "content": "2+2?"}]],
                            [[{"role": "assistant", "content": "<answer>4</answer>"}]],
                            ground_truth=["4"])
    assert conversational == [1.0]


def _bank_and_verifier() -> tuple[Any, ModelClient]:
    register_script("hook-verifier", scripted_verifier.answer)
    skill = make_skill("sums", lineage=Lineage(stage="import", sources=("x",)))
    bank = make_bank([skill], benchmark=None, embedding="lexical-tfidf-1", rules_version="r",
                     prompt_version="p")
    return bank, ModelClient(make_provider("scripted/hook-verifier"))


TOOL_COMPLETION = [
    {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "type": "function",
         "function": {"name": "bash", "arguments": "{\"command\": \"python3 sum.py\"}"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "total = 42"},
    {"role": "assistant", "content": "<answer>42</answer>"}]


def test_trl_reward_adds_rubric_satisfaction_sync_and_async_alike() -> None:
    bank, verifier = _bank_and_verifier()
    trial = trial_from_completion([{"role": "user", "content": "Sum it."}], TOOL_COMPLETION)
    assert [s.source for s in trial.steps] == ["user", "agent", "agent"]
    assert trial.steps[1].observations[0].text == "total = 42"
    kwargs = {"ground_truth": ["42", "30"], "skill_id": ["sums", "sums"]}
    prompts = [[{"role": "user", "content": "Sum it."}]] * 2
    sync = SkillRubricReward(bank=bank, verifier=verifier, process_weight=0.5)
    values = sync(prompts, [TOOL_COMPLETION, TOOL_COMPLETION], **kwargs)
    # The scripted verifier supports every criterion from the tool output: S = 1.
    assert values == [1.5, 0.5]
    assert sync.last_details[0]["satisfaction"] == 1.0
    asynchronous = AsyncSkillRubricReward(bank=bank, verifier=verifier, process_weight=0.5)
    assert asyncio.run(asynchronous(prompts, [TOOL_COMPLETION] * 2, **kwargs)) == values
    no_skill = sync(prompts[:1], [TOOL_COMPLETION], ground_truth=[None], skill_id=["nope"])
    assert no_skill == [None]


def test_verl_compute_score(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTCREDIT_BANK", raising=False)
    result = compute_score("math", "so <answer>12</answer>", "12", {"index": 3})
    assert result["score"] == 1.0 and result["reason"] == "exact"
    assert compute_score("math", "nothing", "12")["score"] == 0.0


def test_turn_advantages_match_the_reward_table() -> None:
    from agentcredit.schema import CriterionVerdict, TrialVerdict, TurnState

    skill = make_skill()
    rubric = skill.rubric or ()

    def verdict(trial_id: str, satisfied: bool) -> TrialVerdict:
        states = tuple(TurnState(turn=n, step=2 * n, state=s) for n, s in
                       enumerate(["missing", "supported"] if satisfied else
                                 ["hypothesis", "hypothesis"], 1))
        return TrialVerdict(
            trial_id=trial_id, task_id="t", skill_id=skill.id, skill_version=1,
            skill_hash="h", turn_steps=(2, 4), criteria=tuple(
                CriterionVerdict(criterion_id=c.id, status="applicable", satisfied=satisfied,
                                 states=states,
                                 responsibility=(0.0, 1.0) if satisfied else (0.0, 0.0))
                for c in rubric), model="m", prompt_version="p", seed=0)

    verdicts = [verdict("a", True), verdict("b", False)]
    per_turn = turn_advantages(verdicts, [rubric, rubric], [1.0, 0.0], ["t", "t"],
                               process_weight=0.5)
    table = reward_table([Scored(v, rubric, o, "t") for v, o in zip(verdicts, [1.0, 0.0],
                                                                     strict=True)],
                         process_weight=0.5)
    assert np.allclose(np.concatenate(per_turn), [r["combined"] for r in table.rows])
    # a: S = 1, b: S = 0 -> A_S = +-0.5; a's progress 0, 0.6; b's 0.25, 0
    assert per_turn[0] == pytest.approx([0.5, 0.5 + 0.5 * (0.5 + 0.6)])
    assert per_turn[1] == pytest.approx([-0.5 + 0.5 * (-0.25 + 0.25), -0.5 + 0.5 * -0.25])


def test_the_turn_verifier_keeps_values_the_task_owns_and_redacts_the_rest() -> None:
    seen: list[str] = []
    register_script("owned-verifier", capturing(seen, scripted_verifier.answer))
    bank, _ = _bank_and_verifier()
    verifier = ModelClient(make_provider("scripted/owned-verifier"))
    completion = json.loads(json.dumps(TOOL_COMPLETION))
    completion[1]["content"] += PLANTED
    prompt = [{"role": "user", "content": f"Sum it; never print the key {OWNED}."}]
    reward = SkillRubricReward(bank=bank, verifier=verifier, process_weight=0.5)
    assert reward([prompt], [completion], ground_truth=["42"], skill_id=["sums"]) == [1.5]
    shown = [text for text in seen if "other_key=" in text]
    assert shown and all(f"key={OWNED}" in text for text in shown)
    assert all(FOREIGN not in text and "other_key=[REDACTED:aws_access_key_id]" in text
               for text in shown)
    assert verifier.ledger.task_owned_kept > 0 and verifier.ledger.redactions > 0
