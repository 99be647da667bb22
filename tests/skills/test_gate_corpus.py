"""The labelled gate corpus: the skill gates' precision and recall on real skills' rubrics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agentcredit.cli.app import app
from agentcredit.skills.bank import load_bank
from tests.llm.batch_rounds import batch_round
from tests.llm.fake_server import FakeLLMServer
from tests.skills import gate_corpus, scripted_skills

runner = CliRunner()


def _check(tally: gate_corpus.Tally, at_least: int, rate: float) -> None:
    assert tally.total >= at_least, tally.line()
    assert tally.rate >= rate, tally.line() + "\n" + "\n".join(tally.misses)


def test_imported_rubrics_natural_accepted_planted_tools_and_unobservables_caught() -> None:
    scores = gate_corpus.score_imported()
    assert len(gate_corpus.imported_entries()) >= 20
    _check(scores["natural"], 80, 0.95)
    _check(scores["tool"], 40, 0.95)
    _check(scores["unobservable"], 20, 0.90)


def test_english_word_tool_names_accepted_as_words_and_caught_as_tools() -> None:
    # Before the modifier and "and"-joined readings: 22/28 accepted, 10/11 caught.
    scores = gate_corpus.score_english()
    _check(scores["natural"], 28, 1.0)
    _check(scores["tool"], 11, 1.0)
    _check(scores["unobservable"], 2, 1.0)


def test_the_stored_guidance_tools_are_what_the_real_skills_invoke(corpus: Path) -> None:
    paths = [entry["path"] for entry in gate_corpus.imported_entries()]
    fresh = gate_corpus.extract_tools(paths, corpus / "skillsbench" / "skills")
    assert fresh == gate_corpus.stored_tools()  # else: benchmarks/gate_corpus.py --refresh
    assert {"nmap", "hydra", "ssh"} <= set(fresh["fix-erlang-ssh-cve/ssh-penetration-testing"])
    pymatgen = fresh["crystallographic-wyckoff-position-analysis/pymatgen"]
    assert "pymatgen" in pymatgen and not {"analysis", "additional", "export"} & set(pymatgen)


def test_built_skills_clean_parts_accepted_planted_leaks_and_tools_caught() -> None:
    scores = gate_corpus.score_built()
    assert len(gate_corpus.built_entries()) >= 10
    _check(scores["natural"], 60, 0.95)
    _check(scores["leak"], 20, 1.0)
    _check(scores["tool"], 20, 0.95)


def test_the_stored_build_context_is_what_the_real_tasks_and_trials_give(corpus: Path) -> None:
    fresh = gate_corpus.extract_build_context(corpus / "skillsbench")
    assert fresh == gate_corpus.stored_build_context()  # else: gate_corpus.py --refresh
    assert {entry["id"] for entry in gate_corpus.built_entries()} == set(fresh["leaks"])


def test_a_batch_build_over_real_trials_with_the_clean_skills_needs_no_repair(
        corpus: Path, tmp_path: Path) -> None:
    drafts = {entry["id"]: gate_corpus.draft(entry) for entry in gate_corpus.built_entries()}
    repairs: list[str] = []

    def responder(body: dict[str, Any]) -> str:
        schema = body["response_format"]["json_schema"]["schema"]
        text = scripted_skills.text_of(body["messages"])
        if "failed these deterministic gates" in text:
            repairs.append(text[-600:])
        task = scripted_skills.TASK.search(text)
        if schema.get("title") == "DualViewDraft" and task and task.group(1) in drafts:
            return json.dumps(drafts[task.group(1)])
        return scripted_skills.answer(body["messages"], schema)

    out = tmp_path / "bank"
    cache = out / "responses.sqlite"
    with FakeLLMServer(responder=responder) as server:
        base = ["skills", "build", str(corpus / "skillsbench" / "trials-more"), "--tasks",
                str(corpus / "skillsbench" / "tasks"), "--out", str(out), "--model",
                "openai/skill-model", "--base-url", f"{server.url}/v1", "--tau", "0.99"]
        for round_no in range(1, 8):
            result = runner.invoke(app, [*base, "--batch"], env={"OPENAI_API_KEY": "sk-test"})
            assert result.exit_code == 0, result.output
            if "waiting for stage" not in result.output:
                break
            batch_round(cache, tmp_path, str(round_no), responder)
        final = runner.invoke(app, base, env={"OPENAI_API_KEY": "sk-test"})
        assert final.exit_code == 0, final.output
        assert server.count == 0
    assert repairs == []
    assert not (out / "rejections").exists()
    bank = load_bank(out)
    assert {s.id for s in bank.skills} == set(drafts)
    for skill in bank.skills:
        assert skill.title == drafts[skill.id]["title"]
