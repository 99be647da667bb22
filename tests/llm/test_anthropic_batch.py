"""Anthropic Message Batches: export, import, and a whole run with no live call at the end."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agentcredit.cli.app import app
from tests.conftest import EXAMPLES
from tests.judging import scripted_judge
from tests.llm.fake_server import FakeLLMServer, write_anthropic_batch_results

runner = CliRunner()
ENV = {"ANTHROPIC_API_KEY": "sk-ant-test"}


def responder(body: dict[str, Any]) -> str:
    schema = body["tools"][0]["input_schema"] if body.get("tools") else None
    return scripted_judge.answer(body["messages"], schema)


def _scores(run: Path) -> list[dict[str, str]]:
    with (run / "scores.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    return sorted(({k: v for k, v in r.items() if k not in ("judge_model",)} for r in rows),
                  key=lambda r: r["trial_id"])


def test_anthropic_batch_run_equals_live_and_ends_with_no_live_call(tmp_path: Path) -> None:
    with FakeLLMServer(responder=responder) as server:
        live = tmp_path / "live"
        base = ["--model", "anthropic/claude-test", "--base-url", server.url]
        done = runner.invoke(app, ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"),
                                   "--out", str(live), *base], env=ENV)
        assert done.exit_code == 0, done.output
        live_calls = server.count
        assert live_calls > 0 and all(p.endswith("/messages") for p in server.paths)

        run = tmp_path / "batched"
        cache = run / "responses.sqlite"
        args = ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"), "--out", str(run),
                *base]
        for round_no, expected in ((1, 3), (2, 8)):
            out = runner.invoke(app, [*args, "--batch"], env=ENV)
            assert out.exit_code == 0, out.output
            requests = tmp_path / f"requests-{round_no}.jsonl"
            exported = runner.invoke(app, ["batch", "export", "--cache", str(cache), "--out",
                                           str(requests)])
            assert "wrote 0 requests" not in exported.output  # no empty OpenAI file either
            assert not requests.exists()
            assert f"wrote {expected} Anthropic requests" in exported.output, exported.output
            anthropic = tmp_path / f"requests-{round_no}.anthropic.jsonl"
            first = json.loads(anthropic.read_text().splitlines()[0])
            assert set(first) == {"custom_id", "params"} and len(first["custom_id"]) == 64
            assert first["params"]["model"] == "claude-test"
            results = tmp_path / f"results-{round_no}.jsonl"
            write_anthropic_batch_results(anthropic, results, responder)
            imported = runner.invoke(app, ["batch", "import", str(results), "--cache",
                                           str(cache)])
            assert imported.exit_code == 0, imported.output
        final = runner.invoke(app, args, env=ENV)
        assert final.exit_code == 0, final.output
        assert server.count == live_calls  # the batched run made no live call
    assert _scores(run) == _scores(live)


def test_errored_and_expired_results_stay_pending_with_their_reason(tmp_path: Path) -> None:
    with FakeLLMServer(responder=responder) as server:
        run = tmp_path / "run"
        cache = run / "responses.sqlite"
        args = ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"), "--out", str(run),
                "--model", "anthropic/claude-test", "--base-url", server.url, "--batch"]
        assert runner.invoke(app, args, env=ENV).exit_code == 0
        requests = tmp_path / "requests.jsonl"
        runner.invoke(app, ["batch", "export", "--cache", str(cache), "--out", str(requests)])
        anthropic = tmp_path / "requests.anthropic.jsonl"
        ids = [json.loads(line)["custom_id"] for line in anthropic.read_text().splitlines()]
        results = tmp_path / "results.jsonl"
        write_anthropic_batch_results(anthropic, results, responder, errored={ids[0]})
        expired = {"custom_id": ids[1], "result": {"type": "expired"}}
        lines = [line for line in results.read_text().splitlines()
                 if json.loads(line)["custom_id"] != ids[1]]
        results.write_text("\n".join([*lines, json.dumps(expired)]) + "\n")
        imported = runner.invoke(app, ["batch", "import", str(results), "--cache", str(cache)])
        assert imported.exit_code == 2
        assert "errored: overloaded" in imported.output and "expired" in imported.output
        assert "imported 1 answers" in imported.output
        again = tmp_path / "again.jsonl"
        out = runner.invoke(app, ["batch", "export", "--cache", str(cache), "--out", str(again)])
        assert "wrote 2 Anthropic requests" in out.output  # still pending, sent again
        assert server.count == 0
