"""A whole GCPC run done through batch files: zero live model calls."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agentcredit.cli.app import app
from tests.conftest import EXAMPLES
from tests.judging import scripted_judge
from tests.llm.batch_rounds import batch_round
from tests.llm.fake_server import FakeLLMServer, write_batch_results

runner = CliRunner()


def responder(body: dict[str, Any]) -> str:
    schema = body["response_format"]["json_schema"]["schema"]
    return scripted_judge.answer(body["messages"], schema)


def test_run_through_two_batch_rounds_without_live_calls(tmp_path: Path) -> None:
    run = tmp_path / "run"
    cache = run / "responses.sqlite"
    with FakeLLMServer(responder=responder) as server:
        base = ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"), "--out", str(run),
                "--model", "openai/judge-model", "--base-url", f"{server.url}/v1"]
        for round_no, expected in ((1, 3), (2, 8)):  # checklists first, then judgments
            out = runner.invoke(app, [*base, "--batch"], env={"OPENAI_API_KEY": "sk-test"})
            assert out.exit_code == 0, out.output
            requests = tmp_path / f"requests-{round_no}.jsonl"
            exported = runner.invoke(app, ["batch", "export", "--cache", str(cache), "--out",
                                           str(requests)])
            assert f"wrote {expected} requests" in exported.output, exported.output
            results = tmp_path / f"results-{round_no}.jsonl"
            write_batch_results(requests, results, responder)
            imported = runner.invoke(app, ["batch", "import", str(results), "--cache",
                                           str(cache)])
            assert imported.exit_code == 0, imported.output
        final = runner.invoke(app, base, env={"OPENAI_API_KEY": "sk-test"})
        assert final.exit_code == 0, final.output
        assert server.count == 0
    with (run / "scores.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 8 and {r["judge"] for r in rows} == {"llm"}
    assert {r["judge_model"] for r in rows} == {"openai/judge-model"}
    assert json.loads((run / "summary.json").read_text())["labels"]["yes"] > 0


def test_a_judge_panel_queues_every_vote_in_the_same_round(tmp_path: Path) -> None:
    """Issue 59: two judges x two samples: the judging round holds all 32 requests."""
    run = tmp_path / "run"
    cache = run / "responses.sqlite"
    with FakeLLMServer(responder=responder) as server:
        base = ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"), "--out", str(run),
                "--model", "openai/judge-model", "--base-url", f"{server.url}/v1",
                "--judges", "openai/judge-model,openai/second-judge", "--samples", "2"]
        for round_no, expected in ((1, 3), (2, 8 * 2 * 2)):
            out = runner.invoke(app, [*base, "--batch"], env={"OPENAI_API_KEY": "sk-test"})
            assert out.exit_code == 0, out.output
            assert batch_round(cache, tmp_path, str(round_no), responder) == expected
        final = runner.invoke(app, base, env={"OPENAI_API_KEY": "sk-test"})
        assert final.exit_code == 0, final.output
        assert server.count == 0
    with (run / "scores.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert {r["judge_model"] for r in rows} == {"openai/judge-model,openai/second-judge×2"}
