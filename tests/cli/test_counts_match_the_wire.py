"""Issue 61: the counts a command prints are the counts a proxy in front of the server sees.

A counting loopback server answers ``run``, ``judge``, ``skills reward`` and ``serve``; one of
its answers is a 500 (retried) and one breaks the schema (repaired), so one question costs
more than one request. Every printed count of requests sent must equal the server's count,
live and again with ``--retry-failed``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
from typer.testing import CliRunner

from agentcredit.cli.app import app
from tests.conftest import EXAMPLES
from tests.judging import scripted_judge
from tests.llm.fake_server import FakeLLMServer
from tests.rewards import scripted_verifier

runner = CliRunner()
ENV = {"OPENAI_API_KEY": "k", "COLUMNS": "200"}
SENT = re.compile(r"model requests sent[^0-9]*?(\d+) \((?:retries )?(\d+)\)")


def _judge(body: dict[str, Any]) -> str:
    schema = body["response_format"]["json_schema"]["schema"]
    return scripted_judge.answer(body["messages"], schema)


def _verifier(body: dict[str, Any]) -> str:
    schema = body["response_format"]["json_schema"]["schema"]
    return scripted_verifier.answer(body["messages"], schema)


def _one_500_one_garbled(index: int, body: dict[str, Any]) -> str | None:
    return {3: "500", 5: "schema"}.get(index)


def _sent(output: str) -> tuple[int, int]:
    found = SENT.search(output)
    assert found, output
    return int(found.group(1)), int(found.group(2))


def _model(server: FakeLLMServer) -> list[str]:
    return ["--model", "openai/counted", "--base-url", f"{server.url}/v1"]


def test_run_and_judge_print_the_requests_the_server_received(tmp_path: Path) -> None:
    run = ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"), "--out", str(tmp_path / "r")]
    with FakeLLMServer(responder=_judge, faults=_one_500_one_garbled) as server:
        first = runner.invoke(app, [*run, *_model(server)], env=ENV)
        assert first.exit_code == 0, first.output
        assert _sent(first.output) == (server.count, 2)  # the 500's retry, the repair
        assert server.count == 3 + 8 + 2
    with FakeLLMServer(responder=_judge) as server:
        again = runner.invoke(app, [*run, *_model(server), "--retry-failed"], env=ENV)
        assert again.exit_code == 0, again.output
        assert _sent(again.output) == (0, 0) == (server.count, 0)  # all done: nothing asked
        judge = ["judge", str(EXAMPLES / "jobs"), "--checklists", str(tmp_path / "r/checklists"),
                 "--tasks", str(EXAMPLES / "tasks"), "--out", str(tmp_path / "j")]
        judged = runner.invoke(app, [*judge, *_model(server), "--no-cache"], env=ENV)
        assert judged.exit_code == 0, judged.output
        assert _sent(judged.output) == (server.count, 0) == (8, 0)


def test_a_replayed_failure_is_not_a_request_and_retry_failed_counts_what_it_sends(
        tmp_path: Path) -> None:
    run = ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"), "--out", str(tmp_path / "r")]
    garble_judging = lambda i, body: None if "DraftChecklist" in json.dumps(  # noqa: E731
        body["response_format"]) else "schema"
    with FakeLLMServer(responder=_judge, faults=garble_judging) as server:
        broken = runner.invoke(app, [*run, *_model(server)], env=ENV)
        assert _sent(broken.output)[0] == server.count
        replay = runner.invoke(app, [*run, *_model(server)], env=ENV)
        before = server.count
        assert _sent(replay.output) == (0, 0) and server.count == before
        assert "replayed from an earlier run" in replay.output
    with FakeLLMServer(responder=_judge) as server:
        fixed = runner.invoke(app, [*run, *_model(server), "--retry-failed"], env=ENV)
        assert fixed.exit_code == 0, fixed.output
        assert _sent(fixed.output) == (server.count, 0) == (8, 0)


def test_skills_reward_prints_the_requests_the_server_received(tmp_path: Path) -> None:
    from tests.rewards.test_turn_verifier import _bank

    bank = _bank(tmp_path)
    reward = ["skills", "reward", str(bank), str(EXAMPLES / "jobs"), "--tasks",
              str(EXAMPLES / "tasks"), "--out", str(tmp_path / "rw")]
    with FakeLLMServer(responder=_verifier, faults=_one_500_one_garbled) as server:
        out = runner.invoke(app, [*reward, *_model(server)], env=ENV)
        assert out.exit_code == 0, out.output
        assert _sent(out.output) == (server.count, 2)
    with FakeLLMServer(responder=_verifier) as server:
        again = runner.invoke(app, [*reward, *_model(server), "--retry-failed"], env=ENV)
        assert _sent(again.output) == (server.count, 0) == (0, 0)  # every answer was stored


def test_the_service_health_counts_what_the_server_received(tmp_path: Path) -> None:
    from agentcredit.cli.serve_cmd import build_app
    from agentcredit.llm import ModelSpec
    from agentcredit.llm.endpoint import EndpointSettings
    from tests.serve.conftest import make_bank_dir, running

    sample = {"query": ["Sum 1 and 1. <answer>2</answer>"] * 3, "prompts": ["Sum 1 and 1. "] * 3,
              "labels": ["2", "2", "2"]}
    with FakeLLMServer(responder=_verifier, faults=_one_500_one_garbled) as server:
        spec = ModelSpec("openai/counted", base_url=f"{server.url}/v1",
                         cache=tmp_path / "cache.sqlite",
                         endpoint=EndpointSettings(concurrency=1))
        with running(build_app(make_bank_dir(tmp_path), spec, skill="sums")) as url:
            for _ in range(2):
                assert httpx.post(f"{url}/get_reward", json=sample, timeout=60).status_code == 200
            usage = httpx.get(f"{url}/health").json()["usage"]
    assert usage["calls"] == server.count > 0
