"""From turn verdicts to per-turn rewards: arrays in, rows out (no model, no I/O).

Rows of a group (the trials of one task) are stacked into padded arrays, passed to
:func:`agentcredit.rewards.advantages.compute_advantages`, and written back one row per
agent turn. Criteria whose status is not ``applicable`` are excluded (``valid`` false).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agentcredit.rewards.advantages import (
    STATE_VALUES,
    TOLERANCE,
    Advantages,
    GroupMoments,
    compute_advantages,
    row_terms,
)
from agentcredit.rewards.checklist import ITEM_EVIDENCE
from agentcredit.schema import RubricCriterion, Trial, TrialVerdict, rigging_text
from agentcredit.scoring.fusion import ENDPOINT_ID


@dataclass(frozen=True)
class Scored:
    """One trajectory ready for the reward math: its verdict, rubric and outcome."""

    verdict: TrialVerdict
    rubric: tuple[RubricCriterion, ...]
    outcome: float | None
    group: str


@dataclass
class RewardTable:
    """Per-turn rows and what the group rules did."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    suppressed: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)


def outcome_value(trial: Trial) -> float | None:
    """The official outcome as a number: pass 1, fail 0 (or its partial reward), none None.

    >>> from agentcredit.schema import Trial
    >>> outcome_value(Trial(id="t", outcome="fail", reward=0.4, format="x", source_path="-"))
    0.4
    """
    if trial.outcome == "pass":
        return 1.0
    if trial.outcome == "fail":
        reward = trial.reward
        return float(reward) if reward is not None and 0.0 < reward < 1.0 else 0.0
    return None


def arrays(items: Sequence[Scored]) -> dict[str, np.ndarray]:
    """The padded arrays of :func:`compute_advantages` for ``items``."""
    n = len(items)
    c = max((len(s.rubric) for s in items), default=0)
    t = max((len(s.verdict.turn_steps) for s in items), default=0)
    values, resp = np.zeros((n, c, t)), np.zeros((n, c, t))
    satisfied, valid = np.zeros((n, c), dtype=bool), np.zeros((n, c), dtype=bool)
    weights, mask = np.zeros((n, c)), np.zeros((n, t), dtype=bool)
    groups = {g: k for k, g in enumerate(dict.fromkeys(s.group for s in items))}
    for i, item in enumerate(items):
        turns = len(item.verdict.turn_steps)
        mask[i, :turns] = True
        by_id = {v.criterion_id: v for v in item.verdict.criteria}
        for j, criterion in enumerate(item.rubric):
            weights[i, j] = criterion.weight
            verdict = by_id.get(criterion.id)
            if verdict is None or verdict.status != "applicable":
                continue
            valid[i, j] = True
            satisfied[i, j] = verdict.satisfied
            values[i, j, :turns] = [STATE_VALUES[s.state] for s in verdict.states]
            resp[i, j, :turns] = verdict.responsibility
    outcomes = np.array([math.nan if s.outcome is None else s.outcome for s in items])
    return {"values": values, "responsibility": resp, "satisfied": satisfied, "valid": valid,
            "weights": weights, "turn_mask": mask, "outcomes": outcomes,
            "groups": np.array([groups[s.group] for s in items], dtype=np.int64)}


def advantages_of(items: Sequence[Scored], *, process_weight: float = 1.0,
                  normalize: bool = False, moments: GroupMoments | None = None,
                  group_signal: np.ndarray | None = None) -> Advantages:
    """:func:`compute_advantages` over the padded arrays of ``items``."""
    data = arrays(items)
    return compute_advantages(
        data["values"], data["responsibility"], data["satisfied"], data["valid"],
        data["weights"], data["turn_mask"], data["outcomes"], data["groups"],
        process_weight=process_weight, normalize=normalize, moments=moments,
        group_signal=group_signal)


