"""The LLM judge (all items in one call, or one call per item) and the holistic baseline.

A failed call or a malformed answer never becomes a label: every item it concerned is
Abstain with reason ``judge_failed`` (or ``not_judged`` when the answer skipped it), and the
failure is returned for the run store to record.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from agentcredit.evidence.quotes import DEFAULT_SPECIFICITY, check_quotes
from agentcredit.evidence.view import EvidenceView
from agentcredit.judging.prompts import (
    HolisticAnswer,
    ItemsAnswer,
    holistic_messages,
    items_messages,
)
from agentcredit.llm.client import Model
from agentcredit.llm.types import GenerationConfig, ModelFailure, ModelResponse
from agentcredit.schema import Checklist, ChecklistItem, Citation, EvidenceRules, ItemJudgment


@dataclass
class JudgeResult:
    """Labels for one trial, plus the raw responses and failures behind them."""

    judgments: list[ItemJudgment]
    responses: list[ModelResponse] = field(default_factory=list)
    failures: list[ModelFailure] = field(default_factory=list)


def _from_answer(items: list[ChecklistItem], answer: ItemsAnswer, view: EvidenceView,
                 evidence: str, specificity: EvidenceRules) -> list[ItemJudgment]:
    given = {a.item_id: a for a in answer.items}
    out: list[ItemJudgment] = []
    for item in items:
        a = given.get(item.id)
        if a is None:
            out.append(ItemJudgment(item_id=item.id, label="abstain", reason="not_judged",
                                    source="llm", rationale="the judge's answer omitted it"))
            continue
        judgment = ItemJudgment(
            item_id=item.id, label=a.label, rationale=a.rationale, source="llm",
            reason="judge_abstained" if a.label == "abstain" else None,
            evidence=tuple(Citation(step=c.step, quote=c.quote) for c in a.evidence))
        out.append(check_quotes(judgment, view.steps, evidence=evidence,
                                specificity=specificity))
    return out


def _failed(items: list[ChecklistItem], failure: ModelFailure) -> list[ItemJudgment]:
    return [ItemJudgment(item_id=item.id, label="abstain", reason="judge_failed",
                         source="llm", rationale=f"{failure.kind}: {failure.message}"[:300])
            for item in items]


async def judge_trial(model: Model, checklist: Checklist, instruction: str,
                      view: EvidenceView, *, per_item: bool = False,
                      config: GenerationConfig | None = None, evidence: str = "outputs",
                      specificity: EvidenceRules = DEFAULT_SPECIFICITY) -> JudgeResult:
    """Label every item of ``checklist`` from the evidence ``view``; citations are checked
    against it (:func:`agentcredit.evidence.quotes.check_quotes`)."""
    groups = [[item] for item in checklist.items] if per_item else [list(checklist.items)]

    async def one(items: list[ChecklistItem]) -> tuple[list[ItemJudgment],
                                                       ModelResponse | ModelFailure]:
        result = await model.generate(items_messages(instruction, view, items,
                                                     evidence=evidence),
                                      schema=ItemsAnswer, config=config)
        if isinstance(result, ModelFailure):
            return _failed(items, result), result
        return _from_answer(items, ItemsAnswer.model_validate(result.parsed), view,
                            evidence, specificity), result

    outcome = JudgeResult(judgments=[])
    for judgments, response in await asyncio.gather(*(one(g) for g in groups)):
        outcome.judgments.extend(judgments)
        if isinstance(response, ModelFailure):
            outcome.failures.append(response)
        else:
            outcome.responses.append(response)
    return outcome


async def holistic_score(model: Model, instruction: str, view: EvidenceView, *,
                         config: GenerationConfig | None = None
                         ) -> tuple[float | None, str, ModelResponse | ModelFailure]:
    """The holistic baseline: a 0-1 progress score and its rationale (None on failure)."""
    result = await model.generate(holistic_messages(instruction, view), schema=HolisticAnswer,
                                  config=config)
    if isinstance(result, ModelFailure):
        return None, f"{result.kind}: {result.message}", result
    answer = HolisticAnswer.model_validate(result.parsed)
    return answer.progress, answer.rationale, result
