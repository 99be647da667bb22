"""Issue 61: a sample that cannot be scored is never a number it did not earn. Every reward
surface returns null (None) with a stable code and a sentence; where a protocol cannot carry
null, the trainer's documented choice (a fallback it sets) is sent, or the call says so."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from agentcredit.errors import ConfigError
from agentcredit.rewards import hooks
from agentcredit.rewards.hooks import UNSCORED_CODES, SkillRubricReward, UnscoredPolicy
from agentcredit.rewards.table import Scored, reward_table
from agentcredit.schema import CriterionVerdict, RubricCriterion, TrialVerdict, TurnState
from tests.serve.conftest import running, serve_with

SCORED = ("Sum 1 and 1. ", "<answer>2</answer>", "2")
UNSCORED = ("Sum 1 and 1. ", "<answer>2</answer>", None)  # no label; the verifier fails


def _garbled(messages: object, schema: object) -> str:
    return "this is not the JSON the verifier asked for"


def test_the_hook_returns_none_with_a_stable_code() -> None:
    reward = SkillRubricReward()
    scored = asyncio.run(reward.score_details([SCORED[0]] * 2, [SCORED[1]] * 2,
                                              ground_truth=[SCORED[2], None]))
    (value, _), (missing, detail) = scored
    assert value == 1.0 and missing is None
    assert detail["unscored_code"] in UNSCORED_CODES and detail["unscored"]
    assert "Error" not in detail["unscored"] and "{" not in detail["unscored"]  # not a repr


def _post(url: str, samples: list[tuple[str, str, str | None]]) -> dict:
    return httpx.post(f"{url}/get_reward", json={
        "query": [p + r for p, r, _ in samples], "prompts": [p for p, _, _ in samples],
        "labels": [label for _, _, label in samples]}, timeout=30).json()


@pytest.mark.parametrize(("policy", "sent"), [("null", None), ("fallback:-1", -1.0)])
def test_get_reward_sends_null_or_the_chosen_fallback_with_the_reason(
        tmp_path: Path, policy: str, sent: float | None) -> None:
    app = serve_with(tmp_path, "garbled-verifier", _garbled, unscored=policy)
    with running(app) as url:
        body = _post(url, [SCORED, UNSCORED])
    assert body["rewards"] == [1.0, sent]
    assert body["scores"] == [1.0, None if sent is None else 0.0]
    assert body["extra_logs"]["unscored"][0] is None
    why = body["extra_logs"]["unscored"][1]
    assert why["code"] in UNSCORED_CODES and why["reason"]
    assert body["extra_logs"]["unscored_policy"] == policy


def test_turn_rewards_say_null_with_the_code(tmp_path: Path) -> None:
    app = serve_with(tmp_path, "garbled-verifier", _garbled)
    with running(app) as url:
        body = httpx.post(f"{url}/turn_rewards", json={"trajectories": [
            {"prompt": UNSCORED[0], "completion": UNSCORED[1]}]}, timeout=30).json()
    [result] = body["trajectories"]
    assert result["reward"] is None and result["satisfaction"] is None
    assert result["detail"]["unscored_code"] == "verifier_failed"


def test_an_unknown_policy_is_refused() -> None:
    for text in ("zero", "fallback:", "fallback:nan", "null:1"):
        with pytest.raises(ConfigError, match="fallback:<number>"):
            UnscoredPolicy.parse(text)


def test_verl_names_the_unscored_sample_unless_a_fallback_is_set(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTCREDIT_BANK", raising=False)
    monkeypatch.delenv("AGENTCREDIT_UNSCORED", raising=False)
    with pytest.raises(ConfigError, match=r"sample 1 could not be scored.*AGENTCREDIT_UNSCORED"):
        hooks.compute_score_batch(["math"] * 2, ["<answer>2</answer>", "no answer"],
                                  ["2", None])  # type: ignore[list-item]
    monkeypatch.setenv("AGENTCREDIT_UNSCORED", "fallback:-0.5")
    results = hooks.compute_score_batch(["math"] * 2, ["<answer>2</answer>", "x"],
                                        ["2", None])  # type: ignore[list-item]
    assert [r["score"] for r in results] == [1.0, -0.5]
    assert "unscored_code" not in results[0] and results[1]["unscored_code"] in UNSCORED_CODES


def test_turn_reward_rows_leave_s_undefined_where_no_criterion_applies() -> None:
    rubric = (RubricCriterion(id="R1", statement="s", evidence="e", failure="f"),)

    def verdict(trial_id: str, status: str) -> TrialVerdict:
        return TrialVerdict(
            trial_id=trial_id, task_id="t", skill_id="k", skill_version=1, skill_hash="h",
            turn_steps=(2,), criteria=(CriterionVerdict(
                criterion_id="R1", status=status, satisfied=False,  # type: ignore[arg-type]
                states=(TurnState(turn=1, step=2, state="missing"),),
                responsibility=(0.0,)),),
            model="m", prompt_version="p", seed=0)

    table = reward_table([Scored(verdict=verdict("a", "applicable"), rubric=rubric,
                                 outcome=1.0, group="g"),
                          Scored(verdict=verdict("b", "not_applicable"), rubric=rubric,
                                 outcome=0.0, group="g")])
    by_trial = {row["trial_id"]: row for row in table.rows}
    assert by_trial["a"]["satisfaction"] == 0.0 and by_trial["b"]["satisfaction"] is None


@pytest.mark.parametrize("policy", ["null", "fallback:-1"])
def test_the_verl_service_client_keeps_the_reason(tmp_path: Path, policy: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from agentcredit.serve import client

    app = serve_with(tmp_path, "garbled-verifier", _garbled, unscored=policy)
    with running(app) as url:
        monkeypatch.setenv("AGENTCREDIT_REWARD_URL", url)
        extras = [{"prompt": SCORED[0]}, {"prompt": UNSCORED[0]}]
        if policy == "null":
            with pytest.raises(ConfigError, match="sample 1 could not be scored "
                                                  r"\(verifier_failed.*--unscored"):
                client.compute_score_batch(["m"] * 2, [SCORED[1], UNSCORED[1]],
                                           [SCORED[2], None], extras)  # type: ignore[list-item]
            return
        results = client.compute_score_batch(["m"] * 2, [SCORED[1], UNSCORED[1]],
                                             [SCORED[2], None], extras)  # type: ignore[list-item]
    assert [r["score"] for r in results] == [1.0, -1.0]
    assert "unscored_code" not in results[0] and results[1]["unscored_code"] == "verifier_failed"


def test_service_responses_never_hold_a_secret(tmp_path: Path) -> None:
    key = "sk-" + "Rt5" * 9
    app = serve_with(tmp_path, "garbled-verifier", _garbled)
    with running(app) as url:
        reward = _post(url, [(SCORED[0], f"<answer>{key}</answer>", "2")])
        turns = httpx.post(f"{url}/turn_rewards", json={"trajectories": [
            {"prompt": SCORED[0], "completion": f"<answer>{key}</answer>",
             "ground_truth": "2"}]}, timeout=30)
    assert key not in str(reward) and key not in turns.text
    assert "REDACTED" in turns.text  # the answer it read is shown, redacted


def test_an_outcome_alone_says_the_process_was_not_scored(tmp_path: Path) -> None:
    """Issue 66: the verifier failed but the label was checked: the reward is the outcome
    alone, and both surfaces say so with a stable code and a sentence, never a repr."""
    app = serve_with(tmp_path, "garbled-verifier", _garbled)
    with running(app) as url:
        body = _post(url, [SCORED])
        turns = httpx.post(f"{url}/turn_rewards", json={"trajectories": [
            {"prompt": SCORED[0], "completion": SCORED[1], "ground_truth": SCORED[2]},
            {"prompt": UNSCORED[0], "completion": UNSCORED[1]}]}, timeout=30).json()
    assert body["rewards"] == [1.0] and body["extra_logs"]["unscored"] == [None]
    [why] = body["extra_logs"]["process_unscored"]
    assert why["code"] == "verifier_failed" and "outcome alone" in why["reason"]
    alone, missing = turns["trajectories"]
    assert alone["reward"] == 1.0 and alone["detail"]["process_code"] == "verifier_failed"
    for text in (why["reason"], alone["detail"]["process"], missing["detail"]["unscored"]):
        assert "Failed(" not in text and "turn verifier failed" in text, text


@pytest.mark.parametrize("policy", ["null", "fallback:-1"])
def test_the_start_up_line_names_the_choice(tmp_path: Path, policy: str,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    uvicorn = pytest.importorskip("uvicorn")
    from typer.testing import CliRunner

    from agentcredit.cli.app import app
    from agentcredit.llm import register_script
    from tests.serve.conftest import make_bank_dir

    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: None)
    register_script("garbled-verifier", _garbled)
    out = CliRunner().invoke(app, ["serve", "--bank", str(make_bank_dir(tmp_path)), "--model",
                                   "scripted/garbled-verifier", "--unscored", policy])
    text = " ".join(out.output.split())
    assert out.exit_code == 0 and f"cannot score gets {policy}" in text, text
    assert "its outcome alone" in text


def _other_ids(messages: object, schema: object) -> str:
    import json

    from tests.rewards import scripted_verifier

    answer = scripted_verifier.answer(messages, schema)  # type: ignore[arg-type]
    if (schema or {}).get("title") != "FineGroupAnswer":  # type: ignore[union-attr]
        return answer
    parsed = json.loads(answer)
    for n, criterion in enumerate(parsed["criteria"]):
        criterion["criterion_id"] = f"X{n}"  # criteria the rubric does not have
    return json.dumps(parsed)


def test_a_fine_answer_with_other_ids_is_not_called_nothing_applicable(tmp_path: Path) -> None:
    app = serve_with(tmp_path, "other-ids-verifier", _other_ids)
    with running(app) as url:
        body = httpx.post(f"{url}/turn_rewards", json={"trajectories": [
            {"prompt": UNSCORED[0], "completion": UNSCORED[1]}]}, timeout=30).json()
    [result] = body["trajectories"]
    assert result["reward"] is None
    assert result["detail"]["unscored_code"] == "verifier_failed"
    assert "no usable verdict" in result["detail"]["unscored"]
    assert "no rubric criterion applicable" not in result["detail"]["unscored"]
