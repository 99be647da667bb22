"""Folding the official outcome into item labels: GCPC's scripted post-processing. Pure.

- official PASS: assertion-route items become Yes (the verifier passed everything);
- official FAIL: labels stay as they are and a virtual endpoint item labelled No is added;
- no official outcome: nothing changes, and the fusion is recorded as not applied.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentcredit.schema import Checklist, ItemJudgment, Label, OutcomeStatus

ENDPOINT_ID = "ENDPOINT"


@dataclass(frozen=True)
class Fused:
    """Item labels after fusion, and the endpoint label (None when there is none)."""

    labels: dict[str, Label]
    endpoint: Label | None
    applied: str  # "pass_propagation", "endpoint_no" or "none" (no official outcome)


def fuse(checklist: Checklist, judgments: list[ItemJudgment], outcome: OutcomeStatus, *,
         propagate_pass: bool = True, endpoint: bool = True) -> Fused:
    """Apply the official outcome (the flags switch parts off for ablations).

    >>> from agentcredit.schema import ChecklistItem, RulesRef
    >>> c = Checklist(task_id="t", items=(ChecklistItem(id="C1", text="x", route="assertion",
    ...     checks=("a",)),), rules=RulesRef(id="r", version="1"), synthesizer="derived",
    ...     prompt_version="none", created_at="", hash="h")
    >>> j = [ItemJudgment(item_id="C1", label="abstain", source="verifier")]
    >>> fuse(c, j, "pass").labels, fuse(c, j, "pass").endpoint, fuse(c, j, "fail").endpoint
    ({'C1': 'yes'}, None, 'no')
    """
    labels: dict[str, Label] = {item.id: "abstain" for item in checklist.items}
    labels.update({j.item_id: j.label for j in judgments if j.item_id in labels})
    if outcome == "pass" and propagate_pass:
        for item in checklist.items:
            if item.route == "assertion":
                labels[item.id] = "yes"
        return Fused(labels, None, "pass_propagation")
    if outcome == "pass":
        return Fused(labels, None, "none")
    if outcome == "fail":
        return Fused(labels, "no" if endpoint else None, "endpoint_no")
    return Fused(labels, None, "none")
