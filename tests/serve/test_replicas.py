"""The reward service scaled out the way trainers deploy reward models: two replicas (two
``agentcredit serve`` processes) behind which concurrent clients spread their requests,
sharing one response cache. Every request is answered exactly once, either replica gives
the same rewards, and a request one replica answered costs the other no model call."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.llm.fake_server import FakeLLMServer
from tests.rewards import scripted_verifier
from tests.rewards.test_acting_hooks import TOOL_COMPLETION
from tests.serve.conftest import free_port, make_bank_dir

ROOT = Path(__file__).parents[2]


def _verifier(body: dict[str, Any]) -> str:
    schema = (body.get("response_format") or {}).get("json_schema", {}).get("schema")
    return scripted_verifier.answer(body["messages"], schema)


def _replica(bank: Path, cache: Path, url: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentcredit", "serve", "--bank", str(bank), "--model",
         "openai/verifier", "--base-url", url, "--cache", str(cache), "--skill", "sums",
         "--port", str(port), "--concurrency", "8"],
        cwd=ROOT, env={**os.environ, "OPENAI_API_KEY": "sk-test"},
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    address = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        try:
            if httpx.get(f"{address}/health").status_code == 200:
                return proc, address
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError("a replica did not start")


def _payload(i: int) -> dict[str, Any]:
    name = i % 12 if i < 100 else i  # from 100 on, prompts no replica has seen
    prompt = [{"role": "user", "content": f"Sum the numbers of file {name}."}]
    return {"trajectories": [{"prompt": prompt, "completion": TOOL_COMPLETION,
                              "ground_truth": str(42 if i % 2 else 7)}]}


def test_two_replicas_share_one_cache_under_concurrent_clients(tmp_path: Path) -> None:
    pytest.importorskip("uvicorn")
    bank, cache = make_bank_dir(tmp_path), tmp_path / "shared.sqlite"
    with FakeLLMServer(responder=_verifier) as model:
        replicas = [_replica(bank, cache, f"{model.url}/v1") for _ in range(2)]
        try:
            addresses = [address for _, address in replicas]

            def client(jobs: list[tuple[int, int]]) -> list[tuple[int, int, float]]:
                out = []
                for i, which in jobs:
                    answer = httpx.post(f"{addresses[which]}/turn_rewards", json=_payload(i),
                                        timeout=120)
                    assert answer.status_code == 200, answer.text
                    [trajectory] = answer.json()["trajectories"]
                    out.append((i, which, trajectory["reward"]))
                return out

            # 48 requests from 8 clients, each request to both replicas.
            jobs = [(i, which) for i in range(48) for which in (0, 1)]
            with ThreadPoolExecutor(8) as pool:
                answered = [r for part in pool.map(client, [jobs[n::8] for n in range(8)])
                            for r in part]
            assert sorted((i, w) for i, w, _ in answered) == sorted(jobs)  # each once
            by_replica = {(i, w): reward for i, w, reward in answered}
            assert all(by_replica[(i, 0)] == by_replica[(i, 1)] for i in range(48))
            assert len({by_replica[(i, 0)] for i in range(48)}) == 2  # rewards differ by truth
            # What one replica asked, the other reads from the shared cache: no model call.
            calls = model.count
            first = client([(i, 0) for i in range(100, 112)])
            assert model.count > calls  # new prompts: replica 0 asked the model
            calls = model.count
            second = client([(i, 1) for i in range(100, 112)])
            assert model.count == calls
            assert [r for _, _, r in first] == [r for _, _, r in second]
        finally:
            for proc, _ in replicas:
                proc.terminate()
                proc.wait(timeout=30)
