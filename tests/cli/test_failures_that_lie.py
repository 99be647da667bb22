"""Failures that used to lie: a run that scored nothing because its calls failed exits
non-zero with the reason, and transient failures are never replayed from the cache."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agentcredit.cli.app import app
from agentcredit.store.run_store import RunStore
from tests.conftest import EXAMPLES
from tests.judging import scripted_judge
from tests.llm.fake_server import FakeLLMServer

runner = CliRunner()
ENV = {"OPENAI_API_KEY": "k", "COLUMNS": "200"}


def responder(body: dict[str, Any]) -> str:
    schema = body["response_format"]["json_schema"]["schema"]
    return scripted_judge.answer(body["messages"], schema)


def _dead_url() -> str:
    with socket.socket() as sock:  # a port nothing listens on: connection refused
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _run(out: Path, base_url: str) -> Any:
    return runner.invoke(app, ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"),
                               "--out", str(out), "--model", "openai/judge-model",
                               "--base-url", base_url], env=ENV)


def test_no_network_exits_2_with_the_reason_and_recovers_without_retry_failed(
        tmp_path: Path) -> None:
    out = tmp_path / "run"
    offline = _run(out, _dead_url())
    assert offline.exit_code == 2, offline.output
    assert "not built" in offline.output and "connection" in offline.output
    assert "run the same command again" in offline.output or "agentcredit" in offline.output
    with FakeLLMServer(responder=responder) as server:
        back = _run(out, f"{server.url}/v1")  # the network is back (or --base-url fixed)
        assert back.exit_code == 0, back.output
        assert server.count == 11  # 3 syntheses + 8 judge calls: nothing replayed
    assert len(RunStore(out).done_set("llm")) == 8
    assert json.loads((out / "summary.json").read_text())["errors"]["open"] == 0


def test_rate_limited_judging_is_asked_again_and_errors_do_not_pile_up(tmp_path: Path) -> None:
    out = tmp_path / "run"
    synth_only = lambda i, body: None if "DraftChecklist" in json.dumps(  # noqa: E731
        body.get("response_format", {})) else "429"
    with FakeLLMServer(responder=responder, faults=synth_only) as server:
        first = _run(out, f"{server.url}/v1")
        assert first.exit_code == 2, first.output  # checklists built, no trial judged
        assert "rate_limit" in first.output
        second = _run(out, f"{server.url}/v1")
        assert second.exit_code == 2
    open_errors = RunStore(out).errors()
    assert len(open_errors) == 8  # one per trial, not one per trial per run
    with FakeLLMServer(responder=responder) as server:
        third = _run(out, f"{server.url}/v1")
        assert third.exit_code == 0, third.output
        assert server.count == 8  # the checklists were kept; only the judging is asked
    assert RunStore(out).errors() == []


def test_model_only_options_without_a_model_are_refused_not_ignored(tmp_path: Path) -> None:
    for option in ("--holistic", "--generic", "--per-item"):
        out = runner.invoke(app, ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"),
                                  "--out", str(tmp_path / "run"), option], env=ENV)
        assert out.exit_code == 2 and f"{option} needs --model" in out.output
    assert not (tmp_path / "run" / "run.sqlite").exists()


def test_an_inspect_scorer_that_scored_nothing_is_an_error(tmp_path: Path) -> None:
    from tests.conftest import write_json

    write_json(tmp_path / "log.json", {
        "version": 2, "eval": {"task": "t", "model": "m", "scorers": [{"name": "match"}]},
        "samples": [{"id": "s1", "epoch": 1, "input": "q", "target": "a",
                     "messages": [{"role": "user", "content": "q"}],
                     "scores": {"match": {"value": "C"}}}]})
    bad = runner.invoke(app, ["inspect", str(tmp_path / "log.json"), "--inspect-scorer",
                              "nope"], env=ENV)
    assert bad.exit_code == 2
    assert "no sample has a score from --inspect-scorer 'nope'" in bad.output
    assert "match" in bad.output
    good = runner.invoke(app, ["inspect", str(tmp_path / "log.json"), "--inspect-scorer",
                               "match"], env=ENV)
    assert good.exit_code == 0, good.output


def test_the_quick_start_report_says_what_fills_its_empty_tiles(tmp_path: Path) -> None:
    out = runner.invoke(app, ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"),
                              "--out", str(tmp_path / "run")], env=ENV)
    assert out.exit_code == 0, out.output
    html = (tmp_path / "run" / "report.html").read_text()
    assert html.count("needs an LLM judge: run with --model") == 2
    assert html.count("needs --model and --holistic") == 2


def test_skills_import_with_a_dead_model_exits_2_and_recovers(tmp_path: Path) -> None:
    from tests.skills import scripted_skills

    skills = [str(p) for p in sorted((EXAMPLES / "skills").iterdir())]
    bank = tmp_path / "bank"
    base = ["skills", "import", *skills, "--out", str(bank), "--model", "openai/m"]
    offline = runner.invoke(app, [*base, "--base-url", _dead_url()], env=ENV)
    assert offline.exit_code == 2, offline.output
    assert "rubric requests failed" in offline.output and "connection" in offline.output

    def rubric(body: dict[str, Any]) -> str:
        schema = body["response_format"]["json_schema"]["schema"]
        return scripted_skills.answer(body["messages"], schema)

    with FakeLLMServer(responder=rubric) as server:
        back = runner.invoke(app, [*base, "--base-url", f"{server.url}/v1"], env=ENV)
        assert back.exit_code == 0, back.output
        assert server.count >= 3
    assert "(0 with rubric: none)" in " ".join(back.output.split())
