"""Model work under gates: one outcome family and one generate -> gate -> repair routine.

Checklist synthesis, the SkillBank's gated stages, rubric derivation and evolve's
proposals all ask a model for a schema-bound answer, turn it into a record, run their
deterministic gates and send the failures back for at most ``max_repairs`` repairs. What
can come back instead of the record is always one of :class:`Deferred` (queued for a
batch file), :class:`Failed` (the call failed after its retries) or :class:`Rejected` (the
gates still fail), never a default value. The turn verifier uses the same outcomes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import TypeVar

from pydantic import BaseModel

from agentcredit.llm.client import Model
from agentcredit.llm.types import Message, ModelFailure
from agentcredit.schema.outcomes import Deferred, Failed, GateFailure, Rejected

T = TypeVar("T", bound=BaseModel)
R = TypeVar("R")
MAX_REPAIRS = 2


def missed(result: ModelFailure, stage: str = "") -> Deferred | Failed:
    """The outcome of a call that returned no answer."""
    if result.kind == "deferred":
        return Deferred(result.cache_key, stage)
    return Failed(f"model call failed: {result.kind}: {result.message}")


async def generate(model: Model, messages: Sequence[Message], schema: type[T],
                   ) -> T | Deferred | Failed:
    """One schema-bound call, validated."""
    result = await model.generate(list(messages), schema=schema)
    if isinstance(result, ModelFailure):
        return missed(result)
    return schema.model_validate(result.parsed)


async def generate_gated(
    model: Model, messages: Sequence[Message], schema: type[T], build: Callable[[T], R | None],
    gates: Callable[[R], list[GateFailure]], repair: Callable[[list[GateFailure]], Message], *,
    max_repairs: int = MAX_REPAIRS,
    around: Callable[[], AbstractContextManager[object]] = nullcontext,
) -> R | Deferred | Failed | Rejected | None:
    """Ask, build a record from the answer, gate it; send failures back (≤ ``max_repairs``).

    ``build`` returns None when the answer deliberately makes no record (a merge the model
    declined); ``around`` wraps each call (e.g. to mark the task's own values).
    """
    conversation = list(messages)
    failures: list[GateFailure] = []
    for attempt in range(1, max_repairs + 2):
        with around():
            result = await model.generate(conversation, schema=schema)
        if isinstance(result, ModelFailure):
            return missed(result)
        record = build(schema.model_validate(result.parsed))
        if record is None:
            return None
        failures = gates(record)
        if not failures:
            return record
        if attempt <= max_repairs:
            conversation += [Message(role="assistant", content=result.text), repair(failures)]
    return Rejected(failures, max_repairs + 1)
