"""The reward service's contract: request and response models, and the OpenAPI document
written from them (``GET /openapi.json``).

A request is validated against these models before anything is scored; a request that does
not fit gets a 400 whose ``error`` names the field (``trajectories[2].completion[0].role:
...``). The OpenAPI document is generated from the same models, so what the service checks
and what it publishes cannot drift apart.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError, model_validator
from pydantic.json_schema import models_json_schema

MAX_ITEMS = 4096

Role = Literal["system", "developer", "user", "assistant", "tool", "function"]
Scalar = str | int | float | bool | None
_UNION_TAG = re.compile(r"^(?:str|int|float|bool|none|dict|list)$|\[|-")
ROUTES: dict[str, tuple[str, type[BaseModel] | None, type[BaseModel], str]] = {}


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow")


class ToolFunction(_Model):
    """The function of an OpenAI tool call."""

    name: str = Field(default="unknown", max_length=200)
    arguments: str | dict[str, Any] | None = None


class ToolCall(_Model):
    """An OpenAI-style tool call of an assistant message."""

    id: str | None = None
    type: str | None = None
    function: ToolFunction | None = None


class ChatMessage(_Model):
    """One chat message (OpenAI shape); ``tool`` and ``function`` messages are results."""

    role: Role
    content: str | list[str | dict[str, Any]] | None = None
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None
    name: str | None = None


Conversation = str | list[ChatMessage]


class GetRewardRequest(_Model):
    """OpenRLHF's remote reward request: prompt+response texts, their prompts, labels."""

    query: list[str] = Field(min_length=1, max_length=MAX_ITEMS)
    prompts: list[str] | None = Field(default=None, max_length=MAX_ITEMS)
    labels: list[Scalar] | None = Field(default=None, max_length=MAX_ITEMS)

    @model_validator(mode="after")
    def _lengths(self) -> GetRewardRequest:
        for name in ("prompts", "labels"):
            value = getattr(self, name)
            if value is not None and len(value) != len(self.query):
                raise ValueError(f"{name} must be as long as query ({len(self.query)}), "
                                 f"not {len(value)}")
        return self


class Trajectory(_Model):
    """One trajectory to score turn by turn."""

    completion: Conversation
    prompt: Conversation = ""
    skill_id: str | None = None
    task_id: str | None = None  # whose frozen checklist is verified (--rubric checklist|both)
    ground_truth: Scalar = None
    outcome: float | None = None
    """The environment's own outcome (e.g. its tests' pass fraction), instead of an answer."""
    group: str | StrictInt | None = None  # strict: a JSON true is not the group 1


class TurnRewardsRequest(_Model):
    trajectories: list[Trajectory] = Field(min_length=1, max_length=MAX_ITEMS)


class GetRewardResponse(BaseModel):
    """Rewards (``outcome + λ·S``), scores clipped to [0, 1], and ``extra_logs`` with
    ``unscored``: per sample, why it got no reward (``{"code", "reason"}``, or null),
    ``process_unscored``: per sample, why its reward is the outcome alone (or null),
    ``unscored_policy`` and ``rigging``: per sample, the actions that rig its measurement
    (or null). A sample that cannot be scored gets a null reward and score; OpenRLHF's float
    list cannot carry null, so a service for it is started with ``--unscored
    fallback:<value>``, which sends that value instead (never a silent 0)."""

    rewards: list[float | None]
    scores: list[float | None]
    extra_logs: dict[str, Any]


class TurnResult(BaseModel):
    """One trajectory's reward (null with ``detail.unscored_code`` and ``detail.unscored``
    saying why; the outcome alone with ``detail.process_code`` and ``detail.process`` when
    only the process part could not be scored), outcome, rubric satisfaction and per-turn
    advantages."""

    reward: float | None
    outcome: float | None
    satisfaction: float | None
    skill_id: str | None
    skill_hash: str | None = None
    checklist_hash: str | None = Field(default=None, description="The frozen checklist "
                                       "whose items were verified (--rubric checklist|both).")
    turn_steps: list[int]
    advantages: list[float]
    detail: dict[str, Scalar]


class TurnRewardsResponse(BaseModel):
    trajectories: list[TurnResult]


class Health(BaseModel):
    status: Literal["ok"]
    bank: str | None
    model: str | None
    skills: int
    usage: dict[str, Any] | None = Field(
        default=None, description="This worker's model requests sent (retries among them), "
        "answers from the cache, failures by kind and tokens, counted as the server saw them.")


class ErrorResponse(BaseModel):
    """A request the service cannot serve: one line saying what is wrong."""

    error: str


ROUTES.update({
    "/health": ("get", None, Health, "The service, its bank and its verifier model."),
    "/get_reward": ("post", GetRewardRequest, GetRewardResponse,
                    "OpenRLHF's remote reward model protocol."),
    "/turn_rewards": ("post", TurnRewardsRequest, TurnRewardsResponse,
                      "Per-turn rewards and advantages of trajectories."),
})


def validation_message(exc: ValidationError) -> str:
    """The first validation error as one line naming the field.

    >>> try:
    ...     TurnRewardsRequest.model_validate({"trajectories": [{"completion": [{"role": 1}]}]})
    ... except ValidationError as exc:
    ...     print(validation_message(exc)[:50])
    trajectories[0].completion[0].role: Input should b
    """
    errors = exc.errors(include_url=False)
    first = max(errors, key=lambda e: len(e["loc"]))  # the member a union came closest to
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"]
                    if isinstance(p, int) or not _UNION_TAG.search(p))
    where = where.lstrip(".") or "body"
    more = f" (and {len(errors) - 1} more errors)" if len(errors) > 1 else ""
    message = " ".join(str(first["msg"]).split())[:300]
    return f"{where}: {message}{more}"


def openapi_document(version: str) -> dict[str, Any]:
    """The service's OpenAPI 3.1 document, written from the models above."""
    models = {m for _, request, response, _ in ROUTES.values()
              for m in (request, response) if m is not None} | {ErrorResponse}
    refs, schema = models_json_schema(
        [(m, "validation") for m in sorted(models, key=lambda m: m.__name__)],
        ref_template="#/components/schemas/{model}")
    paths: dict[str, Any] = {}
    error = {"description": "A request the service cannot serve", "content": {
        "application/json": {"schema": {"$ref": "#/components/schemas/ErrorResponse"}}}}
    for path, (method, request, response, summary) in ROUTES.items():
        operation: dict[str, Any] = {"summary": summary, "responses": {
            "200": {"description": "Served", "content": {"application/json": {
                "schema": refs[(response, "validation")]}}}}}
        if request is not None:
            operation["requestBody"] = {"required": True, "content": {"application/json": {
                "schema": refs[(request, "validation")]}}}
            operation["responses"].update({"400": error, "413": error})
        paths[path] = {method: operation}
    return {"openapi": "3.1.0",
            "info": {"title": "agentcredit reward service", "version": version},
            "paths": paths, "components": {"schemas": schema.get("$defs", {})}}
