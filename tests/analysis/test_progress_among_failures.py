"""Progress validity among failures: do outcome-blind scores order FAIL trials by how far
they got (the per-check pass fraction)?"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner

from agentcredit.analysis.studies import TrialRow, progress_among_failures
from agentcredit.cli.app import app
from agentcredit.llm import register_script
from tests.conftest import EXAMPLES
from tests.judging import scripted_judge

runner = CliRunner()


def _row(n: int, task: str, outcome: str, fraction: float, judge: float,
         holistic: float | None) -> TrialRow:
    return TrialRow(f"t{n}", task, outcome, None, None, None, None, "h",
                    {"check_fraction": fraction, "judge_only": judge, "holistic": holistic},
                    {}, int(fraction * 10), 10)


def _rows() -> list[TrialRow]:
    rng = np.random.default_rng(7)
    rows = []
    for n in range(60):
        fraction = float(rng.integers(0, 10)) / 10
        judge = fraction + float(rng.normal(0, 0.1))  # tracks progress
        holistic = float(rng.uniform(0, 1))  # does not
        rows.append(_row(n, f"task{n % 12}", "fail", fraction, judge, holistic))
    # PASS trials and a FAIL trial without checks never enter the study.
    rows.append(_row(100, "task0", "pass", 0.0, 0.0, 1.0))
    rows.append(TrialRow("t101", "task0", "fail", None, None, None, None, "h",
                         {"check_fraction": None, "judge_only": 1.0, "holistic": 0.0}, {}, 0, 0))
    return rows


def test_rho_among_failures_matches_scipy_with_intervals_and_a_paired_delta() -> None:
    rows = _rows()
    result = progress_among_failures(rows, np.random.default_rng(0), draws=300)
    assert result["n_failed"] == 60
    failed = rows[:60]
    fractions = [r.scores["check_fraction"] for r in failed]
    for name in ("judge_only", "holistic"):
        expected = stats.spearmanr([r.scores[name] for r in failed], fractions).statistic
        rho = result["scorers"][name]["spearman"]
        assert rho["estimate"] == pytest.approx(expected)
        assert rho["ci_low"] <= rho["estimate"] <= rho["ci_high"]
    assert result["scorers"]["judge_only"]["spearman"]["estimate"] > 0.8
    assert result["scorers"]["judge_only"]["tasks"] == 12
    paired = result["judge_only_paired"]["holistic"]
    judge = result["scorers"]["judge_only"]["spearman"]["estimate"]
    holistic = result["scorers"]["holistic"]["spearman"]["estimate"]
    assert paired["delta_rho"]["estimate"] == pytest.approx(judge - holistic)
    assert paired["delta_rho"]["ci_low"] > 0 and paired["share_positive"] > 0.95
    again = progress_among_failures(rows, np.random.default_rng(0), draws=300)
    assert again == result  # seeded: repeats bit for bit


def test_too_few_failures_give_no_numbers_rather_than_made_up_ones() -> None:
    rows = [_row(n, "t", "fail", n / 10, n / 10, None) for n in range(2)]
    result = progress_among_failures(rows, np.random.default_rng(0), draws=50)
    assert result["scorers"] == {} and result["judge_only_paired"] == {}


def _graded(messages: list[dict[str, Any]], schema: dict[str, Any] | None) -> str:
    """Yes on every item except those whose check a failing trial failed: a judge that sees
    what happened."""
    answer = json.loads(scripted_judge.answer(messages, schema))
    text = "\n".join(str(m.get("content")) for m in messages)
    if (schema or {}).get("title") == "ItemsAnswer":
        for item in answer["items"][: text.count("ERROR")]:
            item["label"] = "no"
    if (schema or {}).get("title") == "HolisticAnswer":
        answer["progress"] = 0.3 if "Exit Code: 1" in text else 0.6
    return json.dumps(answer)


def test_analyze_json_table_and_report_show_progress_among_failures(tmp_path: Path) -> None:
    register_script("graded", _graded)
    run = tmp_path / "run"
    out = runner.invoke(app, ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"), "--out",
                              str(run), "--model", "scripted/graded", "--holistic"])
    assert out.exit_code == 0, out.output
    numbers = tmp_path / "analysis.json"
    done = runner.invoke(app, ["analyze", str(run), "--json", str(numbers), "--bootstrap",
                               "100"], env={"COLUMNS": "200"})
    assert done.exit_code == 0, done.output
    progress = json.loads(numbers.read_text())["progress_among_failures"]
    assert progress["target"] == "check_fraction" and progress["n_failed"] >= 3
    assert set(progress["scorers"]) >= {"judge_only", "holistic"}
    for entry in progress["scorers"].values():
        assert set(entry["spearman"]) >= {"estimate", "ci_low", "ci_high"}
    assert "progress among the" in done.output and "judge only − holistic" in done.output
    report = runner.invoke(app, ["report", str(run), "--out", str(tmp_path / "r.html")])
    assert report.exit_code == 0, report.output
    html = (tmp_path / "r.html").read_text()
    assert "judge-only ρ with checks passed, FAIL trials" in html
    assert "holistic ρ with checks passed, FAIL trials" in html
