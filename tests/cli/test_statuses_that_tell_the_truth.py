"""Issue 61, item 5: exit codes, statuses and progress lines that tell the truth."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agentcredit.cli.app import app
from agentcredit.cli.watch import StatusLines
from agentcredit.llm import register_script
from agentcredit.runs.status import RunStatus
from tests.conftest import EXAMPLES
from tests.judging import scripted_judge
from tests.rewards import scripted_verifier
from tests.skills import scripted_skills

runner = CliRunner()


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open() as fh:
        return list(csv.DictReader(fh))


def test_skills_import_exits_2_when_every_rubric_was_rejected(tmp_path: Path) -> None:
    def two_criteria(messages: list[dict[str, Any]], schema: dict[str, Any] | None) -> str:
        return json.dumps({"rubric": scripted_skills.criteria("imported")[:2]})  # S-COUNT

    register_script("two-criteria", two_criteria)
    out = runner.invoke(app, ["skills", "import", str(EXAMPLES / "skills"), "--out",
                              str(tmp_path / "bank"), "--model", "scripted/two-criteria",
                              "--no-cache"], env={"COLUMNS": "200"})
    assert out.exit_code == 2, out.output
    assert "rubrics rejected by the gates" in out.output and "S-COUNT" in out.output


def test_skills_reward_does_not_call_a_trial_verified_when_no_criterion_got_a_verdict(
        tmp_path: Path) -> None:
    from tests.rewards.test_turn_verifier import _bank

    def no_fine_verdicts(messages: list[dict[str, Any]], schema: dict[str, Any] | None) -> str:
        if (schema or {}).get("title") == "FineGroupAnswer":
            return json.dumps({"criteria": []})  # a valid answer that decides nothing
        return scripted_verifier.answer(messages, schema)

    register_script("no-verdicts", no_fine_verdicts)
    bank = _bank(tmp_path)
    out = runner.invoke(app, ["skills", "reward", str(bank), str(EXAMPLES / "jobs"), "--tasks",
                              str(EXAMPLES / "tasks"), "--out", str(tmp_path / "rw"),
                              "--model", "scripted/no-verdicts"], env={"COLUMNS": "200"})
    assert out.exit_code != 0, out.output
    assert "verified 0," in out.output and "failed 8" in out.output
    assert "no criterion got a verdict" in out.output


def test_judge_is_outcome_where_the_model_decided_no_item(tmp_path: Path) -> None:
    def abstains(messages: list[dict[str, Any]], schema: dict[str, Any] | None) -> str:
        answer = scripted_judge.answer(messages, schema)
        if (schema or {}).get("title") == "DraftChecklist":
            return answer
        parsed = json.loads(answer)
        for item in parsed.get("items", []):
            item.update(label="abstain", evidence=[])
        return json.dumps(parsed)

    register_script("abstains", abstains)
    out = runner.invoke(app, ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"), "--out",
                              str(tmp_path), "--model", "scripted/abstains"])
    assert out.exit_code == 0, out.output
    assert {r["judge"] for r in _rows(tmp_path / "scores.csv")} == {"outcome"}
    assert "the model decided no item" in " ".join(out.output.split()), out.output  # issue 66


def test_holistic_still_scores_trials_whose_checklist_the_gates_rejected(tmp_path: Path) -> None:
    def bad_drafts(messages: list[dict[str, Any]], schema: dict[str, Any] | None) -> str:
        if (schema or {}).get("title") == "DraftChecklist":
            return json.dumps({"items": [{"id": "C1", "text": "x", "route": "assertion",
                                          "quotes": ["a quote the instruction never says"],
                                          "checks": ["no_such_check"]}]})
        return scripted_judge.answer(messages, schema)

    register_script("bad-drafts", bad_drafts)
    out = runner.invoke(app, ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"), "--out",
                              str(tmp_path), "--model", "scripted/bad-drafts", "--holistic"],
                        env={"COLUMNS": "200"})
    assert out.exit_code == 1, out.output  # holistic scores were made: part done (issue 66)
    assert "checklists rejected by the gates" in out.output
    assert str(tmp_path / "checklists" / "rejections") in out.output.replace("\n", "")
    rows = _rows(tmp_path / "scores.csv")
    assert len(rows) == 8 and all(r["holistic"] == "0.5" and r["partial_credit"] == ""
                                  for r in rows)


def test_progress_never_shows_a_total_it_does_not_know() -> None:
    stream = io.StringIO()
    with StatusLines(RunStatus(), stream=stream, every=60, enabled=True) as lines:
        lines("turn verifier", 1, 0)
        lines("turn verifier", 7, 0)
        lines.finish("turn verifier")
    text = stream.getvalue()
    assert "turn verifier: started" in text and "turn verifier: 7 done in" in text
    assert "unknown number" not in text and "/0" not in text