def group_rows(chunks: Callable[[], Iterator[list[Scored]]], name: str, table: RewardTable,
               *, process_weight: float = 1.0, normalize: bool = False,
               ) -> Iterator[dict[str, Any]]:
    """The rows of one group too large to hold: ``chunks()`` hands its items out a chunk at
    a time, and is called three times (the group's moments of ``S`` and ``R``; whether any
    row carries a signal; the rows). The same rows as :func:`reward_table` of the whole
    group; ``name`` is what ``table`` reports as suppressed or dropped."""
    scores, rubric, outcomes = [], [], []
    for items in filter(None, chunks()):
        data = arrays(items)
        _, _, score, has = row_terms(data["values"], data["responsibility"],
                                     data["satisfied"], data["valid"], data["weights"],
                                     data["turn_mask"])
        scores.append(score)
        rubric.append(has)
        outcomes.append(data["outcomes"])
    if not scores:
        return
    has_rubric = np.concatenate(rubric)
    moments = GroupMoments.of(np.concatenate(scores), has_rubric, np.concatenate(outcomes),
                              np.zeros(len(has_rubric), dtype=np.int64), 1)
    signal = np.array([any(advantages_of(items, moments=moments, normalize=normalize,
                                         process_weight=process_weight).signal.any()
                           for items in filter(None, chunks()))])
    if has_rubric.any() and moments.std_s[0] <= TOLERANCE:
        table.suppressed.append(name)
    if not signal[0]:
        table.dropped.append(name)
    for items in filter(None, chunks()):
        result = advantages_of(items, process_weight=process_weight, normalize=normalize,
                               moments=moments, group_signal=signal)
        for i, item in enumerate(items):
            yield from _rows(i, item, result)


def reward_table(items: Sequence[Scored], *, process_weight: float = 1.0,
                 normalize: bool = False) -> RewardTable:
    """One row per agent turn of every trajectory, with the group rules' reports."""
    table = RewardTable()
    if not items:
        return table
    result = advantages_of(items, process_weight=process_weight, normalize=normalize)
    names = list(dict.fromkeys(s.group for s in items))
    table.suppressed = [names[g] for g in result.suppressed_groups]
    table.dropped = [names[g] for g in result.dropped_groups]
    for i, item in enumerate(items):
        table.rows += _rows(i, item, result)
    return table


def _rows(i: int, item: Scored, result: Advantages) -> list[dict[str, Any]]:
    verdict = item.verdict
    by_id = {v.criterion_id: v for v in verdict.criteria}
    defined = rubric_satisfaction(verdict, item.rubric) is not None  # else S is undefined
    task = [c for c in item.rubric if c.evidence == ITEM_EVIDENCE or c.id == ENDPOINT_ID]
    parts = {name: rubric_satisfaction(verdict, part) for name, part in (
        ("checklist", task), ("skill", [c for c in item.rubric if c not in task])) if part}
    out = []
    for t, step in enumerate(verdict.turn_steps):
        states = {c.id: (by_id[c.id].states[t].state if by_id[c.id].status == "applicable"
                         else by_id[c.id].status) if c.id in by_id else "missing-verdict"
                  for c in item.rubric}
        out.append({
            "trial_id": verdict.trial_id, "task_id": verdict.task_id, "group": item.group,
            "skill_id": verdict.skill_id or None, "skill_hash": verdict.skill_hash or None,
            "checklist_hash": verdict.checklist_hash, "rubric": verdict.rubric,
            "rubric_satisfaction": parts, "turn": t + 1,
            "step": step, "states": states, "progress": float(result.progress[i, t]),
            "satisfaction": float(result.satisfaction_turn[i, t]) if defined else None,
            "process_advantage": float(result.process[i, t]),
            "outcome": item.outcome, "outcome_advantage": float(result.outcome[i]),
            "combined": float(result.combined[i, t]), "kept": bool(result.kept[i]),
            "model": verdict.model, "prompt_version": verdict.prompt_version,
            "seed": verdict.seed, "rigging": rigging_text(verdict.rigging)})
    return out


def rubric_satisfaction(verdict: TrialVerdict, rubric: Sequence[RubricCriterion]) -> float | None:
    """``S``: the weighted share of valid criteria satisfied (None when none is valid)."""
    by_id = {v.criterion_id: v for v in verdict.criteria}
    total = done = 0.0
    for criterion in rubric:
        found = by_id.get(criterion.id)
        if found is None or found.status != "applicable":
            continue
        total += criterion.weight
        done += criterion.weight if found.satisfied else 0.0
    return done / total if total > 0 else None
