"""The reward service's ASGI app: OpenRLHF's remote reward protocol and turn rewards.

Endpoints:

- ``GET /health`` → ``{"status": "ok", "bank": <hash>, "model": <id>, "skills": n,
  "usage": <this worker's model requests, cache hits, failures and tokens>}``.
- ``POST /get_reward`` — OpenRLHF's remote reward model (``--remote_rm_url
  http://host:port/get_reward``): ``{"query": [prompt+response, ...], "prompts": [...],
  "labels": [...]}`` → ``{"rewards": [...], "scores": [...], "extra_logs": {...}}``. Each
  reward is ``outcome + λ·S`` (the answer checked against the label, ``S`` the rubric
  satisfaction of the response); ``scores`` clips it to [0, 1]. A sample that cannot be
  scored gets null (OpenRLHF's float list cannot carry it: start the service with
  ``--unscored fallback:<value>`` to send that value instead), and ``extra_logs.unscored``
  says why (``{"code", "reason"}``). A label may name its task, as a JSON object
  ``{"task_id": ..., "ground_truth": ...}`` (the service's ``--rubric checklist|both``
  verifies that task's frozen checklist; ``extra_logs.checklist_hash`` names it). A sample
  whose label was checked but whose process part could not be scored gets its outcome
  alone, and ``extra_logs.process_unscored`` says so (``{"code", "reason"}``, null for the
  others).
- ``POST /turn_rewards`` — ``{"trajectories": [{"prompt", "completion", "skill_id"?,
  "task_id"?, "ground_truth"?, "outcome"?, "group"?}]}`` (completions as text or chat
  messages with tool calls; ``outcome``: the environment's own, instead of checking an
  answer) → ``{"trajectories": [{"reward", "outcome", "satisfaction", "skill_hash",
  "checklist_hash", "turn_steps", "advantages", "detail"}]}``: per-turn advantages
  (:func:`agentcredit.rewards.hooks.turn_advantages`) with GRPO groups taken from
  ``group`` (default: the prompt).

- ``GET /openapi.json`` — the OpenAPI document of all of it
  (:mod:`agentcredit.serve.models`).

A request that cannot be served gets a 4xx answer with a one-line ``error`` naming the field
(bodies are bounded in size and nesting depth before they are parsed, see
:mod:`agentcredit.serve.body`); the server goes on. A well-formed request always gets one
reward per sample: a sample that cannot be scored gets a null reward (in ``/get_reward``, the
configured fallback if one is set) and its reason, never a 0 it did not earn and never a
5xx. The skill of a sample is ``skill_id`` when given, else the server's ``--skill``, else
top-1 retrieval on the prompt when it scores at least the retrieval floor (else
``no_skill``); its checklist is its task's (else ``no_checklist``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
from collections.abc import AsyncIterator
from typing import Any

from pydantic import BaseModel, ValidationError
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from agentcredit.errors import BadRequest, InputError
from agentcredit.redact import redact_text
from agentcredit.rewards.hooks import (
    SkillRubricReward,
    UnscoredPolicy,
    trial_from_completion,
    turn_advantages,
)
from agentcredit.schema import TrialVerdict
from agentcredit.serve.body import MAX_BODY_BYTES, MAX_DEPTH, parse_body
from agentcredit.serve.models import (
    GetRewardRequest,
    Trajectory,
    TurnRewardsRequest,
    openapi_document,
    validation_message,
)
from agentcredit.skills.embed import make_embedder
from agentcredit.skills.ranking import floor_of, retrieve

log = logging.getLogger("agentcredit.serve")


def make_app(reward: SkillRubricReward, *, skill: str | None = None,
             max_body_bytes: int = MAX_BODY_BYTES, max_depth: int = MAX_DEPTH,
             unscored: UnscoredPolicy | None = None, floor: float | None = None) -> Starlette:
    """The ASGI app around one shared reward (bank, checklists, verifier client, cache,
    limits); ``unscored``: what ``/get_reward`` sends for a sample it could not score (null);
    ``floor``: the retrieval score below which a prompt has no skill (default: the
    lexical ranker's measured floor)."""
    service = _Service(reward, skill, max_body_bytes, max_depth)
    service.floor = floor_of("lexical", floor, len(reward.bank.skills) if reward.bank else 0)
    service.unscored = unscored or UnscoredPolicy()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        if reward.verifier is not None:  # graceful shutdown: in-flight requests are done
            await reward.verifier.aclose()  # type: ignore[attr-defined]

    return Starlette(lifespan=lifespan, routes=[
        Route("/health", service.health, methods=["GET"]),
        Route("/openapi.json", service.openapi, methods=["GET"]),
        Route("/get_reward", service.get_reward, methods=["POST"]),
        Route("/turn_rewards", service.turn_rewards, methods=["POST"]),
    ])


class _Service:
    def __init__(self, reward: SkillRubricReward, skill: str | None, max_body_bytes: int,
                 max_depth: int) -> None:
        self.reward, self.skill = reward, skill
        self.max_body_bytes, self.max_depth = max_body_bytes, max_depth
        self.unscored = UnscoredPolicy()
        self.floor = 0.0
        self.embedder = make_embedder("lexical")

    async def health(self, request: Request) -> JSONResponse:
        bank = self.reward.bank
        verifier = self.reward.verifier
        ledger = getattr(verifier, "ledger", None)
        return JSONResponse({"status": "ok", "bank": bank.hash if bank else None,
                             "model": verifier.model_id if verifier else None,
                             "skills": len(bank.skills) if bank else 0,
                             "usage": ledger.summary() if ledger else None})

    async def openapi(self, request: Request) -> JSONResponse:
        from agentcredit.version import __version__

        return JSONResponse(openapi_document(__version__))

    async def get_reward(self, request: Request) -> Response:
        try:
            body = await self._read(request, GetRewardRequest)
        except BadRequest as exc:
            return _bad(exc)
        except ClientDisconnect:
            return _disconnected(request)
        assert isinstance(body, GetRewardRequest)
        queries = body.query
        prompts = body.prompts or [""] * len(queries)
        labels, tasks = zip(*(_label(x) for x in body.labels or [None] * len(queries)),
                            strict=True)
        responses = [q[len(p):] if p and q.startswith(p) else q
                     for q, p in zip(queries, prompts, strict=True)]
        skills = await self._skills(prompts, [None] * len(queries))
        scored = await self.reward.score_details(
            prompts, responses, ground_truth=list(labels), skill_id=skills, task_id=list(tasks))
        rewards = [_finite(v) for v, _ in scored]
        satisfied = [s for _, d in scored if (s := _finite(d.get("satisfaction"))) is not None]
        sent = [self.unscored.apply(r) for r in rewards]
        return JSONResponse(_redacted({
            "rewards": sent,
            "scores": [None if r is None else min(1.0, max(0.0, r)) for r in sent],
            "extra_logs": {"satisfaction_mean": sum(satisfied) / len(satisfied)
                           if satisfied else None, "verified": len(satisfied),
                           "skills": skills, "unscored_policy": str(self.unscored),
                           "checklist_hash": [d.get("checklist_hash") for _, d in scored],
                           "unscored": [_why(d) if s is None else None
                                        for (_, d), s in zip(scored, rewards, strict=True)],
                           "process_unscored": [_process_why(d, s) for (_, d), s in
                                                zip(scored, rewards, strict=True)],
                           "rigging": [d.get("rigging") or None for _, d in scored]}}))

    async def turn_rewards(self, request: Request) -> Response:
        try:
            body = await self._read(request, TurnRewardsRequest)
            assert isinstance(body, TurnRewardsRequest)
            items = [_plain(t) for t in body.trajectories]
            for n, item in enumerate(items):
                _readable(n, item)
        except BadRequest as exc:
            return _bad(exc)
        except ClientDisconnect:
            return _disconnected(request)
        return JSONResponse(_redacted({"trajectories": await self._turns(items)}))

    async def _read(self, request: Request, model: type[BaseModel]) -> BaseModel:
        """The request body, bounded, parsed and validated against ``model``."""
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_body_bytes:
            raise BadRequest(_too_large(int(declared), self.max_body_bytes), 413)
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > self.max_body_bytes:
                raise BadRequest(_too_large(size, self.max_body_bytes), 413)
            chunks.append(chunk)
        value = parse_body(b"".join(chunks), max_depth=self.max_depth)
        if not isinstance(value, dict):
            raise BadRequest(f"the body must be a JSON object, not {_kind(value)}")
        try:
            return model.model_validate(value)
        except ValidationError as exc:
            raise BadRequest(validation_message(exc)) from None

    async def _turns(self, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        prompts = [_text(i.get("prompt")) for i in items]
        skills = await self._skills(prompts, [i.get("skill_id") for i in items])
        scored = await self.reward.score_details(
            [i.get("prompt", "") for i in items], [i["completion"] for i in items],
            ground_truth=[_truth(i.get("ground_truth")) for i in items], skill_id=skills,
            task_id=[i.get("task_id") for i in items], outcome=[i.get("outcome") for i in items])
        out: list[dict[str, Any]] = []
        verdicts: list[tuple[int, TrialVerdict, Any]] = []
        for n, (value, detail) in enumerate(scored):
            out.append({"reward": _finite(value), "outcome": _finite(detail.get("outcome")),
                        "satisfaction": _finite(detail.get("satisfaction")),
                        "skill_id": skills[n], "skill_hash": detail.get("skill_hash"),
                        "checklist_hash": detail.get("checklist_hash"),
                        "turn_steps": [], "advantages": [],
                        "detail": {k: v for k, v in detail.items()
                                   if isinstance(v, str) or _finite(v) is not None}})
            verdict = detail.get("verdict")
            if isinstance(verdict, TrialVerdict) and detail.get("criteria"):
                verdicts.append((n, verdict, detail["criteria"]))
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
            [_finite(details[n].get("outcome")) for n, _, _ in verdicts],
            [str(items[n].get("group") or prompts[n]) for n, _, _ in verdicts],
            process_weight=self.reward.process_weight)
        for (n, verdict, _), values in zip(verdicts, arrays, strict=True):
            out[n]["turn_steps"] = list(verdict.turn_steps)
            out[n]["advantages"] = [x if math.isfinite(x) else 0.0 for x in map(float, values)]

    async def _skills(self, prompts: list[str], given: list[Any]) -> list[str | None]:
        """Each sample's skill: its own, the server's, else top-1 retrieval on the prompt
        (none below the floor)."""
        chosen: list[str | None] = [str(g) if g else self.skill for g in given]
        bank = self.reward.bank
        missing = [n for n, s in enumerate(chosen) if s is None and prompts[n].strip()]
        if bank is None or not missing or self.reward.rubric == "checklist":
            return chosen
        from agentcredit.schema import Task

        tasks = [Task(id=str(n), instruction=prompts[n], benchmark="-", source_path="-")
                 for n in missing]
        for result in await retrieve(bank, tasks, self.embedder):
            if result.best is not None and result.best.score >= self.floor:
                chosen[int(result.task_id)] = result.best.skill_id
        return chosen


def _plain(trajectory: Trajectory) -> dict[str, Any]:
    """A validated trajectory as the plain values the reward hook reads."""
    return trajectory.model_dump(mode="json", exclude_none=True)


def _readable(n: int, item: dict[str, Any]) -> None:
    """Refuse a trajectory whose messages do not make a trajectory (a tool result first)."""
    try:
        trial_from_completion(item.get("prompt", ""), item["completion"])
    except InputError as exc:
        raise BadRequest(f"trajectories[{n}]: {exc.reason}") from None


def _truth(value: Any) -> str | None:
    return None if value is None else str(value)


def _label(value: Any) -> tuple[str | None, str | None]:
    """(ground truth, task id) of an OpenRLHF label: a JSON object naming ``task_id`` (and
    ``ground_truth``), else the label itself as the ground truth.

    >>> _label('{"task_id": "t1", "ground_truth": 42}'), _label("42")
    (('42', 't1'), ('42', None))
    """
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            named = json.loads(value)
        except ValueError:
            named = None
        if isinstance(named, dict) and "task_id" in named:
            return _truth(named.get("ground_truth")), _truth(named["task_id"])
    return _truth(value), None


def _redacted(value: Any) -> Any:
    """A response with every string redacted (an answer or a reason can quote the sample)."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {k: _redacted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted(v) for v in value]
    return value


def _finite(value: Any) -> float | None:
    """A number JSON can carry, else None (NaN and infinities are not rewards)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _why(detail: dict[str, Any]) -> dict[str, str]:
    """Why a sample got no reward: a stable code and a sentence."""
    return {"code": str(detail.get("unscored_code") or "nothing_applies"),
            "reason": str(detail.get("unscored") or "nothing applies")}


def _process_why(detail: dict[str, Any], reward: float | None) -> dict[str, str] | None:
    """Why a sample's reward is its outcome alone (the process part could not be scored):
    a stable code and a sentence; None when the reward holds both parts or is null."""
    if reward is None or "process_code" not in detail:
        return None
    return {"code": str(detail["process_code"]),
            "reason": f"{detail.get('process')}: the reward is the outcome alone"}


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(str(m.get("content") or "") for m in value if isinstance(m, dict))
    return ""


def _kind(value: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number")


def _too_large(size: int, limit: int) -> str:
    return f"the body is {size:,} bytes or more (at most {limit:,})"


def _bad(exc: BadRequest) -> JSONResponse:
    return JSONResponse({"error": str(exc)}, status_code=exc.status)


def _disconnected(request: Request) -> Response:
    client = request.client
    where = f"{client.host}:{client.port}" if client else "a client"
    log.warning("%s disconnected before its %s %s body was read; nothing was scored",
                where, request.method, request.url.path)
    return Response(status_code=400)
