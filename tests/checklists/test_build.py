"""Derived and synthesized checklists, freezing, and the checklists commands."""

from __future__ import annotations

import asyncio
import inspect
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcredit.checklists import (
    Rejection,
    build_checklists,
    derive_checklist,
    load_checklist,
    load_rules,
    synthesize,
)
from agentcredit.checklists.synthesize import synthesis_messages
from agentcredit.cli.app import app
from agentcredit.errors import IntegrityError
from agentcredit.formats import load
from agentcredit.llm import ModelClient, make_provider, register_script
from agentcredit.schema import Checklist, Task
from tests.conftest import EXAMPLES

RULES = load_rules()
runner = CliRunner()


def example(task_id: str) -> Task:
    return next(t for t in load([EXAMPLES / "tasks"]).tasks if t.id == task_id)


def test_derived_checklist_quotes_the_best_matching_sentence() -> None:
    checklist = derive_checklist(example("csv-sales-summary"), RULES)
    assert isinstance(checklist, Checklist) and checklist.synthesizer == "derived"
    by_check = {item.checks[0]: item for item in checklist.items}
    sorted_item = by_check["test_outputs.py::TestSummaryContent::test_regions_sorted"]
    assert sorted_item.quotes == ("Regions must appear in alphabetical order.",)
    assert sorted_item.text == "Regions appear in alphabetical order."
    assert by_check["test_outputs.py::test_sales_unchanged"].quotes == (
        "Do not modify `/app/sales.csv`.",)
    assert all(item.route == "assertion" for item in checklist.items)


def test_task_without_checks_is_reported_not_crashed(tmp_path: Path) -> None:
    task = Task(id="t", instruction="Write a poem.", benchmark="harbor", source_path="x")
    assert isinstance(derive_checklist(task, RULES), Rejection)
    report = asyncio.run(build_checklists([task], tmp_path, RULES))
    assert report.no_checks == ["t"] and report.built == []


def test_skillsbench_derived_checklists_all_pass_the_gates(corpus: Path, tmp_path: Path) -> None:
    tasks = load([corpus / "skillsbench" / "tasks"]).tasks
    report = asyncio.run(build_checklists(tasks, tmp_path, RULES))
    assert len(report.built) == 85 and report.rejected == {}
    assert sorted(report.no_checks) == ["crystallographic-wyckoff-position-analysis",
                                        "python-scala-translation"]
    out = runner.invoke(app, ["checklists", "check", str(tmp_path), "--tasks",
                              str(corpus / "skillsbench" / "tasks")])
    assert out.exit_code == 0 and "85/85 checklists pass all gates" in out.output


BROKEN = {
    "items": [
        {"id": "C1", "text": "Run the summing script.", "route": "assertion",
         "quotes": ["Regions must appear in alphabetical order."],
         "checks": ["test_outputs.py::test_summary_file_exists"]},
        {"id": "C2", "text": "Regions are sorted.", "route": "assertion",
         "quotes": ["Regions are alphabetical."],
         "checks": ["test_outputs.py::TestSummaryContent::test_regions_sorted"]},
        {"id": "C3", "text": "Totals are right.", "route": "assertion", "quotes": [],
         "checks": ["test_outputs.py::test_totals"]},
    ],
    "waivers": [],
}
REPAIRED = {
    "items": [
        {"id": "C1", "text": "summary.json exists.", "route": "assertion",
         "quotes": ["Write `/app/summary.json`"],
         "checks": ["test_outputs.py::test_summary_file_exists"]},
        {"id": "C2", "text": "Regions appear in alphabetical order.", "route": "assertion",
         "quotes": ["Regions must appear in alphabetical order."],
         "checks": ["test_outputs.py::TestSummaryContent::test_regions_sorted"]},
        {"id": "C3", "text": "Each region maps to the rounded total of its orders.",
         "route": "assertion", "quotes": ["rounded to 2 decimals"],
         "checks": ["test_outputs.py::TestSummaryContent::test_totals_per_region"]},
        {"id": "C4", "text": "sales.csv is unchanged.", "route": "assertion",
         "quotes": ["Do not modify `/app/sales.csv`."],
         "checks": ["test_outputs.py::test_sales_unchanged"]},
    ],
    "waivers": [],
}


def _model(name: str, answers: list[dict[str, object]]) -> ModelClient:
    register_script(name, [json.dumps(a) for a in answers])
    return ModelClient(make_provider(f"scripted/{name}"))


def test_synthesis_repairs_three_broken_gates_then_freezes(tmp_path: Path) -> None:
    model = _model("repairs", [BROKEN, REPAIRED])
    result = asyncio.run(synthesize(example("csv-sales-summary"), model, RULES))
    assert isinstance(result, Checklist), result
    assert result.synthesizer == "scripted/repairs" and result.prompt_version
    assert len(result.items) == 4
    assert model.provider.calls == 2  # type: ignore[attr-defined]


