"""The turn verifier: causal rule in code, image criteria, `skills reward` end to end."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentcredit.cli.app import app
from agentcredit.evidence.view import StepEvidence
from agentcredit.llm import ModelSpec, register_script
from agentcredit.rewards.causal import enforce
from agentcredit.rewards.prompts import FineAnswer
from agentcredit.schema import EvidenceRules
from agentcredit.skills.bank import load_bank
from agentcredit.store.run_store import RunStore
from tests.conftest import EXAMPLES
from tests.llm.batch_rounds import batch_round
from tests.llm.fake_server import FakeLLMServer
from tests.owned_values import FOREIGN, OWNED, capturing, planted_examples
from tests.rewards import scripted_verifier
from tests.skills import scripted_skills

runner = CliRunner()
EVIDENCE = {2: StepEvidence(2, "bash ls", "sales.csv"),
            4: StepEvidence(4, "bash python3 s.py", "wrote summary.json"),
            6: StepEvidence(6, "bash cat summary.json", '{"east": 10.5}')}


def _fine(states: list[dict[str, Any]], satisfied: bool = True,
          responsibility: list[dict[str, Any]] | None = None) -> FineAnswer:
    return FineAnswer.model_validate({"satisfied": satisfied, "states": states,
                                      "responsibility": responsibility or []})


def test_a_citation_of_a_later_step_is_refused_and_the_state_not_raised() -> None:
    answer = _fine([
        {"step": 2, "state": "verified", "evidence": [{"step": 6, "quote": '"east": 10.5'}]},
        {"step": 6, "state": "verified", "evidence": [{"step": 6, "quote": '"east": 10.5'}]}],
        responsibility=[{"step": 2, "weight": 1}, {"step": 6, "weight": 3}])
    verdict = enforce("R1", answer, [2, 4, 6], EVIDENCE, [2, 6])
    assert [s.state for s in verdict.states] == ["missing", "missing", "verified"]
    assert "step 2: citation of later step 6 refused" in verdict.corrections
    assert verdict.states[2].citations[0].step == 6
    assert verdict.satisfied and verdict.responsibility == (0.25, 0.0, 0.75)


def test_fake_quotes_and_unsupported_satisfaction_are_refused() -> None:
    answer = _fine([{"step": 4, "state": "supported",
                     "evidence": [{"step": 4, "quote": "totals are all correct"}]}])
    verdict = enforce("R1", answer, [2, 4, 6], EVIDENCE, [4])
    assert [s.state for s in verdict.states] == ["missing"] * 3
    assert not verdict.satisfied and verdict.responsibility == (0.0, 0.0, 0.0)
    assert any("quote not found in step 4" in c for c in verdict.corrections)
    assert any("satisfied not accepted" in c for c in verdict.corrections)


def test_a_citation_of_the_agents_own_command_does_not_raise_a_state() -> None:
    answer = _fine([{"step": 4, "state": "verified",
                     "evidence": [{"step": 4, "quote": "python3 s.py"}]}])
    verdict = enforce("R1", answer, [2, 4, 6], EVIDENCE, [4])
    assert [s.state for s in verdict.states] == ["missing"] * 3 and not verdict.satisfied
    assert any("is the agent's own action, not an output" in c for c in verdict.corrections)


def test_an_echo_of_the_agents_command_in_the_output_does_not_raise_a_state() -> None:
    echoing = {6: StepEvidence(6, 'run_shell_command {"command": "cat /app/summary.json"}',
                               'Command: cat /app/summary.json\nOutput: {"east": 10.5}',
                               commands=("cat /app/summary.json",))}
    echo = _fine([{"step": 6, "state": "verified",
                   "evidence": [{"step": 6, "quote": "Command: cat /app/summary.json"}]}])
    verdict = enforce("R1", echo, [6], echoing, [6])
    assert [s.state for s in verdict.states] == ["missing"] and not verdict.satisfied
    assert any("is the agent's own action, not an output" in c for c in verdict.corrections)
    shown = _fine([{"step": 6, "state": "verified", "evidence": [
        {"step": 6, "quote": 'Command: cat /app/summary.json\nOutput: {"east": 10.5}'}]}])
    assert [s.state for s in enforce("R1", shown, [6], echoing, [6]).states] == ["verified"]


def test_states_carry_forward_and_lower_without_proof() -> None:
    answer = _fine([
        {"step": 2, "state": "hypothesis", "evidence": [{"step": 2, "quote": "sales.csv"}]},
        {"step": 6, "state": "contradicted"}], satisfied=False)
    verdict = enforce("R1", answer, [2, 4, 6], EVIDENCE, [2, 6])
    assert [s.state for s in verdict.states] == ["hypothesis", "hypothesis", "contradicted"]
    given_none = enforce("R1", _fine([{"step": 4, "state": "supported", "evidence": [
        {"step": 4, "quote": "wrote summary"}]}]), [2, 4, 6], EVIDENCE, [4])
    assert given_none.responsibility == (0.0, 1.0, 0.0)  # all to the first best turn


def _bank(tmp_path: Path) -> Path:
    register_script("rubrics", scripted_skills.answer)
    bank = tmp_path / "bank"
    out = runner.invoke(app, ["skills", "import", str(EXAMPLES / "skills"), "--out", str(bank),
                              "--model", "scripted/rubrics", "--no-cache"])
    assert out.exit_code == 0, out.output
    return bank


def test_skills_reward_writes_one_row_per_agent_turn(tmp_path: Path) -> None:
    calls: list[str] = []

    def script(messages: list[dict[str, Any]], schema: dict[str, Any] | None) -> str:
        calls.append((schema or {}).get("title", ""))
        return scripted_verifier.answer(messages, schema)

    register_script("verifier", script)
    bank, run = _bank(tmp_path), tmp_path / "run"
    args = ["skills", "reward", str(bank), str(EXAMPLES / "jobs"), "--tasks",
            str(EXAMPLES / "tasks"), "--out", str(run), "--model", "scripted/verifier",
            "--process-weight", "0.5"]
    out = runner.invoke(app, args)
    assert out.exit_code == 0, out.output
    assert "task log-error-filter → skill log-level-filtering" in out.output
    rows = [json.loads(line) for line in (run / "turn_rewards.jsonl").read_text().splitlines()]
    assert len(rows) == 23  # every agent turn of the 8 example trials
    per_trial: dict[str, list[int]] = {}
    for row in rows:
        per_trial.setdefault(row["trial_id"], []).append(row["turn"])
    assert len(per_trial) == 8 and all(t == list(range(1, len(t) + 1))
                                       for t in per_trial.values())
    first = rows[0]
    assert set(first["states"]) == {"R1", "R2", "R3"}
    assert first["combined"] == pytest.approx(first["outcome_advantage"] +
                                              0.5 * first["process_advantage"])
    # One grouped fine call per trial: the three criteria share their candidate turns.
    assert calls.count("CoarseAnswer") == 8 and calls.count("FineGroupAnswer") == 8
    assert (run / "turn_rewards.parquet").exists()
    html = (run / "turn_rewards.html").read_text()
    assert 'class="strip"' in html and "-turn-1" in html
    # Verdicts with their citations are in the run store; a rerun pays for nothing.
    verdicts = RunStore(run).turn_verdicts()
    assert len(verdicts) == 8
    cited = [s for v in verdicts.values() for c in v.criteria for s in c.states if s.citations]
    assert cited and all(q.step <= s.step for s in cited for q in s.citations)
    again = runner.invoke(app, args)
    assert again.exit_code == 0 and "resumed 8" in again.output
    assert calls.count("CoarseAnswer") == 8


def test_skills_reward_without_tasks_takes_each_trials_task_from_its_own_log(
        tmp_path: Path) -> None:
    register_script("verifier-alone", lambda m, s: scripted_verifier.answer(m, s))
    bank, run = _bank(tmp_path), tmp_path / "run"
    out = runner.invoke(app, ["skills", "reward", str(bank), str(EXAMPLES / "jobs"), "--out",
                              str(run), "--model", "scripted/verifier-alone"],
                        env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    assert "no skill retrieved" not in out.output
    assert "task log-error-filter → skill log-level-filtering" in out.output
    rows = [json.loads(line) for line in (run / "turn_rewards.jsonl").read_text().splitlines()]
    assert len({r["trial_id"] for r in rows}) == 8 and len(rows) == 23


def test_a_harbor_job_without_tasks_or_instructions_says_why(tmp_path: Path) -> None:
    import shutil

    register_script("verifier-why", lambda m, s: scripted_verifier.answer(m, s))
    bank, run = _bank(tmp_path), tmp_path / "run"
    job = tmp_path / "job"
    shutil.copytree(EXAMPLES / "jobs" / "toy-agent-noskills", job)
    blind = job / "json-config-migrate__Rw8jN4s" / "agent" / "trajectory.json"
    doc = json.loads(blind.read_text())
    doc["steps"] = [s for s in doc["steps"] if s["source"] != "user"]
    for n, step in enumerate(doc["steps"], 1):
        step["step_id"] = n
    blind.write_text(json.dumps(doc))
    out = runner.invoke(app, ["skills", "reward", str(bank), str(job), "--out", str(run),
                              "--model", "scripted/verifier-why"], env={"COLUMNS": "250"})
    assert out.exit_code == 0, out.output
    assert "json-config-migrate__Rw8jN4s: its task is unknown" in " ".join(out.output.split())
    rows = [json.loads(line) for line in (run / "turn_rewards.jsonl").read_text().splitlines()]
    assert len({r["trial_id"] for r in rows}) == 3


def test_a_verifier_citing_later_steps_is_corrected_end_to_end(tmp_path: Path) -> None:
    register_script("later", lambda m, s: scripted_verifier.answer(m, s, cite_later=True))
    bank, run = _bank(tmp_path), tmp_path / "run"
    out = runner.invoke(app, ["skills", "reward", str(bank), str(EXAMPLES / "jobs"),
                              "--out", str(run), "--model", "scripted/later",
                              "--skill", "log-level-filtering"])
    assert out.exit_code == 0, out.output
    verdict = RunStore(run).turn_verdicts()["csv-sales-summary__Qm4tR2a"]
    corrected = [c for c in verdict.criteria if any("later step" in x for x in c.corrections)]
    assert corrected
    for criterion in corrected:
        assert criterion.states[0].state == "missing"  # not raised by later evidence


def test_an_image_criterion_without_images_is_unverifiable(tmp_path: Path) -> None:
    register_script("verifier2", scripted_verifier.answer)
    bank_dir = _bank(tmp_path)
    bank = load_bank(bank_dir)
    skill = bank.get("log-level-filtering")
    assert skill is not None and skill.rubric is not None
    import asyncio

    from agentcredit.formats import load
    from agentcredit.llm import ModelClient, make_provider
    from agentcredit.rewards.verifier import verify_trial

    criterion = skill.rubric[0].model_copy(update={
        "evidence": "A screenshot of the terminal shows the filtered lines."})
    pictured = skill.model_copy(update={"rubric": (criterion, *skill.rubric[1:])})
    trial = load([EXAMPLES / "jobs"]).trials[0]
    model = ModelClient(make_provider("scripted/verifier2"))
    verdict = asyncio.run(verify_trial(trial, pictured, model, "do it"))
    assert not isinstance(verdict, (type(None),)) and hasattr(verdict, "criteria")
    statuses = {c.criterion_id: c.status for c in verdict.criteria}  # type: ignore[union-attr]
    assert statuses == {"R1": "unverifiable", "R2": "applicable", "R3": "applicable"}


def _responder(body: dict[str, Any]) -> str:
    schema = body["response_format"]["json_schema"]["schema"]
    return scripted_verifier.answer(body["messages"], schema)


def test_batch_reward_takes_two_rounds_then_no_live_calls(tmp_path: Path) -> None:
    bank, run = _bank(tmp_path), tmp_path / "run"
    cache = run / "responses.sqlite"
    with FakeLLMServer(responder=_responder) as server:
        base = ["skills", "reward", str(bank), str(EXAMPLES / "jobs"), "--tasks",
                str(EXAMPLES / "tasks"), "--out", str(run),
                "--model", "openai/verifier", "--base-url", f"{server.url}/v1"]
        for round_no, expected in ((1, 8), (2, 8)):  # coarse, then one grouped fine call
            out = runner.invoke(app, [*base, "--batch"], env={"OPENAI_API_KEY": "k"})
            assert out.exit_code == 0 and "waiting for the" in out.output, out.output
            assert batch_round(cache, tmp_path, str(round_no), _responder) == expected
        final = runner.invoke(app, base, env={"OPENAI_API_KEY": "k"})
        assert final.exit_code == 0, final.output
        assert server.count == 0
    assert len((run / "turn_rewards.jsonl").read_text().splitlines()) == 23


def test_turn_reward_page_renders_in_headless_chromium(tmp_path: Path) -> None:
    import shutil
    import subprocess

    from tests.conftest import ROOT

    register_script("verifier-page", scripted_verifier.answer)
    bank, run = _bank(tmp_path), tmp_path / "run"
    out = runner.invoke(app, ["skills", "reward", str(bank), str(EXAMPLES / "jobs"), "--tasks",
                              str(EXAMPLES / "tasks"), "--out", str(run), "--model",
                              "scripted/verifier-page"])
    assert out.exit_code == 0, out.output
    page = run / "turn_rewards.html"
    html = page.read_text()
    assert "http://" not in html and "https://" not in html and "<script src" not in html
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("chromium is not installed (.ci/run installs it)")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'profile'}"]
    shot = ROOT / "test-output" / "turn_rewards.png"
    shot.parent.mkdir(exist_ok=True)
    subprocess.run([browser, *flags, f"--screenshot={shot}", "--window-size=1200,1600",
                    page.resolve().as_uri()], capture_output=True, timeout=120, check=False)
    assert shot.exists() and shot.stat().st_size > 10_000
    dom = subprocess.run([browser, *flags, "--dump-dom", page.resolve().as_uri()],
                         capture_output=True, text=True, timeout=120, check=False).stdout
    strips = dom.count('class="strip"')
    assert strips == 8  # one strip per trial
    links = re.findall(r'<a href="#([^"]+-turn-\d+)"', dom)
    assert len(links) == 23 and all(f'id="{anchor}"' in dom for anchor in links)


def test_the_verifiers_raw_responses_are_kept_with_its_verdicts(tmp_path: Path) -> None:
    import sqlite3

    from agentcredit.rewards import turn_rewards

    register_script("raw-verifier", scripted_verifier.answer)
    result = turn_rewards(_bank(tmp_path), [EXAMPLES / "jobs"], tmp_path / "run",
                          model=ModelSpec("scripted/raw-verifier", no_cache=True),
                          tasks=[EXAMPLES / "tasks"])
    assert len(result.summary.verified) == 8
    db = sqlite3.connect(tmp_path / "run" / "run.sqlite")
    kept = db.execute("SELECT trial_id, COUNT(*), SUM(ok) FROM responses WHERE kind = "
                      "'turn-verifier' GROUP BY trial_id").fetchall()
    db.close()
    assert len(kept) == 8 and all(n == 2 and ok == 2 for _, n, ok in kept)  # coarse + fine
    again = turn_rewards(_bank(tmp_path), [EXAMPLES / "jobs"], tmp_path / "run",
                         model=ModelSpec("scripted/raw-verifier", no_cache=True),
                         tasks=[EXAMPLES / "tasks"])
    assert len(again.summary.resumed) == 8  # nothing asked twice, nothing kept twice


def test_skills_reward_keeps_a_value_only_the_tasks_verifier_names(tmp_path: Path) -> None:
    from agentcredit.rewards import turn_rewards

    tasks, jobs = planted_examples(tmp_path)
    test_file = tasks / "log-error-filter" / "tests" / "test_outputs.py"
    test_file.write_text(test_file.read_text() + f"\nPLANTED_KEY = {OWNED!r}\n")
    seen: list[str] = []
    register_script("owned-turns", capturing(seen, scripted_verifier.answer))
    turn_rewards(_bank(tmp_path), [jobs], tmp_path / "run",
                 model=ModelSpec("scripted/owned-turns", no_cache=True), tasks=[tasks])
    shown = [text for text in seen if "other_key=" in text]
    assert shown and all(f"key={OWNED}" in text for text in shown)
    assert all(FOREIGN not in text for text in shown)


def test_a_failed_verifier_call_gives_no_reward_and_a_rerun_asks_only_it_again(
        tmp_path: Path) -> None:
    bank, run = _bank(tmp_path), tmp_path / "run"

    def answer(body: dict[str, Any]) -> str:
        return scripted_verifier.answer(body["messages"],
                                        body["response_format"]["json_schema"]["schema"])

    def fine_fails(index: int, body: dict[str, Any]) -> str | None:
        return "500" if "FineGroupAnswer" in json.dumps(body.get("response_format")) else None

    args = ["skills", "reward", str(bank), str(EXAMPLES / "jobs"), "--tasks",
            str(EXAMPLES / "tasks"), "--out", str(run), "--model", "openai/verifier"]
    env = {"OPENAI_API_KEY": "k", "COLUMNS": "200"}
    with FakeLLMServer(responder=answer, faults=fine_fails) as broken:
        first = runner.invoke(app, [*args, "--base-url", f"{broken.url}/v1"], env=env)
    assert first.exit_code == 2, first.output  # nothing verified: 2, as `run`
    assert "failed 8" in first.output and "fine call failed: server_error" in first.output
    assert RunStore(run).turn_verdicts() == {}  # no verdict, so no reward, from a failed call
    assert not (run / "turn_rewards.jsonl").exists() or not (
        run / "turn_rewards.jsonl").read_text().strip()
    with FakeLLMServer(responder=answer) as healthy:
        second = runner.invoke(app, [*args, "--base-url", f"{healthy.url}/v1"], env=env)
        assert second.exit_code == 0, second.output
        titles = [json.dumps(b.get("response_format")) for b in healthy.requests]
        assert len(titles) == 8 and all("FineGroupAnswer" in t for t in titles)
    assert len(RunStore(run).turn_verdicts()) == 8


def test_the_rules_evidence_section_governs_the_turn_verifier(tmp_path: Path) -> None:
    answer = _fine([{"step": 4, "state": "supported",
                     "evidence": [{"step": 4, "quote": "wrote summary"}]}])
    assert enforce("R1", answer, [2, 4, 6], EVIDENCE, [4]).satisfied  # shipped rules
    strict = EvidenceRules(min_quote_chars=40)
    refused = enforce("R1", answer, [2, 4, 6], EVIDENCE, [4], strict)
    assert not refused.satisfied and any("is not specific" in c for c in refused.corrections)
    # End to end: `skills reward --rules` with a stricter evidence section refuses what
    # the shipped rules accept.
    register_script("verifier-rules", scripted_verifier.answer)
    bank = _bank(tmp_path)
    default = Path(__file__).parents[2] / "src/agentcredit/checklists/default_rules.yaml"
    rules = tmp_path / "strict.yaml"
    rules.write_text(default.read_text().replace("min_quote_chars: 6", "min_quote_chars: 400"))

    def satisfied(run: Path, *extra: str) -> int:
        out = runner.invoke(app, ["skills", "reward", str(bank), str(EXAMPLES / "jobs"),
                                  "--tasks", str(EXAMPLES / "tasks"), "--out", str(run),
                                  "--model", "scripted/verifier-rules", "--no-cache", *extra])
        assert out.exit_code == 0, out.output
        return sum(c.satisfied for v in RunStore(run).turn_verdicts().values()
                   for c in v.criteria)

    assert satisfied(tmp_path / "shipped") > 0
    assert satisfied(tmp_path / "strict", "--rules", str(rules)) == 0
