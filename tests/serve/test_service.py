"""The reward service over real HTTP: many concurrent clients, no request lost, the same
answers as the in-process hook, bad requests answered 4xx without harming the server."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentcredit.llm import ModelClient, make_provider
from agentcredit.rewards.hooks import SkillRubricReward
from agentcredit.skills.bank import load_bank
from tests.rewards.test_acting_hooks import TOOL_COMPLETION


def _sample(i: int) -> tuple[str, str, str]:
    prompt = f"Sum the numbers of file {i}. "
    return prompt, f"<answer>{i % 3}</answer>", "1"


def test_a_thousand_requests_from_sixteen_clients_match_the_in_process_hook(
        service: tuple[str, Path]) -> None:
    url, bank = service

    def worker(indices: list[int]) -> list[tuple[int, float]]:
        out = []
        with httpx.Client(base_url=url, timeout=60) as client:
            for i in indices:
                prompt, response, label = _sample(i)
                answer = client.post("/get_reward", json={
                    "query": [prompt + response], "prompts": [prompt], "labels": [label]})
                assert answer.status_code == 200, answer.text
                body = answer.json()
                assert set(body) == {"rewards", "scores", "extra_logs"}
                out.append((i, body["rewards"][0]))
        return out

    chunks = [list(range(n, 1000, 16)) for n in range(16)]
    with ThreadPoolExecutor(16) as pool:
        served = dict(pair for chunk in pool.map(worker, chunks) for pair in chunk)
    assert sorted(served) == list(range(1000))  # none lost
    reward = SkillRubricReward(bank=load_bank(bank), process_weight=0.5,
                               verifier=ModelClient(make_provider("scripted/serve-verifier")))
    samples = [_sample(i) for i in range(1000)]
    expected = asyncio.run(reward.score_all([s[0] for s in samples], [s[1] for s in samples],
                                            ground_truth=[s[2] for s in samples],
                                            skill_id=["sums"] * 1000))
    assert [served[i] for i in range(1000)] == expected  # null where unscored, never 0
    assert {served[i] for i in range(1000)} == {0.0, 1.0}  # the outcome varies, S = 0 here


@pytest.mark.parametrize(("body", "reason"), [
    (b"{not json", "not JSON"),
    (b"[1, 2]", "JSON object"),
    (b'{"query": "one"}', "query: Input should be a valid list"),
    (b'{"query": ["a", "b"], "prompts": ["a"]}', "prompts must be as long as query"),
    (b'{"query": ["a"], "labels": [1, 2]}', "labels must be as long as query"),
])
def test_bad_requests_get_a_one_line_400_and_the_server_goes_on(
        service: tuple[str, Path], body: bytes, reason: str) -> None:
    url, _ = service
    answer = httpx.post(f"{url}/get_reward", content=body)
    assert answer.status_code == 400 and reason in answer.json()["error"]
    assert "\n" not in answer.json()["error"]
    assert httpx.get(f"{url}/health").json()["status"] == "ok"


def test_turn_rewards_give_per_turn_advantages(service: tuple[str, Path]) -> None:
    url, _ = service
    prompt: Any = [{"role": "user", "content": "Sum it."}]
    answer = httpx.post(f"{url}/turn_rewards", json={"trajectories": [
        {"prompt": prompt, "completion": TOOL_COMPLETION, "ground_truth": "42"},
        {"prompt": prompt, "completion": TOOL_COMPLETION, "ground_truth": "7"}]}, timeout=60)
    assert answer.status_code == 200, answer.text
    first, second = answer.json()["trajectories"]
    assert (first["reward"], second["reward"]) == (1.5, 0.5)
    assert first["satisfaction"] == 1.0 and first["skill_id"] == "sums"
    assert len(first["advantages"]) == len(first["turn_steps"]) > 0
    assert first["advantages"][-1] > second["advantages"][-1]  # the group-relative outcome


def test_the_verl_client_helper_posts_to_the_service(
        service: tuple[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    from agentcredit.serve import client

    url, _ = service
    monkeypatch.setenv("AGENTCREDIT_REWARD_URL", url)
    extras = [{"prompt": _sample(i)[0]} for i in range(4)]
    batch = client.compute_score_batch(["math"] * 4, [_sample(i)[1] for i in range(4)],
                                       ["1"] * 4, extras)
    assert [r["score"] for r in batch] == [0.0, 1.0, 0.0, 0.0]
    assert client.compute_score("math", _sample(1)[1], "1", extras[1])["score"] == 1.0
