"""Co-evolution end to end with a simulated runner and scripted proposer and verifier.

Good guidance patches raise every rollout's outcome (common random numbers per task and
round), bad ones lower it; the rubric starts with a flaky criterion (wrong on about a
quarter of the trajectories) and two that ignore the outcome. The first rubric proposal
relaxes every criterion (must be rejected), the second replaces the flaky one by an exact
one (must be accepted).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentcredit.cli.app import app
from agentcredit.evolve.loop import EvolveOptions, evolve
from agentcredit.evolve.runners import register_runner
from agentcredit.llm import ModelClient, make_provider, register_script
from agentcredit.schema import GuidanceStage, Lineage, RubricCriterion, Skill, Task
from agentcredit.skills.bank import freeze_bank, load_bank, make_bank
from tests.evolve.simulated import SimulatedRunner
from tests.rewards import scripted_verifier

runner = CliRunner()
TASKS = [Task(id=f"t{i}", instruction=f"Produce the report number {i}.", benchmark="sim",
              source_path="-") for i in range(1, 9)]


def criterion(cid: str, kind: str, what: str) -> dict[str, Any]:
    return {"statement": f"{kind}: {what}",
            "evidence": f"An output shows the {what} value.",
            "failure": f"No output shows the {what} value.", "weight": 1.0}


START_RUBRIC = [criterion("R1", "FLAKY", "final result"), criterion("R2", "NOISE", "inputs"),
                criterion("R3", "NOISE", "input listing")]


def _skill() -> Skill:
    return Skill(
        id="report-work", title="Report work", applicability="Producing numbered reports.",
        guidance=(GuidanceStage(name="Inspect", action="Look at the inputs."),
                  GuidanceStage(name="Produce", action="Write the report."),
                  GuidanceStage(name="Check", action="Check the result.")),
        rubric=tuple(RubricCriterion(id=f"R{n}", **c) for n, c in enumerate(START_RUBRIC, 1)),
        lineage=Lineage(stage="import", sources=("test",)))


def _outcome(task: Task, skill: Skill, u: float) -> float:
    text = skill.guidance_text()
    p = 0.5 + 0.02 * text.count("GOOD") - 0.02 * text.count("BAD")
    return min(1.0, max(0.0, p + (u - 0.5)))


def _proposer() -> tuple[list[str], Any]:
    calls: list[str] = []

    def script(messages: list[dict[str, Any]], schema: dict[str, Any] | None) -> str:
        title = (schema or {}).get("title")
        text = scripted_verifier.text_of(messages)
        calls.append(title or "")
        if title == "GuidanceDiagnosis":
            guidance = text.split("GUIDANCE:")[1].split("RUBRIC:")[0]
            good, bad = guidance.count("GOOD"), guidance.count("BAD")
            n = calls.count("GuidanceDiagnosis")
            good, bad = (good + 1, bad) if n % 2 else (good, bad + 1)
            action = "Check the result. " + "GOOD " * good + "BAD " * bad
            return json.dumps({"defects": ["the check stage is vague"], "genuine": True,
                               "guidance": [{"name": "Inspect", "action": "Look at the inputs."},
                                            {"name": "Produce", "action": "Write the report."},
                                            {"name": "Check", "action": action.strip()}],
                               "rationale": "good" if n % 2 else "bad"})
        if title == "RubricDiagnosis":
            n = calls.count("RubricDiagnosis")
            if n == 1:
                relaxed = [criterion("R", "EASY", w) for w in ("final result", "inputs",
                                                               "input listing")]
                return json.dumps({"defects": [{"kind": "coverage", "description": "strict"}],
                                   "genuine": True, "rubric": relaxed, "rationale": "relax"})
            if n == 2:
                exact = [criterion("R1", "ALIGNED", "final result"), *START_RUBRIC[1:]]
                return json.dumps({"defects": [{"kind": "judge_instability",
                                                "criterion_id": "R1",
                                                "description": "R1 flips"}],
                                   "genuine": True, "rubric": exact, "rationale": "fix R1"})
            return json.dumps({"defects": [], "genuine": False, "rubric": None,
                               "rationale": "no defect"})
        raise ValueError(title)

    return calls, script


def _h(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest(), 16)


def verifier(messages: list[dict[str, Any]], schema: dict[str, Any] | None) -> str:
    title = (schema or {}).get("title")
    if title != "FineGroupAnswer":
        return scripted_verifier.answer(messages, schema)
    text = scripted_verifier.text_of(messages)
    rubric = text.split("<rubric>")[1].split("</rubric>")[0]
    inputs = re.search(r"inputs of \S+ \([^)]*\)", text).group(0)  # type: ignore[union-attr]
    result = re.search(r"result: \w+", text).group(0)  # type: ignore[union-attr]
    return json.dumps({"criteria": [
        {"criterion_id": criterion, **_fine(kind, inputs, result)}
        for criterion, kind in re.findall(r"^(R\d+): (\w+):", rubric, re.MULTILINE)]})


def _fine(kind: str, inputs: str, result: str) -> dict[str, Any]:
    success = result == "result: success"
    satisfied = {"ALIGNED": success, "FLAKY": success != (_h(inputs) % 4 == 0),
                 "NOISE": _h(inputs + kind) % 2 == 0, "EASY": True}[kind]
    step = 3 if kind in ("ALIGNED", "FLAKY") else 2
    quote = result if step == 3 else inputs
    if not satisfied:
        return {"satisfied": False, "states": [], "responsibility": []}
    return {"satisfied": True, "states": [
        {"step": step, "state": "verified", "evidence": [{"step": step, "quote": quote}]}],
        "responsibility": [{"step": step, "weight": 1.0}]}


def _setup(tmp_path: Path) -> Path:
    bank_dir = tmp_path / "bank"
    freeze_bank(make_bank([_skill()], benchmark="sim", embedding="lexical-tfidf-1",
                          rules_version="r", prompt_version="p"), bank_dir)
    return bank_dir


def _run(bank_dir: Path, proposer: Any, sim: SimulatedRunner, rounds: int = 20) -> Any:
    register_script("evolve-proposer", proposer)
    register_script("evolve-verifier", verifier)
    return asyncio.run(evolve(
        bank_dir, "report-work", TASKS, sim, ModelClient(make_provider("scripted/evolve-proposer")),
        ModelClient(make_provider("scripted/evolve-verifier")),
        EvolveOptions(rounds=rounds, h=5, seed=7)))


def test_good_patches_are_accepted_and_bad_ones_rejected(tmp_path: Path) -> None:
    bank_dir = _setup(tmp_path)
    calls, proposer = _proposer()
    sim = SimulatedRunner(outcome=_outcome)
    report = _run(bank_dir, proposer, sim)
    assert (calls.count("GuidanceDiagnosis"), calls.count("RubricDiagnosis")) == (20, 4)
    guidance = [e for e in report.events if e.kind == "guidance"]
    assert len(guidance) == 20
    good = [e for e in guidance if "GOOD" in e.after and e.after.count("GOOD") >
            e.before.count("GOOD")]
    bad = [e for e in guidance if e.after.count("BAD") > e.before.count("BAD")]
    assert len(good) == 10 and all(e.accepted for e in good), [e.reason for e in good]
    assert len(bad) == 10 and not any(e.accepted for e in bad)
    assert all(e.numbers["valid_pairs"] == 8 for e in guidance)
    rubric = [e for e in report.events if e.kind == "rubric"]
    assert [e.round for e in rubric] == [5, 10, 15, 20]
    assert not rubric[0].accepted and "EASY" in rubric[0].after
    assert rubric[1].accepted, rubric[1].reason
    assert rubric[1].numbers["gain"] > 0 and rubric[1].numbers["lower_bound"] >= -0.02
    assert not rubric[2].proposed and not rubric[3].proposed
    bank = load_bank(bank_dir)
    final = bank.get("report-work")
    assert final is not None and final.version == 12  # 10 guidance + 1 rubric accepted
    assert final.applicability == "Producing numbered reports."
    assert final.rubric is not None and final.rubric[0].statement.startswith("ALIGNED")
    assert final.guidance_text().count("GOOD") == 10 and "BAD" not in final.guidance_text()
    assert [e.bank_hash for e in bank.history][-1] == bank.hash
    assert len(bank.history) == 24
    # Every rollout label was run once.
    assert len(sim.calls) == len(set(sim.calls)) == 20 + 20

    shown = runner.invoke(app, ["skills", "history", str(bank_dir)])
    assert shown.exit_code == 0, shown.output
    assert "accepted" in shown.output and "rejected" in shown.output
    assert "+Check the result. GOOD" in shown.output.replace("3. **Check**: ", "")
    assert "candidate_mean=" in shown.output and "lower_bound=" in shown.output
    as_json = json.loads(runner.invoke(app, ["skills", "history", str(bank_dir),
                                             "--json"]).output)
    assert len(as_json) == 24 and as_json[0]["numbers"]["valid_pairs"] == 8


def test_a_killed_evolve_resumes_at_its_round(tmp_path: Path) -> None:
    bank_dir = _setup(tmp_path)
    calls, proposer = _proposer()

    def dying(messages: list[dict[str, Any]], schema: dict[str, Any] | None) -> str:
        if calls.count("GuidanceDiagnosis") == 7 and (schema or {}).get(
                "title") == "GuidanceDiagnosis":
            raise KeyboardInterrupt  # the process dies in round 8
        return proposer(messages, schema)

    sim = SimulatedRunner(outcome=_outcome)
    with pytest.raises(KeyboardInterrupt):
        _run(bank_dir, dying, sim, rounds=10)
    assert len(load_bank(bank_dir).history) == 8  # rounds 1-7 guidance + round 5 rubric
    before = list(sim.calls)
    report = _run(bank_dir, proposer, sim, rounds=10)
    assert report.replayed == 8
    assert [(e.round, e.kind) for e in report.events] == [(8, "guidance"), (9, "guidance"),
                                                          (10, "guidance"), (10, "rubric")]
    assert len(sim.calls) == len(set(sim.calls))  # no rollout ran twice
    assert set(before) <= set(sim.calls)
    assert calls.count("GuidanceDiagnosis") == 10  # 7 before the kill, 3 after
    assert len(load_bank(bank_dir).history) == 12


def test_evolve_command_with_a_registered_simulated_runner(tmp_path: Path) -> None:
    bank_dir = _setup(tmp_path)
    _, proposer = _proposer()
    register_script("cli-proposer", proposer)
    register_script("cli-verifier", verifier)
    register_runner("sim", SimulatedRunner(outcome=_outcome))
    tasks = tmp_path / "tasks"
    for task in TASKS[:4]:
        folder = tasks / task.id
        (folder / "tests").mkdir(parents=True)
        (folder / "instruction.md").write_text(task.instruction)
        (folder / "task.toml").write_text('version = "1.0"\n')
    out = runner.invoke(app, ["skills", "evolve", str(bank_dir), "--tasks", str(tasks),
                              "--runner", "simulated/sim", "--model", "scripted/cli-proposer",
                              "--verifier-model", "scripted/cli-verifier", "--rounds", "2",
                              "--h", "2", "--skill", "report-work"])
    assert out.exit_code == 0, out.output
    assert "round 1 guidance: accepted" in out.output
    assert "round 2 rubric" in out.output
    bad = runner.invoke(app, ["skills", "evolve", str(bank_dir), "--tasks", str(tasks),
                              "--runner", "nope", "--model", "scripted/cli-proposer"])
    assert bad.exit_code == 2 and "unknown runner" in bad.output


def test_evolve_with_a_runner_program_that_is_not_installed_exits_2(tmp_path: Path) -> None:
    bank_dir = _setup(tmp_path)
    _, proposer = _proposer()
    register_script("cli-proposer-2", proposer)
    tasks = tmp_path / "tasks"
    folder = tasks / TASKS[0].id
    (folder / "tests").mkdir(parents=True)
    (folder / "instruction.md").write_text(TASKS[0].instruction)
    (folder / "task.toml").write_text('version = "1.0"\n')
    for args in (["--runner", "harbor", "--harbor", str(tmp_path / "no-harbor-here")],
                 ["--runner", "command", "--command", "no-such-runner-xyz --tasks {tasks}"]):
        out = runner.invoke(app, ["skills", "evolve", str(bank_dir), "--tasks", str(tasks),
                                  *args, "--model", "scripted/cli-proposer-2"],
                            env={"COLUMNS": "200"})
        assert out.exit_code == 2, out.output
        assert "not found" in out.output


def test_the_loop_verifies_with_its_seed(tmp_path: Path) -> None:
    """Regression: the seed reached rollouts but not the turn verifier."""
    import sqlite3

    bank_dir = _setup(tmp_path)
    _, proposer = _proposer()
    _run(bank_dir, proposer, SimulatedRunner(outcome=_outcome), rounds=1)
    db = sqlite3.connect(bank_dir / "evolve" / "evolve.sqlite")
    seeds = {json.loads(output)["seed"] for (output,) in
             db.execute("SELECT output FROM units WHERE stage = 'verdicts'")}
    db.close()
    assert seeds == {7}
