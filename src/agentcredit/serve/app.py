"""The reward service's ASGI app: OpenRLHF's remote reward protocol and turn rewards.

Endpoints:

- ``GET /health`` → ``{"status": "ok", "bank": <hash>, "model": <id>, "skills": n}``.
- ``POST /get_reward`` — OpenRLHF's remote reward model (``--remote_rm_url
  http://host:port/get_reward``): ``{"query": [prompt+response, ...], "prompts": [...],
  "labels": [...]}`` → ``{"rewards": [...], "scores": [...], "extra_logs": {...}}``. Each
  reward is ``outcome + λ·S`` (the answer checked against the label, ``S`` the rubric
  satisfaction of the response), 0 where nothing applies; ``scores`` clips it to [0, 1].
- ``POST /turn_rewards`` — ``{"trajectories": [{"prompt", "completion", "skill_id"?,
  "ground_truth"?, "group"?}]}`` (completions as text or chat messages with tool calls) →
  ``{"trajectories": [{"reward", "outcome", "satisfaction", "turn_steps", "advantages",
  "detail"}]}``: per-turn advantages (:func:`agentcredit.rewards.hooks.turn_advantages`)
  with GRPO groups taken from ``group`` (default: the prompt).

A request that cannot be served gets a 4xx answer with a one-line ``error``; the server
goes on. The skill of a sample is ``skill_id`` when given, else the server's ``--skill``,
else top-1 retrieval on the prompt text.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from agentcredit.rewards.hooks import SkillRubricReward, turn_advantages
from agentcredit.schema import TrialVerdict
from agentcredit.skills.embed import make_embedder
from agentcredit.skills.ranking import retrieve

MAX_ITEMS = 4096


class BadRequest(ValueError):
    """A request the service cannot serve; its message is the one-line 4xx reason."""


def make_app(reward: SkillRubricReward, *, skill: str | None = None) -> Starlette:
    """The ASGI app around one shared reward (bank, verifier client, cache, limits)."""
    service = _Service(reward, skill)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        if reward.verifier is not None:  # graceful shutdown: in-flight requests are done
            await reward.verifier.aclose()  # type: ignore[attr-defined]

    return Starlette(lifespan=lifespan, routes=[
        Route("/health", service.health, methods=["GET"]),
        Route("/get_reward", service.get_reward, methods=["POST"]),
        Route("/turn_rewards", service.turn_rewards, methods=["POST"]),
    ])


class _Service:
    def __init__(self, reward: SkillRubricReward, skill: str | None) -> None:
        self.reward, self.skill = reward, skill
        self.embedder = make_embedder("lexical")

    async def health(self, request: Request) -> JSONResponse:
        bank = self.reward.bank
        return JSONResponse({"status": "ok", "bank": bank.hash if bank else None,
                             "model": self.reward.verifier.model_id if self.reward.verifier
                             else None, "skills": len(bank.skills) if bank else 0})

    async def get_reward(self, request: Request) -> JSONResponse:
        try:
            body = await _body(request)
            queries = _strings(body, "query", required=True)
            prompts = _strings(body, "prompts", length=len(queries))
            labels = body.get("labels") or [None] * len(queries)
            if not isinstance(labels, list) or len(labels) != len(queries):
                raise BadRequest("labels must be a list as long as query")
        except BadRequest as exc:
            return _bad(exc)
        responses = [q[len(p):] if p and q.startswith(p) else q
                     for q, p in zip(queries, prompts, strict=True)]
        skills = await self._skills(prompts, [None] * len(queries))
        scored = await self.reward.score_details(
            prompts, responses, ground_truth=[None if x is None else str(x) for x in labels],
            skill_id=skills)
        details = [d for _, d in scored]
        rewards = [0.0 if v is None else float(v) for v, _ in scored]
        satisfied = [d["satisfaction"] for d in details if "satisfaction" in d]
        return JSONResponse({
            "rewards": rewards, "scores": [min(1.0, max(0.0, r)) for r in rewards],
            "extra_logs": {"satisfaction_mean": sum(satisfied) / len(satisfied)
                           if satisfied else None, "verified": len(satisfied),
                           "skills": skills}})

    async def turn_rewards(self, request: Request) -> JSONResponse:
        try:
            body = await _body(request)
            items = body.get("trajectories")
            if not isinstance(items, list) or not items or len(items) > MAX_ITEMS:
                raise BadRequest(f"trajectories must be a list of 1-{MAX_ITEMS} objects")
            if not all(isinstance(i, dict) and "completion" in i for i in items):
                raise BadRequest("every trajectory needs a completion")
        except BadRequest as exc:
            return _bad(exc)
        return JSONResponse({"trajectories": await self._turns(items)})

    async def _turns(self, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        prompts = [_text(i.get("prompt")) for i in items]
        skills = await self._skills(prompts, [i.get("skill_id") for i in items])
        scored = await self.reward.score_details(
            [i.get("prompt", "") for i in items], [i["completion"] for i in items],
            ground_truth=[i.get("ground_truth") for i in items], skill_id=skills)
        out: list[dict[str, Any]] = []
        verdicts: list[tuple[int, TrialVerdict, Any]] = []
        for n, (value, detail) in enumerate(scored):
            out.append({"reward": value, "outcome": detail.get("outcome"),
                        "satisfaction": detail.get("satisfaction"), "skill_id": skills[n],
                        "turn_steps": [], "advantages": [],
                        "detail": {k: v for k, v in detail.items()
                                   if isinstance(v, (int, float, str))}})
            verdict = detail.get("verdict")
            bank = self.reward.bank
            skill = bank.get(skills[n] or "") if bank else None
            if isinstance(verdict, TrialVerdict) and skill is not None:
                verdicts.append((n, verdict, skill.rubric))
        self._advantages(items, prompts, [d for _, d in scored], verdicts, out)
        return out

    def _advantages(self, items: list[dict[str, Any]], prompts: list[str],
                    details: list[dict[str, Any]],
                    verdicts: list[tuple[int, TrialVerdict, Any]],
                    out: list[dict[str, Any]]) -> None:
        if not verdicts:
            return
        arrays = turn_advantages(
            [v for _, v, _ in verdicts], [r for _, _, r in verdicts],
            [details[n].get("outcome") for n, _, _ in verdicts],
            [str(items[n].get("group") or prompts[n]) for n, _, _ in verdicts],
            process_weight=self.reward.process_weight)
        for (n, verdict, _), values in zip(verdicts, arrays, strict=True):
            out[n]["turn_steps"] = list(verdict.turn_steps)
            out[n]["advantages"] = [float(x) for x in values]

    async def _skills(self, prompts: list[str], given: list[Any]) -> list[str | None]:
        """Each sample's skill: its own, the server's, else top-1 retrieval on the prompt."""
        chosen: list[str | None] = [str(g) if g else self.skill for g in given]
        bank = self.reward.bank
        missing = [n for n, s in enumerate(chosen) if s is None and prompts[n].strip()]
        if bank is None or not missing:
            return chosen
        from agentcredit.schema import Task

        tasks = [Task(id=str(n), instruction=prompts[n], benchmark="-", source_path="-")
                 for n in missing]
        for result in await retrieve(bank, tasks, self.embedder):
            if result.best is not None:
                chosen[int(result.task_id)] = result.best.skill_id
        return chosen


async def _body(request: Request) -> dict[str, Any]:
    try:
        body = json.loads(await request.body())
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequest(f"the body is not JSON ({exc})") from None
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    return body


def _strings(body: dict[str, Any], key: str, *, required: bool = False,
             length: int | None = None) -> list[str]:
    value = body.get(key)
    if value is None and not required and length is not None:
        return [""] * length
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise BadRequest(f"{key} must be a list of strings")
    if not value or len(value) > MAX_ITEMS:
        raise BadRequest(f"{key} must hold 1-{MAX_ITEMS} strings")
    if length is not None and len(value) != length:
        raise BadRequest(f"{key} must be as long as query ({length}), not {len(value)}")
    return list(value)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(str(m.get("content") or "") for m in value if isinstance(m, dict))
    return ""


def _bad(exc: BadRequest) -> JSONResponse:
    return JSONResponse({"error": str(exc)}, status_code=400)
