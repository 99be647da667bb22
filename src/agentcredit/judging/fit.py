"""Fitting a trajectory's evidence view to the judge model's context window.

The view is first fitted to ``--budget-tokens`` (``render_evidence``: agent claims go first,
then long outputs are cut to head and tail, then the outputs of middle steps are hidden;
the view's opening NOTE says what was left out). When the model's window is known, the
view is fitted again, smaller, until the whole prompt (system text, instruction, checklist,
view) leaves room for the answer, by the offline estimate of ``agentcredit.llm.tokens``.
A view that still does not fit when every output is hidden is sent as it is and the client
refuses it as ``too_long`` (recorded with its size and the window; never sent to fail).
"""

from __future__ import annotations

from typing import Any

from agentcredit.judging.evidence import CHARS_PER_TOKEN, EvidenceView, render_evidence
from agentcredit.judging.prompts import items_messages
from agentcredit.llm.tokens import estimate_tokens
from agentcredit.schema import Checklist, Trial

MIN_BUDGET = 200


def prompt_overhead(instruction: str, checklist: Checklist) -> int:
    """Estimated tokens of a judge prompt around the trajectory (the largest of the
    judge's prompts: the holistic one is smaller)."""
    empty = EvidenceView(text="", steps={})
    messages = items_messages(instruction, empty, list(checklist.items))
    return sum(estimate_tokens(m.text()) + 6 for m in messages) + 3


async def fitted_view(model: Any, trial: Trial, budget_tokens: int, *,
                      overhead: int) -> EvidenceView:
    """The evidence view within ``budget_tokens`` and, when ``model`` knows its window,
    within what the window leaves after ``overhead`` and the answer."""
    view = render_evidence(trial, budget_tokens=budget_tokens)
    budget_of = getattr(model, "prompt_budget", None)
    room = await budget_of() if budget_of is not None else None
    if room is None:
        return view
    limit = room - overhead
    budget = budget_tokens
    for _ in range(8):
        size = estimate_tokens(view.text)
        if size <= limit or budget <= MIN_BUDGET:
            return view
        # render_evidence counts CHARS_PER_TOKEN characters a token; shrink by the ratio of
        # the estimate to what may be used, with a little more so that it converges
        target = min(budget, len(view.text) // CHARS_PER_TOKEN) * max(limit, 1) / size
        budget = max(MIN_BUDGET, int(target * 0.9))
        view = render_evidence(trial, budget_tokens=budget)
    return view