def test_repair_message_names_the_failed_gates() -> None:
    seen: list[list[dict[str, object]]] = []

    def script(messages: list[dict[str, object]], schema: object) -> str:
        seen.append(messages)
        return json.dumps(BROKEN if len(seen) == 1 else REPAIRED)

    register_script("recorder", script)
    model = ModelClient(make_provider("scripted/recorder"))
    asyncio.run(synthesize(example("csv-sales-summary"), model, RULES))
    repair = str(seen[1][-1]["content"])
    for code in ("G-PROCEDURAL", "G-QUOTE", "G-CHECK"):
        assert code in repair


def test_synthesis_that_never_repairs_is_rejected(tmp_path: Path) -> None:
    model = _model("stubborn", [BROKEN] * 3)
    result = asyncio.run(synthesize(example("csv-sales-summary"), model, RULES))
    assert isinstance(result, Rejection) and result.attempts == 3
    assert {f.code for f in result.failures} >= {"G-PROCEDURAL", "G-QUOTE", "G-CHECK"}
    report = asyncio.run(build_checklists([example("csv-sales-summary")], tmp_path, RULES,
                                          model=_model("stubborn2", [BROKEN] * 3)))
    assert "csv-sales-summary" in report.rejected
    saved = json.loads((tmp_path / "rejections" / "csv-sales-summary.json").read_text())
    assert saved["failures"] and not (tmp_path / "csv-sales-summary.json").exists()


def test_prompt_never_contains_the_oracle_solution(tmp_path: Path) -> None:
    task_dir = tmp_path / "secret-task"
    (task_dir / "tests").mkdir(parents=True)
    (task_dir / "solution").mkdir()
    (task_dir / "instruction.md").write_text("Write the answer to /app/a.txt.\n")
    (task_dir / "task.toml").write_text('version = "1.0"\n')
    (task_dir / "tests" / "test_outputs.py").write_text("def test_a():\n    assert True\n")
    (task_dir / "solution" / "solve.sh").write_text("echo ORACLE-SENTINEL-42 > /app/a.txt\n")
    (task,) = load([task_dir]).tasks
    prompt = " ".join(m.text() for m in synthesis_messages(task, RULES))
    assert "ORACLE-SENTINEL-42" not in prompt and "Write the answer" in prompt
    assert "test_outputs.py::test_a" in prompt
    params = list(inspect.signature(synthesize).parameters)
    assert params == ["task", "model", "rules", "max_repairs"]


def test_synthesis_refuses_anything_but_a_task() -> None:
    trial = load([EXAMPLES / "jobs"]).trials[0]
    with pytest.raises(TypeError, match="takes a Task"):
        synthesis_messages(trial, RULES)  # type: ignore[arg-type]


def test_frozen_checklists_are_kept_unless_forced(tmp_path: Path) -> None:
    tasks = load([EXAMPLES / "tasks"]).tasks
    first = asyncio.run(build_checklists(tasks, tmp_path, RULES))
    again = asyncio.run(build_checklists(tasks, tmp_path, RULES))
    assert len(first.built) == 3 and again.built == [] and len(again.kept) == 3
    forced = asyncio.run(build_checklists(tasks, tmp_path, RULES, force=True))
    assert len(forced.built) == 3
    lock = json.loads((tmp_path / "checklists.lock").read_text())
    assert set(lock) == {t.id for t in tasks}


def test_editing_one_quote_character_fails_quote_and_hash(tmp_path: Path) -> None:
    runner.invoke(app, ["checklists", "build", str(EXAMPLES / "tasks"), "--out", str(tmp_path)])
    path = tmp_path / "csv-sales-summary.json"
    assert load_checklist(path).task_id == "csv-sales-summary"
    data = json.loads(path.read_text())
    data["items"][2]["quotes"][0] = data["items"][2]["quotes"][0].replace("alphabetical",
                                                                          "alphabetica1")
    path.write_text(json.dumps(data, indent=2))
    out = runner.invoke(app, ["checklists", "check", str(tmp_path), "--tasks",
                              str(EXAMPLES / "tasks")])
    assert out.exit_code == 1
    assert "G-QUOTE" in out.output and "G-HASH" in out.output
    with pytest.raises(IntegrityError, match="edited after freezing"):
        load_checklist(path)


def test_build_and_show_commands(tmp_path: Path) -> None:
    out = runner.invoke(app, ["checklists", "build", str(EXAMPLES / "tasks"), "--out",
                              str(tmp_path)])
    assert out.exit_code == 0 and "built 3" in out.output
    assert "derived from the verifiers" in out.output
    shown = runner.invoke(app, ["checklists", "show", str(tmp_path / "log-error-filter.json")],
                          env={"COLUMNS": "250"})
    assert shown.exit_code == 0 and "test_outputs.py::test_script_is_executable" in shown.output
    plain = runner.invoke(app, ["checklists", "check", str(tmp_path)])
    assert plain.exit_code == 0 and "3/3" in plain.output
