"""The verl reward function inside a real (local) Ray cluster, called the way verl's reward
workers call it: actors that each score batches of samples with
``compute_score_batch``, configured by the environment (one client and one response cache
per actor), the turn verifier behind a loopback server. One actor is killed in the middle
of a batch; Ray restarts it and retries the batch, and every reward equals the one the
same call gives in this process."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from agentcredit.rewards import hooks
from tests.llm.fake_server import FakeLLMServer
from tests.rewards import scripted_verifier
from tests.rewards.test_acting_hooks import TOOL_COMPLETION
from tests.serve.conftest import make_bank_dir

ray = pytest.importorskip("ray", reason="needs ray (the [rl] extra): pip install ray")
ROOT = Path(__file__).parents[2]
SLOW = "held-until-the-kill"


class Verifier:
    """The scripted turn verifier; a request of the batch marked :data:`SLOW` waits, the
    first time, until the test has killed the actor that sent it."""

    def __init__(self) -> None:
        self.arrived, self.release = threading.Event(), threading.Event()
        self.marked: set[str] = set()

    def __call__(self, body: dict[str, Any]) -> str:
        if SLOW in json.dumps(body) and not self.release.is_set():
            self.marked.add("before the kill")
            self.arrived.set()
            self.release.wait(60)
        if SLOW in json.dumps(body) and self.release.is_set():
            self.marked.add("after the kill")
        schema = (body.get("response_format") or {}).get("json_schema", {}).get("schema")
        return scripted_verifier.answer(body["messages"], schema)


def _batch(n: int, marked: bool = False) -> tuple[list[str], list[Any], list[str],
                                                  list[dict[str, Any]]]:
    """verl's batch: data sources, solution strings, ground truths, extra infos."""
    extras = [{"prompt": [{"role": "user", "content": f"Sum it ({n}.{i}"
                           f"{' ' + SLOW if marked else ''})."}], "skill_id": "sums"}
              for i in range(4)]
    truths = ["42" if i % 2 else "7" for i in range(4)]
    return ["math"] * 4, [TOOL_COMPLETION] * 4, truths, extras


@ray.remote(max_restarts=1, max_task_retries=1)
class RewardWorker:
    """A reward worker as verl runs one: the hook imported in the actor's process, its
    settings from the environment Ray gave it."""

    def score(self, batch: tuple[Any, ...]) -> list[float]:
        from agentcredit.rewards.hooks import compute_score_batch

        return [r["score"] for r in compute_score_batch(*batch)]

    def clients(self) -> int:
        from agentcredit.rewards import hooks as actor_hooks

        return len(actor_hooks._SHARED)


def test_the_verl_hook_in_ray_actors_survives_a_killed_actor(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bank = make_bank_dir(tmp_path)
    verifier = Verifier()
    with FakeLLMServer(responder=verifier) as server:
        settings = {"AGENTCREDIT_BANK": str(bank), "AGENTCREDIT_VERIFIER_MODEL": "openai/v",
                    "AGENTCREDIT_BASE_URL": f"{server.url}/v1", "OPENAI_API_KEY": "sk-test",
                    "AGENTCREDIT_CONCURRENCY": "4"}
        ray.init(num_cpus=2, include_dashboard=False, object_store_memory=78 * 1024 * 1024,
                 log_to_driver=False, runtime_env={"env_vars": {
                     "PYTHONPATH": f"{ROOT / 'src'}:{ROOT}", **settings}})
        try:
            workers = [RewardWorker.options(runtime_env={"env_vars": {  # type: ignore[attr-defined]
                "AGENTCREDIT_CACHE": str(tmp_path / f"cache-{n}.sqlite")}}).remote()
                for n in range(2)]
            batches = [_batch(n, marked=n == 1) for n in range(4)]
            pending = [workers[n % 2].score.remote(b) for n, b in enumerate(batches)]
            assert verifier.arrived.wait(120), "the marked batch never reached the verifier"
            ray.kill(workers[1], no_restart=False)  # mid-batch: its request is held
            verifier.release.set()
            rewards = ray.get(pending, timeout=120)
            assert verifier.marked == {"before the kill", "after the kill"}  # batch redone
            assert ray.get([w.clients.remote() for w in workers]) == [1, 1]
        finally:
            verifier.release.set()
            ray.shutdown()
        for name, value in settings.items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv("AGENTCREDIT_CACHE", str(tmp_path / "here.sqlite"))
        hooks.reset_shared()
        try:
            expected = [[r["score"] for r in hooks.compute_score_batch(*b)] for b in batches]
        finally:
            hooks.reset_shared()
    assert rewards == expected
    assert {r for batch in expected for r in batch} == {0.5, 1.5}  # outcome + λ·S, S = 1
    for n in range(2):
        assert (tmp_path / f"cache-{n}.sqlite").exists()  # one cache per actor
