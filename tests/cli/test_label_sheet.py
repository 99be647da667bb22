"""Issue 68: `checklists sheet` writes the labelling sheet `analyze --labels` reads back."""

from __future__ import annotations

import csv
from pathlib import Path

from typer.testing import CliRunner

from agentcredit.cli.app import app
from tests.conftest import EXAMPLES

runner = CliRunner()


def test_a_filled_sheet_is_read_back_by_analyze(tmp_path: Path) -> None:
    run = tmp_path / "run"
    assert runner.invoke(app, ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"),
                               "--out", str(run)]).exit_code == 0
    sheet = tmp_path / "sheet.csv"
    done = runner.invoke(app, ["checklists", "sheet", str(run), "--out", str(sheet),
                               "--trials", "3", "--seed", "1"])
    assert done.exit_code == 0, done.output
    rows = list(csv.DictReader(sheet.open()))
    assert len({r["trial_id"] for r in rows}) == 3 and all(r["label"] == "" for r in rows)
    assert "ENDPOINT" not in {r["item_id"] for r in rows}
    again = tmp_path / "again.csv"
    runner.invoke(app, ["checklists", "sheet", str(run), "--out", str(again), "--trials", "3",
                        "--seed", "1"])
    assert again.read_text() == sheet.read_text()  # seeded
    filled = tmp_path / "filled.csv"
    with filled.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["trial_id", "item_id", "label"])
        writer.writerows([(r["trial_id"], r["item_id"], "yes") for r in rows])
    read = runner.invoke(app, ["analyze", str(run), "--labels", str(filled)])
    assert read.exit_code == 0, read.output
    assert f"{len(rows)}" in read.output


def test_no_run_store_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = runner.invoke(app, ["checklists", "sheet", str(tmp_path), "--out",
                               str(tmp_path / "s.csv")])
    assert done.exit_code == 2
    assert "no run store here" in done.output and "Traceback" not in done.output
