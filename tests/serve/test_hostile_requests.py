"""The reward service against what a trainer (or anything else) can send: a verifier that
decides nothing, bodies too deep, too large or not quite text, messages with odd roles, and
clients that hang up. Every one gets a 200 with a reward per sample or a 4xx naming what is
wrong; none gets a 5xx, and the normal client is still served afterwards."""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.serve.conftest import running, serve_with

COMPLETION = [
    {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "type": "function",
         "function": {"name": "bash", "arguments": "{\"command\": \"python3 sum.py\"}"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "total = 42"},
    {"role": "assistant", "content": "<answer>42</answer>"}]


def decides_nothing(messages: list[dict[str, Any]], schema: dict[str, Any] | None) -> str:
    """A verifier that finds no rubric criterion applicable to anything."""
    assert (schema or {}).get("title") == "CoarseAnswer"
    ids = ["R1", "R2", "R3"]
    return json.dumps({"turns": [], "criteria": [
        {"criterion_id": c, "applicable": False, "candidate_steps": [], "reason": "n/a"}
        for c in ids]})


@pytest.fixture
def undecided(tmp_path: Path) -> Iterator[str]:
    with running(serve_with(tmp_path, "serve-undecided", decides_nothing,
                            max_body_bytes=2_000_000)) as url:
        yield url


def test_two_hundred_requests_from_sixteen_clients_are_served_when_nothing_is_decided(
        undecided: str) -> None:
    def worker(indices: list[int]) -> list[tuple[int, int, dict[str, Any]]]:
        with httpx.Client(base_url=undecided, timeout=60) as client:
            out = []
            for i in indices:
                prompt = f"Sum the numbers of file {i}. "
                answer = client.post("/get_reward", json={
                    "query": [prompt + "<answer>1</answer>", prompt + "no idea"],
                    "prompts": [prompt, prompt], "labels": ["1", None]})
                out.append((i, answer.status_code, answer.json()))
            return out

    with ThreadPoolExecutor(16) as pool:
        served = [r for chunk in pool.map(worker, [list(range(n, 200, 16)) for n in range(16)])
                  for r in chunk]
    assert sorted(i for i, _, _ in served) == list(range(200))
    assert {status for _, status, _ in served} == {200}
    for _, _, body in served:
        assert body["rewards"] == [1.0, None] and body["scores"] == [1.0, None]  # never 0
        assert body["extra_logs"]["verified"] == 0
        assert body["extra_logs"]["satisfaction_mean"] is None
        assert body["extra_logs"]["unscored"][0] is None
        assert body["extra_logs"]["unscored"][1]["code"] == "no_applicable_criterion"
        assert "no rubric criterion applicable" in body["extra_logs"]["unscored"][1]["reason"]


def test_turn_rewards_give_a_null_reward_with_its_reason_when_nothing_is_decided(
        undecided: str) -> None:
    answer = httpx.post(f"{undecided}/turn_rewards", json={"trajectories": [
        {"prompt": "Sum it.", "completion": COMPLETION},
        {"prompt": "Sum it.", "completion": COMPLETION, "ground_truth": 42}]}, timeout=60)
    assert answer.status_code == 200, answer.text
    first, second = answer.json()["trajectories"]
    assert first["reward"] is None and first["satisfaction"] is None
    assert "no rubric criterion applicable" in first["detail"]["process"]
    assert second["reward"] == 1.0 and second["outcome"] == 1.0


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


def _messages(*messages: Any) -> bytes:
    return json.dumps({"trajectories": [{"prompt": "p", "completion": list(messages)}]}).encode()


HOSTILE = [
    ("surrogate in a query", b'{"query": ["Sum it. \\udc80 <answer>1</answer>"]}', 200, ""),
    ("surrogate in a trajectory",
     _messages({"role": "assistant", "content": "\\udc80 done"}).replace(b"\\\\", b"\\"),
     200, ""),
    ("a 100,000-deep array", _deep(100_000).encode(), 400, "levels deep"),
    ("a 100,000-deep object", ('{"a":' * 100_000 + "1" + "}" * 100_000).encode(), 400,
     "levels deep"),
    ("900-deep tool arguments", _messages({"role": "assistant", "tool_calls": [
        {"id": "x", "function": {"name": "bash", "arguments": json.loads(_deep(900))}}]}),
     400, "levels deep"),
    ("900-deep tool arguments as a string", _messages({"role": "assistant", "tool_calls": [
        {"id": "x", "function": {"name": "bash", "arguments": _deep(900)}}]}), 200, ""),
    ("an integer role", _messages({"role": 3, "content": "x"}), 400,
     "trajectories[0].completion[0].role"),
    ("no role", _messages({"content": "x"}), 400, "trajectories[0].completion[0].role"),
    ("an unknown role", _messages({"role": "robot", "content": "x"}), 400, "role: Input"),
    ("a tool message first",
     json.dumps({"trajectories": [{"completion": [{"role": "tool", "content": "x"}]}]}).encode(),
     400, "trajectories[0]: tool result before any agent message"),
    ("an unknown prompt role", json.dumps({"trajectories": [{
        "prompt": [{"role": "narrator", "content": "x"}], "completion": "ok"}]}).encode(),
     400, "trajectories[0].prompt[0].role"),
    ("a boolean group", json.dumps({"trajectories": [
        {"completion": "ok", "group": True}]}).encode(), 400, "trajectories[0].group"),
    ("NaN", b'{"query": ["a"], "labels": [NaN]}', 400, "not JSON"),
    ("not UTF-8", b'{"query": ["\xff"]}', 400, "not UTF-8"),
    ("empty", b"", 400, "empty"),
    ("a list of trajectories that is empty", b'{"trajectories": []}', 400, "trajectories"),
    ("a body over the bound", b'{"query": ["' + b"x" * 2_100_000 + b'"]}', 413, "at most"),
]


@pytest.mark.parametrize(("body", "status", "reason"), [h[1:] for h in HOSTILE],
                         ids=[h[0] for h in HOSTILE])
def test_a_hostile_body_gets_a_4xx_naming_the_field_or_is_served(
        undecided: str, body: bytes, status: int, reason: str) -> None:
    path = "/turn_rewards" if b"trajectories" in body[:40] else "/get_reward"
    answer = httpx.post(f"{undecided}{path}", content=body, timeout=60)
    assert answer.status_code == status, answer.text[:300]
    if status >= 400:
        error = answer.json()["error"]
        assert reason in error and "\n" not in error and "Traceback" not in error
    normal = httpx.post(f"{undecided}/get_reward", json={"query": ["<answer>1</answer>"],
                                                         "labels": ["1"]}, timeout=60)
    assert normal.status_code == 200 and normal.json()["rewards"] == [1.0]


def test_a_client_that_hangs_up_mid_body_is_one_log_line(
        undecided: str, caplog: pytest.LogCaptureFixture) -> None:
    host, port = undecided.removeprefix("http://").split(":")
    with caplog.at_level(logging.WARNING), socket.create_connection((host, int(port))) as sock:
        sock.sendall(b"POST /get_reward HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                     b"\r\nContent-Length: 1000\r\n\r\n{\"query\": [")
    normal = httpx.post(f"{undecided}/get_reward", json={"query": ["x"]},
                        timeout=60)  # still served
    assert normal.status_code == 200
    import time
    deadline = time.monotonic() + 60  # the log line, however busy the machine
    while time.monotonic() < deadline:
        if any("disconnected" in r.getMessage() for r in caplog.records):
            break
        time.sleep(0.05)
    lines = [r for r in caplog.records if "disconnected" in r.getMessage()]
    assert len(lines) == 1 and lines[0].name == "agentcredit.serve"
    assert not any(r.exc_info for r in caplog.records)


def test_the_openapi_document_describes_the_three_routes(undecided: str) -> None:
    document = httpx.get(f"{undecided}/openapi.json").json()
    assert document["openapi"].startswith("3.1")
    assert set(document["paths"]) == {"/health", "/get_reward", "/turn_rewards"}
    body = document["paths"]["/turn_rewards"]["post"]["requestBody"]
    assert body["content"]["application/json"]["schema"]["$ref"].endswith("TurnRewardsRequest")
    roles = document["components"]["schemas"]["ChatMessage"]["properties"]["role"]["enum"]
    assert "assistant" in roles and "robot" not in roles
