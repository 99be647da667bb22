"""Building a bank end to end with scripted models: stages, gates and repairs, resume, batch."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agentcredit.cli.app import app
from agentcredit.llm import ModelClient, make_provider, register_script
from agentcredit.schema import AgentInfo
from agentcredit.skills.bank import load_bank
from agentcredit.skills.build import BuildOptions, build_bank
from agentcredit.skills.embed import make_embedder
from agentcredit.skills.prompts import PROMPT_VERSION
from agentcredit.store.units import UnitStore
from tests.conftest import EXAMPLES, ROOT
from tests.llm.batch_rounds import batch_round
from tests.llm.fake_server import FakeLLMServer
from tests.skills import scripted_skills
from tests.skills.helpers import example_records

runner = CliRunner()


def _two_teachers() -> tuple[list[Any], list[Any]]:
    """The example trials, every second one re-labelled as run by another teacher."""
    tasks, trials = example_records()
    relabelled = [t.model_copy(update={"agent": AgentInfo(name="other-agent"),
                                       "model": "other/model"}) if i % 2 else t
                  for i, t in enumerate(trials)]
    return tasks, relabelled


def _build(tasks: list[Any], trials: list[Any], out: Path, script: str, *,
           tau: float = 0.7) -> Any:
    client = ModelClient(make_provider(f"scripted/{script}"))
    options = BuildOptions(model=client, embedder=make_embedder("lexical"), tau=tau)
    return asyncio.run(build_bank(trials, tasks, out, options))


def test_four_stages_build_a_bank_with_lineage(tmp_path: Path) -> None:
    seen: list[str] = []

    def script(messages: list[dict[str, Any]], schema: dict[str, Any] | None) -> str:
        seen.append((schema or {}).get("title", ""))
        return scripted_skills.answer(messages, schema)

    register_script("four-stages", script)
    tasks, trials = _two_teachers()
    report = _build(tasks, trials, tmp_path / "bank", "four-stages", tau=0.0)
    # 3 tasks: stage 1 per teacher x task (both teachers ran every task) = 5 units here.
    pairs = {(t.task_id, t.agent.name) for t in trials if t.steps}
    assert report.units["intra-teacher"]["asked"] == len(pairs)
    assert report.units["cross-teacher"]["asked"] == 3
    assert report.units["dual-view"]["asked"] == 3
    assert report.units["cross-task"]["asked"] == 1  # tau 0: one cluster of all three
    assert seen.count("MergeAnswer") == 1
    bank = load_bank(tmp_path / "bank")
    assert report.bank is not None and bank.hash == report.bank.hash
    [merged] = bank.skills
    assert merged.lineage.stage == "cross-task"
    assert {p.skill_id for p in merged.lineage.parents} == {
        "csv-sales-summary", "json-config-migrate", "log-error-filter"}
    assert set(merged.lineage.teachers) == {"toy-agent+toy-provider/toy-model-1",
                                            "other-agent+other/model"}
    used = {t.id for t in trials if t.steps}
    assert set(merged.lineage.trial_ids) == used
    assert [s.id for s in report.bank.skills] == [merged.id]
    assert bank.embedding == "lexical-tfidf-1" and bank.tau == 0.0
    assert bank.synthesizer == "scripted/four-stages" and bank.prompt_version == PROMPT_VERSION


def test_without_merges_each_task_keeps_its_skill(tmp_path: Path) -> None:
    register_script("no-merge", scripted_skills.answer)
    tasks, trials = example_records()
    report = _build(tasks, trials, tmp_path / "bank", "no-merge", tau=0.99)
    assert report.units["cross-task"]["asked"] == 0
    bank = load_bank(tmp_path / "bank")
    assert [s.id for s in bank.skills] == ["csv-sales-summary", "json-config-migrate",
                                           "log-error-filter"]
    log_skill = bank.get("log-error-filter")
    assert log_skill is not None and log_skill.lineage.stage == "dual-view"
    assert set(log_skill.lineage.trial_ids) == {t.id for t in trials
                                                if t.task_id == "log-error-filter"}


def test_gates_catch_a_leak_a_tool_and_six_criteria_and_accept_the_repair(
        tmp_path: Path) -> None:
    repairs: list[str] = []

    def script(messages: list[dict[str, Any]], schema: dict[str, Any] | None) -> str:
        text = scripted_skills.text_of(messages)
        if (schema or {}).get("title") != "DualViewDraft" or "TASK ID: json-config-migrate" \
                not in text:
            return scripted_skills.answer(messages, schema)
        if "failed these deterministic gates" in text:
            repairs.append(messages[-1]["content"])
            return scripted_skills.answer(messages, schema)  # the repaired answer
        draft = scripted_skills.dual_view("Config migration", "Migrate JSON configs.", "cfg")
        draft["rubric"][0]["statement"] = "Timeouts were multiplied by 1000."
        draft["rubric"][1]["evidence"] = "The python3 output shows the migrated file."
        draft["rubric"] += scripted_skills.criteria("more")  # 6 criteria
        return json.dumps(draft)

    register_script("planted", script)
    tasks, trials = example_records()
    report = _build(tasks, trials, tmp_path / "bank", "planted", tau=0.99)
    assert len(repairs) == 1
    [feedback] = repairs
    assert "[S-LEAK]" in feedback and "'1000'" in feedback
    assert "[S-TOOL] item R2: names 'python3' (as a word; a command in trial" in feedback
    assert "[S-COUNT] skill: 6 rubric criteria; need 3-5" in feedback
    assert not report.rejected and report.bank is not None
    skill = load_bank(tmp_path / "bank").get("json-config-migrate")
    assert skill is not None and skill.rubric is not None and len(skill.rubric) == 3
    assert "1000" not in skill.model_dump_json()


def test_a_skill_that_never_passes_is_rejected_and_written_beside_the_bank(
        tmp_path: Path) -> None:
    def script(messages: list[dict[str, Any]], schema: dict[str, Any] | None) -> str:
        if (schema or {}).get("title") == "DualViewDraft" and "TASK ID: log-error-filter" in \
                scripted_skills.text_of(messages):
            draft = scripted_skills.dual_view("Logs", "Log work.", "logs")
            draft["guidance"] = draft["guidance"][:2]
            return json.dumps(draft)
        return scripted_skills.answer(messages, schema)

    register_script("stubborn", script)
    tasks, trials = example_records()
    report = _build(tasks, trials, tmp_path / "bank", "stubborn", tau=0.99)
    [(stage, unit, rejected)] = report.rejected
    assert (stage, unit, rejected.attempts) == ("dual-view", "log-error-filter", 3)
    saved = json.loads((tmp_path / "bank" / "rejections" /
                        "dual-view__log-error-filter.json").read_text())
    assert saved["failures"][0]["code"] == "S-COUNT"
    assert [s.id for s in load_bank(tmp_path / "bank").skills] == [
        "csv-sales-summary", "json-config-migrate"]
    # A rerun does not ask again for the rejected unit (it is stored as rejected).
    again = _build(tasks, trials, tmp_path / "bank", "stubborn", tau=0.99)
    assert sum(c["asked"] for c in again.units.values()) == 0


WRAPPER = """
import os, signal, sys
sys.path.insert(0, {root!r})
from agentcredit.llm import register_script
from tests.skills import scripted_skills

