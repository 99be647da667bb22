"""The task's frozen GCPC checklist as the turn verifier's rubric (pure).

Each checklist item is a criterion (id ``C1``...) verified turn by turn under the same
causal and citation rules as a skill's criteria (:mod:`agentcredit.rewards.causal`, which
decides what may back a rise with the judge's own
:func:`agentcredit.evidence.quotes.evidence_kind`). The items are frozen before any
trajectory (``checklists build``, or derived from the verifier without a model). After the
calls, GCPC's scripted step grounds them as the judge's labels are grounded: an item backed
by verifier checks is credited from the trial's per-check results where it has them
(:func:`agentcredit.judging.verifier_judge.verifier_judgments`), the official outcome is
folded in (:func:`agentcredit.scoring.fusion.fuse`: PASS credits assertion items, FAIL adds
the endpoint criterion unsatisfied), and the endpoint criterion ``ENDPOINT`` is the outcome.
An item left undecided whose state never left ``missing`` abstains as the judge does
(``unverifiable``: out of ``S``'s denominator, as Abstain is out of partial credit's).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentcredit.judging.verifier_judge import verifier_judgments
from agentcredit.schema import (
    Checklist,
    CriterionVerdict,
    RubricCriterion,
    Skill,
    Trial,
    TurnState,
)
from agentcredit.scoring.fusion import ENDPOINT_ID, fuse

Rubric = Literal["checklist", "skill", "both"]
RUBRICS: tuple[Rubric, ...] = ("checklist", "skill", "both")
ITEM_EVIDENCE = "a tool output or file content shown in the log confirms it"
ITEM_FAILURE = "the log shows it unmet, or shows nothing of it"
ENDPOINT = RubricCriterion(id=ENDPOINT_ID, statement="The official verifier passes.",
                           evidence="the official outcome is PASS",
                           failure="the official outcome is FAIL")


@dataclass(frozen=True)
class RubricChoice:
    """What a reward run verifies: ``rubric``, the folder of frozen ``checklists`` (else
    derived from the tasks' verifiers) and the retrieval ``floor`` (else the measured one)."""

    rubric: Rubric = "skill"
    checklists: Path | str | None = None
    floor: float | None = None


def item_criteria(checklist: Checklist) -> tuple[RubricCriterion, ...]:
    """The checklist's items as rubric criteria (the endpoint is added by :func:`ground`)."""
    return tuple(RubricCriterion(id=item.id, statement=item.text, evidence=ITEM_EVIDENCE,
                                 failure=ITEM_FAILURE) for item in checklist.items)


def criteria_of(skill: Skill | None, checklist: Checklist | None,
                rubric: Rubric) -> tuple[RubricCriterion, ...]:
    """What a trial is verified against: the skill's criteria, the checklist's items (and
    its endpoint), or both in the same calls."""
    own = tuple(skill.rubric or ()) if skill is not None and rubric != "checklist" else ()
    items = (*item_criteria(checklist), ENDPOINT) \
        if checklist is not None and rubric != "skill" else ()
    return own + items


def ground(verdicts: dict[str, CriterionVerdict], checklist: Checklist, trial: Trial,
           turns: Sequence[int]) -> None:
    """Fold the trial's per-check results and official outcome into the checklist items'
    verdicts (in place), and add the endpoint criterion when there is an outcome."""
    judged = [j for j in verifier_judgments(checklist, trial.checks) if j.label != "abstain"] \
        if trial.checks else []
    fused = fuse(checklist, judged, trial.outcome)
    why = {j.item_id: f"from the verifier's checks: {j.rationale}" for j in judged}
    for item in checklist.items:
        label = fused.labels.get(item.id, "abstain")
        found = verdicts.get(item.id)
        if found is None:
            continue
        if label != "abstain":
            reason = why.get(item.id, "the official outcome is PASS")
            verdicts[item.id] = credited(found, label == "yes", turns, reason)
        elif found.status == "applicable" and not found.satisfied and \
                all(t.state == "missing" for t in found.states):
            verdicts[item.id] = found.model_copy(update={  # the judge's abstain
                "status": "unverifiable", "corrections": (
                    *found.corrections, "abstain: the log shows nothing either way")})
    if trial.outcome in ("pass", "fail"):
        blank = CriterionVerdict(criterion_id=ENDPOINT_ID, status="applicable", states=tuple(
            TurnState(turn=n, step=s, state="missing") for n, s in enumerate(turns, 1)),
            responsibility=(0.0,) * len(turns))
        verdicts[ENDPOINT_ID] = credited(blank, trial.outcome == "pass", turns,
                                         f"the official outcome is {trial.outcome.upper()}")


def credited(verdict: CriterionVerdict, satisfied: bool, turns: Sequence[int],
             reason: str) -> CriterionVerdict:
    """The verdict with its satisfaction set by the verifier or the outcome: a credited
    criterion reaches ``verified`` at the last turn and keeps the responsibility the verifier
    gave (else it is the last turn's); a debited one keeps its states and loses its credit."""
    if not turns:
        return verdict
    states = list(verdict.states) or [TurnState(turn=n, step=s, state="missing")
                                      for n, s in enumerate(turns, 1)]
    responsibility = tuple(verdict.responsibility) or (0.0,) * len(turns)
    if satisfied:
        states[-1] = states[-1].model_copy(update={"state": "verified"})
        if not verdict.satisfied or sum(responsibility) <= 0:
            responsibility = (0.0,) * (len(turns) - 1) + (1.0,)
    else:
        responsibility = (0.0,) * len(turns)
    return verdict.model_copy(update={
        "status": "applicable", "satisfied": satisfied, "states": tuple(states),
        "responsibility": responsibility,
        "corrections": (*verdict.corrections, f"{'credited' if satisfied else 'not met'}: "
                        f"{reason}")})
