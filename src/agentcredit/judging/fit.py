"""Fitting a trajectory's evidence view to the judge model's context window.

The view is first fitted to ``--budget-tokens`` (``render_evidence``: agent claims go first,
then long outputs are cut to head and tail, then the outputs of middle steps are hidden;
the view's opening NOTE says what was left out). When the model's window is known, the
view is fitted again, smaller, until the whole judge prompt (system text, instruction,
checklist, view) leaves room for the answer, by :func:`agentcredit.llm.window.fit_to_window`
(the one fitting routine every stage uses). A view that still does not fit at the smallest
budget is sent as it is and the client refuses it as ``too_long`` (recorded with its size
and the window; never sent to fail).
"""

from __future__ import annotations

from typing import Any

from agentcredit.evidence.view import EvidenceView, render_evidence
from agentcredit.judging.prompts import items_messages
from agentcredit.llm.types import Message
from agentcredit.llm.window import fit_to_window
from agentcredit.schema import Checklist, Trial

MIN_BUDGET = 200


async def fitted_view(model: Any, trial: Trial, budget_tokens: int, *, instruction: str,
                      checklist: Checklist) -> EvidenceView:
    """The evidence view within ``budget_tokens`` and, when ``model`` knows its window,
    small enough that the judge prompt around it (the largest of the judge's prompts:
    the holistic one is smaller) leaves room for the answer."""
    views: dict[int, EvidenceView] = {}

    def render(budget: int) -> list[Message]:
        view = render_evidence(trial, budget_tokens=budget, instruction=instruction)
        messages = items_messages(instruction, view, list(checklist.items))
        views[id(messages)] = view
        return messages

    fitted = await fit_to_window(model, render, budget_tokens, floor=MIN_BUDGET)
    return views[id(fitted)]