log = open({log!r}, "a")
kill_at = int(sys.argv[1])

def counting(messages, schema):
    calls = sum(1 for _ in open({log!r}))
    if kill_at and calls >= kill_at:
        os.kill(os.getpid(), signal.SIGKILL)
    log.write((schema or {{}}).get("title", "") + "\\n")
    log.flush()
    return scripted_skills.answer(messages, schema)

register_script("counting", counting)
from agentcredit.cli.app import app
app(["skills", "build", {jobs!r}, "--tasks", {tasks!r}, "--out", {out!r},
     "--model", "scripted/counting", "--no-cache", "--concurrency", "1", "--tau", "0"])
"""


def test_a_killed_build_resumes_without_repeating_a_finished_call(tmp_path: Path) -> None:
    log, out = tmp_path / "calls.log", tmp_path / "bank"
    log.touch()
    script = tmp_path / "wrapper.py"
    script.write_text(WRAPPER.format(root=str(ROOT), log=str(log), out=str(out),
                                     jobs=str(EXAMPLES / "jobs"),
                                     tasks=str(EXAMPLES / "tasks")))
    for kill_at in (2, 5, 7):  # in stage 1, in stage 2, in stage 3
        proc = subprocess.run([sys.executable, str(script), str(kill_at)],
                              capture_output=True, text=True)
        assert proc.returncode == -signal.SIGKILL, proc.stderr
    done = subprocess.run([sys.executable, str(script), "0"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    titles = log.read_text().split()
    # 3 teacher x task units, 3 consolidations, 3 dual views, 1 merge: each asked once.
    assert sorted(titles) == sorted(["TeacherAnalysis"] * 3 + ["ConsolidatedSkill"] * 3 +
                                    ["DualViewDraft"] * 3 + ["MergeAnswer"])
    store = UnitStore(out)
    assert store.counts() == {"intra-teacher": 3, "cross-teacher": 3, "dual-view": 3,
                              "cross-task": 1}
    assert len(load_bank(out).skills) == 1


def _responder(body: dict[str, Any]) -> str:
    schema = body["response_format"]["json_schema"]["schema"]
    return scripted_skills.answer(body["messages"], schema)


def test_batch_build_takes_one_round_per_stage_then_no_live_calls(tmp_path: Path) -> None:
    out = tmp_path / "bank"
    cache = out / "responses.sqlite"
    with FakeLLMServer(responder=_responder) as server:
        base = ["skills", "build", str(EXAMPLES / "jobs"), "--tasks", str(EXAMPLES / "tasks"),
                "--out", str(out), "--model", "openai/skill-model", "--base-url",
                f"{server.url}/v1", "--tau", "0"]
        for round_no, expected in enumerate((3, 3, 3, 1), 1):
            result = runner.invoke(app, [*base, "--batch"], env={"OPENAI_API_KEY": "sk-test"})
            assert result.exit_code == 0, result.output
            assert "waiting for stage" in result.output
            assert batch_round(cache, tmp_path, str(round_no), _responder) == expected
        final = runner.invoke(app, base, env={"OPENAI_API_KEY": "sk-test"})
        assert final.exit_code == 0, final.output
        assert server.count == 0
    assert "bank: 1 skills" in final.output
    assert load_bank(out).synthesizer == "openai/skill-model"


def test_failed_calls_are_reported_and_the_other_tasks_go_on(tmp_path: Path) -> None:
    from agentcredit.errors import ProviderError

    def script(messages: list[dict[str, Any]], schema: dict[str, Any] | None) -> Any:
        if "TASK ID: csv-sales-summary" in scripted_skills.text_of(messages):
            return ProviderError("bad_request", "context length exceeded")
        return scripted_skills.answer(messages, schema)

    register_script("one-fails", script)
    out = runner.invoke(app, ["skills", "build", str(EXAMPLES / "jobs"), "--tasks",
                              str(EXAMPLES / "tasks"), "--out", str(tmp_path / "bank"),
                              "--model", "scripted/one-fails", "--no-cache", "--tau", "0.99"])
    assert out.exit_code == 1
    assert "intra-teacher csv-sales-summary::" in out.output
    assert "context length exceeded" in out.output
    assert [s.id for s in load_bank(tmp_path / "bank").skills] == [
        "json-config-migrate", "log-error-filter"]


def test_real_skillsbench_trials_build_a_gated_bank(corpus: Path, tmp_path: Path) -> None:
    from agentcredit.formats import load
    from agentcredit.formats.oracle import read_oracle
    from agentcredit.skills.leaks import leak_literals
    from agentcredit.skills.tool_names import seen_tools

    register_script("corpus-skills", scripted_skills.answer)
    loaded = load([corpus / "skillsbench" / "trials-more", corpus / "skillsbench" / "tasks"])
    tools = set(seen_tools(loaded.trials))
    assert {"python3", "run_shell_command", "grep"} <= tools
    assert not {"with", "or", "rows", "table", "name"} & tools  # script text is not commands
    task = next(t for t in loaded.tasks if t.id == "powerlifting-coef-calc")
    assert "-57.96288" in leak_literals(task, read_oracle(task)[0])
    report = _build(loaded.tasks, loaded.trials, tmp_path / "bank", "corpus-skills")
    assert not report.failed and not report.rejected
    bank = load_bank(tmp_path / "bank")
    assert len(bank.skills) == 10
    assert report.units["intra-teacher"]["asked"] == 11  # one task was run by two teachers


def test_a_pending_repair_does_not_hold_back_the_batch(tmp_path: Path) -> None:
    """Issue 58: one skill waiting for its repair round; the bank holds the others now
    and the last one after the next round."""
    def responder(body: dict[str, Any]) -> str:
        schema = body["response_format"]["json_schema"]["schema"]
        text = scripted_skills.text_of(body["messages"])
        task = scripted_skills.TASK.search(text)
        if schema.get("title") == "DualViewDraft" and task and \
                task.group(1) == "log-error-filter" and "deterministic gates" not in text:
            draft = scripted_skills.dual_view("Skill for logs", "Filter logs.", "logs")
            return json.dumps({**draft, "rubric": draft["rubric"][:2]})  # S-COUNT: repair
        return scripted_skills.answer(body["messages"], schema)

    out = tmp_path / "bank"
    cache = out / "responses.sqlite"
    base = ["skills", "build", str(EXAMPLES / "jobs"), "--tasks", str(EXAMPLES / "tasks"),
            "--out", str(out), "--model", "openai/skill-model", "--base-url",
            "http://127.0.0.1:9/v1", "--tau", "0.99", "--batch"]
    env = {"OPENAI_API_KEY": "sk-test", "COLUMNS": "200"}
    for round_no in (1, 2, 3):  # intra-teacher, cross-teacher, dual-view
        result = runner.invoke(app, base, env=env)
        assert result.exit_code == 0, result.output
        batch_round(cache, tmp_path, str(round_no), responder)
    waiting = runner.invoke(app, base, env=env)
    assert waiting.exit_code == 0, waiting.output
    assert "dual-view log-error-filter: queued for the next batch round" in waiting.output
    assert "(the skills ready so far)" in waiting.output
    assert sorted(s.id for s in load_bank(out).skills) == ["csv-sales-summary",
                                                           "json-config-migrate"]
    assert batch_round(cache, tmp_path, "repair", responder) == 1
    done = runner.invoke(app, base, env=env)
    assert done.exit_code == 0, done.output
    assert "waiting for stage" not in done.output
    assert sorted(s.id for s in load_bank(out).skills) == [
        "csv-sales-summary", "json-config-migrate", "log-error-filter"]
