"""verl's reward functions backed by a running ``agentcredit serve``.

Set ``AGENTCREDIT_REWARD_URL`` (e.g. ``http://rewards:8000``, or OpenRLHF's
``http://rewards:8000/get_reward``) and point
``custom_reward_function.path`` at this file with ``.name`` = ``compute_score`` (per sample)
or ``compute_score_batch`` (verl's ``batch`` reward manager). Every worker then shares the
service's one verifier, cache, rate limit and model settings (the service's options: its
``--timeout``, ``--max-tokens``, ``--concurrency`` ...); ``AGENTCREDIT_REWARD_TIMEOUT``
(seconds, default 600) bounds one request to the service; ``extra_info["prompt"]`` is the
prompt text and ``extra_info["task_id"]`` names the task whose frozen checklist the service
verifies (``--rubric checklist|both``; sent as the label ``{"task_id", "ground_truth"}``).
A sample the service could not score carries ``unscored_code`` and ``unscored`` (why) beside
the fallback the service was started with (``--unscored fallback:<value>``); without one,
the call raises a ConfigError naming the sample (verl needs a number, never a silent 0).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import Any

import httpx

from agentcredit.errors import ConfigError, env_value

_CLIENTS: dict[str, httpx.Client] = {}
_LOCK = threading.Lock()


def _client(url: str) -> httpx.Client:
    with _LOCK:
        if url not in _CLIENTS:
            seconds = env_value("AGENTCREDIT_REWARD_TIMEOUT", 600.0, "positive")
            _CLIENTS[url] = httpx.Client(base_url=url, timeout=httpx.Timeout(seconds))
        return _CLIENTS[url]


def _url() -> str:
    url: str | None = env_value("AGENTCREDIT_REWARD_URL", None, "url")
    if not url:
        raise ConfigError("AGENTCREDIT_REWARD_URL is not set (the URL of `agentcredit serve`)")
    return url.rstrip("/").removesuffix("/get_reward")  # also as OpenRLHF writes it


def get_rewards(queries: Sequence[str], prompts: Sequence[str],
                labels: Sequence[Any] | None = None, *, url: str | None = None,
                ) -> dict[str, Any]:
    """One OpenRLHF-protocol request: ``{"rewards", "scores", "extra_logs"}``."""
    response = _client(url or _url()).post("/get_reward", json={
        "query": list(queries), "prompts": list(prompts),
        "labels": list(labels) if labels is not None else [None] * len(queries)})
    if response.status_code >= 400:
        try:
            reason = response.json().get("error", response.text)
        except ValueError:  # not the service (a proxy's page, a wrong path)
            reason = " ".join(response.text.split())[:200]
        raise ConfigError(f"reward service at {response.url}: {response.status_code}: {reason}")
    result: dict[str, Any] = response.json()
    return result


def compute_score(data_source: str, solution_str: str, ground_truth: str,
                  extra_info: dict[str, Any] | None = None) -> dict[str, Any]:
    """verl's per-sample reward function, answered by the service."""
    [result] = compute_score_batch([data_source], [solution_str], [ground_truth], [extra_info])
    return result


def compute_score_batch(data_sources: Sequence[str], solution_strs: Sequence[str],
                        ground_truths: Sequence[str],
                        extra_infos: Sequence[dict[str, Any] | None] | None = None,
                        **_: Any) -> list[dict[str, Any]]:
    """verl's batch reward function, one request for the whole batch."""
    extras = [e or {} for e in (extra_infos or [None] * len(solution_strs))]
    prompts = [str(e.get("prompt") or "") for e in extras]
    labels = [json.dumps({"task_id": str(e["task_id"]), "ground_truth": truth})
              if e.get("task_id") else truth for e, truth in zip(extras, ground_truths,
                                                                  strict=True)]
    answer = get_rewards([p + s for p, s in zip(prompts, solution_strs, strict=True)], prompts,
                         labels)
    why = answer.get("extra_logs", {}).get("unscored") or [None] * len(solution_strs)
    hashes = answer.get("extra_logs", {}).get("checklist_hash") or [None] * len(solution_strs)
    out: list[dict[str, Any]] = []
    for n, (reward, source, unscored) in enumerate(zip(answer["rewards"], data_sources, why,
                                                       strict=True)):
        if reward is None:  # verl needs a number: the service's fallback, or a clear error
            raise ConfigError(
                f"sample {n} could not be scored ({unscored['code']}: {unscored['reason']}) "
                "and verl needs a number: start the service with --unscored "
                "fallback:<value> to send that value for such samples")
        out.append({"score": float(reward), "data_source": source,
                    **({"checklist_hash": hashes[n]} if hashes[n] else {}),
                    **({"unscored_code": unscored["code"], "unscored": unscored["reason"]}
                       if unscored else {})})
    return out
