"""Issue 67: the task's frozen GCPC checklist as the turn verifier's rubric, on every surface."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from agentcredit.checklists import freeze, load_rules
from agentcredit.checklists.freeze import make_checklist
from agentcredit.cli.app import app
from agentcredit.llm import ModelClient, make_provider, register_script
from agentcredit.rewards import hooks
from agentcredit.rewards.checklist import criteria_of, ground
from agentcredit.rewards.hooks import UNSCORED_CODES, SkillRubricReward
from agentcredit.rewards.verifier import verify_trial
from agentcredit.schema import (
    Checklist,
    ChecklistItem,
    CriterionVerdict,
    Lineage,
    Trial,
    TurnState,
)
from agentcredit.skills.bank import freeze_bank, make_bank
from tests.conftest import EXAMPLES
from tests.rewards import scripted_verifier
from tests.rewards.test_acting_hooks import TOOL_COMPLETION
from tests.serve.conftest import running, serve_with
from tests.skills.helpers import make_skill

runner = CliRunner()
PROMPT = [{"role": "user", "content": "Sum the numbers in sum.py."}]


def _checklist(task_id: str = "sums-task") -> Checklist:
    items = [ChecklistItem(id="C1", text="The total of the numbers is printed.",
                           route="assertion", checks=("test_outputs.py::test_total",)),
             ChecklistItem(id="C2", text="The script sum.py runs without an error.",
                           route="generated", quotes=("Sum the numbers",))]
    return make_checklist(task_id, items, [], load_rules(), synthesizer="derived",
                          prompt_version="none")


def _calls(name: str) -> list[str]:
    calls: list[str] = []

    def script(messages: list[dict[str, Any]], schema: dict[str, Any] | None) -> str:
        calls.append((schema or {}).get("title", ""))
        return scripted_verifier.answer(messages, schema)

    register_script(name, script)
    return calls


def _verdict(cid: str, turns: int, satisfied: bool = False) -> CriterionVerdict:
    return CriterionVerdict(criterion_id=cid, status="applicable", satisfied=satisfied,
                            states=tuple(TurnState(turn=n, step=n, state="missing")
                                         for n in range(1, turns + 1)),
                            responsibility=(0.0,) * turns)


@pytest.mark.parametrize(("outcome", "checks", "c1", "endpoint"), [
    ("fail", {"test_outputs.py::test_total": "passed"}, True, False),
    ("fail", {"test_outputs.py::test_total": "failed"}, False, False),
    ("pass", {}, True, True),  # PASS credits every assertion item, as the judge's fusion does
])
def test_items_are_grounded_by_the_checks_and_the_outcome(outcome: str, checks: dict[str, str],
                                                          c1: bool, endpoint: bool) -> None:
    verdicts = {"C1": _verdict("C1", 2), "C2": _verdict("C2", 2)}
    trial = Trial(id="t", task_id="sums-task", outcome=outcome, checks=checks,  # type: ignore[arg-type]
                  format="x", source_path="-")
    ground(verdicts, _checklist(), trial, [1, 2])
    assert verdicts["C1"].satisfied is c1 and verdicts["C1"].status == "applicable"
    assert verdicts["C1"].responsibility == ((0.0, 1.0) if c1 else (0.0, 0.0))
    assert verdicts["ENDPOINT"].satisfied is endpoint
    assert verdicts["C2"].status == "unverifiable"  # nothing shown either way: abstains


def test_both_verifies_the_skill_and_the_items_in_the_same_two_calls() -> None:
    calls = _calls("both-calls")
    model = ModelClient(make_provider("scripted/both-calls"))
    skill, checklist = make_skill("sums"), _checklist()
    trial = hooks.trial_from_completion(PROMPT, TOOL_COMPLETION).model_copy(
        update={"task_id": "sums-task", "outcome": "pass"})
    verdict = asyncio.run(verify_trial(trial, skill, model, "Sum the numbers.",
                                       checklist=checklist, rubric="both"))
    assert calls == ["CoarseAnswer", "FineGroupAnswer"]
    assert [c.criterion_id for c in verdict.criteria] == ["R1", "R2", "R3", "C1", "C2",  # type: ignore[union-attr]
                                                          "ENDPOINT"]
    assert verdict.checklist_hash == checklist.hash and verdict.skill_hash  # type: ignore[union-attr]
    assert len(criteria_of(skill, checklist, "both")) == 6


def _reward(rubric: str, name: str) -> SkillRubricReward:
    register_script(name, scripted_verifier.answer)
    bank = make_bank([make_skill("sums")], benchmark=None, embedding="lexical-tfidf-1",
                     rules_version="r", prompt_version="p")
    return SkillRubricReward(bank=bank, verifier=ModelClient(make_provider(f"scripted/{name}")),
                             checklists={"sums-task": _checklist()}, rubric=rubric,  # type: ignore[arg-type]
                             default_skill="sums")


def test_the_trl_hook_scores_the_tasks_checklist_and_never_another_tasks() -> None:
    reward = _reward("checklist", "trl-checklist")
    values = reward([PROMPT] * 2, [TOOL_COMPLETION] * 2, ground_truth=["42", "42"],
                    task_id=["sums-task", "other-task"])
    first, second = reward.last_details
    assert values[0] == pytest.approx(1.0 + 0.5 * first["satisfaction"])
    assert first["checklist_hash"] == _checklist().hash and first["rubric"] == "checklist"
    assert values[1] is None and second["unscored_code"] == "no_checklist"
    assert "no_checklist" in UNSCORED_CODES and "other-task" in second["unscored"]


def test_the_verl_hook_reads_the_checklists_from_the_environment(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    register_script("verl-checklist", scripted_verifier.answer)
    freeze(_checklist(), tmp_path / "checklists")
    monkeypatch.setenv("AGENTCREDIT_CHECKLISTS", str(tmp_path / "checklists"))
    monkeypatch.setenv("AGENTCREDIT_RUBRIC", "checklist")
    monkeypatch.setenv("AGENTCREDIT_VERIFIER_MODEL", "scripted/verl-checklist")
    monkeypatch.setenv("AGENTCREDIT_UNSCORED", "fallback:-1")
    monkeypatch.delenv("AGENTCREDIT_BANK", raising=False)
    hooks.reset_shared()
    try:
        batch = hooks.compute_score_batch(
            ["math"] * 2, [TOOL_COMPLETION] * 2, ["42"] * 2,  # type: ignore[list-item]
            [{"prompt": PROMPT, "task_id": "sums-task"}, {"prompt": PROMPT}])
    finally:
        hooks.reset_shared()
    assert batch[0]["checklist_hash"] == _checklist().hash and batch[0]["score"] > 1.0
    assert batch[1]["score"] == -1.0 and batch[1]["unscored_code"] == "no_checklist"


def test_the_service_scores_the_named_tasks_checklist(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    freeze(_checklist(), tmp_path / "checklists")
    application = serve_with(tmp_path, "served-checklist", scripted_verifier.answer,
                             rubric="both", checklists=tmp_path / "checklists",
                             unscored="fallback:-1")
    with running(application) as url:
        turns = httpx.post(f"{url}/turn_rewards", json={"trajectories": [
            {"prompt": PROMPT, "completion": TOOL_COMPLETION, "task_id": "sums-task",
             "ground_truth": "42"},
            {"prompt": PROMPT, "completion": TOOL_COMPLETION, "ground_truth": "42"}]},
            timeout=30).json()["trajectories"]
        label = json.dumps({"task_id": "sums-task", "ground_truth": "42"})
        served = httpx.post(f"{url}/get_reward", json={
            "query": ["Sum it. <answer>42</answer>"] * 2, "prompts": ["Sum it. "] * 2,
            "labels": [label, "42"]}, timeout=30).json()
        from agentcredit.serve import client

        monkeypatch.setenv("AGENTCREDIT_REWARD_URL", url)
        verl = client.compute_score_batch(["math"], ["<answer>42</answer>"], ["42"],
                                          [{"prompt": "Sum it. ", "task_id": "sums-task"}])
    assert turns[0]["checklist_hash"] == _checklist().hash and turns[0]["skill_hash"]
    assert turns[0]["advantages"] and turns[0]["reward"] is not None
    assert turns[1]["reward"] is None and turns[1]["detail"]["unscored_code"] == "no_checklist"
    assert served["extra_logs"]["checklist_hash"][0] == _checklist().hash
    assert served["extra_logs"]["unscored"][1]["code"] == "no_checklist"
    assert verl[0]["checklist_hash"] == _checklist().hash


def test_a_prompt_below_the_retrieval_floor_has_no_skill(tmp_path: Path) -> None:
    pytest.importorskip("starlette")
    from agentcredit.cli.serve_cmd import build_app

    register_script("floor-verifier", scripted_verifier.answer)
    freeze_bank(make_bank([make_skill("sums", applicability="Tasks that sum numbers in "
                                      "files.", lineage=Lineage(stage="import",
                                                                sources=("x",)))],
                          benchmark=None, embedding="lexical-tfidf-1", rules_version="r",
                          prompt_version="p"), tmp_path / "bank")
    application = build_app(tmp_path / "bank", "scripted/floor-verifier", floor=0.5)
    with running(application) as url:
        body = httpx.post(f"{url}/turn_rewards", json={"trajectories": [
            {"prompt": "Sum the numbers in the files.", "completion": TOOL_COMPLETION},
            {"prompt": "Write a haiku about autumn.", "completion": TOOL_COMPLETION}]},
            timeout=30).json()["trajectories"]
    assert body[0]["skill_id"] == "sums" and body[0]["satisfaction"] is not None
    assert body[1]["skill_id"] is None and body[1]["detail"]["unscored_code"] == "no_skill"


def test_skills_reward_names_both_hashes_in_every_row(tmp_path: Path) -> None:
    calls = _calls("reward-both")
    from tests.rewards.test_turn_verifier import _bank

    run = tmp_path / "run"
    out = runner.invoke(app, ["skills", "reward", str(_bank(tmp_path)), str(EXAMPLES / "jobs"),
                              "--tasks", str(EXAMPLES / "tasks"), "--out", str(run), "--model",
                              "scripted/reward-both", "--rubric", "both", "--analyze"])
    assert out.exit_code == 0, out.output
    assert "turn verifier S: the task's checklist" in out.output  # its AUC, beside the others
    analyzed = runner.invoke(app, ["analyze", str(run), "--json", str(tmp_path / "a.json")])
    assert analyzed.exit_code == 0, analyzed.output
    scorers = json.loads((tmp_path / "a.json").read_text())["scorers"]
    assert {"turn_checklist", "turn_skill", "check_fraction"} <= set(scorers)
    assert scorers["turn_checklist"]["uses_outcome"] and not scorers["turn_skill"]["uses_outcome"]
    rows = [json.loads(line) for line in (run / "turn_rewards.jsonl").read_text().splitlines()]
    assert rows and all(r["checklist_hash"] and r["skill_hash"] and r["rubric"] == "both"
                        for r in rows)
    assert {"checklist", "skill"} <= set(rows[0]["rubric_satisfaction"])
    trials = {r["trial_id"] for r in rows}
    assert calls.count("CoarseAnswer") == len(trials)  # one coarse call per trial
    assert calls.count("FineGroupAnswer") <= len(trials)  # and at most one fine call
