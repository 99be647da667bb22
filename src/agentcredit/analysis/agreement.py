"""Judge-verifier agreement and evidence kinds: reliability numbers that need no human labels.

For assertion items the verifier-evidence judge labels yes/no from the per-check results
the item references; comparing those labels with the LLM judge's gives a confusion matrix
(LLM rows × verifier columns, yes/no/abstain), raw agreement and Cohen's κ on the items
both decided, with a task-clustered bootstrap interval for κ. A check shared by several
items makes the verifier side coarse: one failing check says No for every item that cites
it, even when the item's own requirement was met. Pure: values in, values out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, get_args

import numpy as np

from agentcredit.analysis.stats import Interval, cluster_weights
from agentcredit.schema import Checklist, EvidenceKind, ItemJudgment

LABELS = ("yes", "no", "abstain")
COARSE_NOTE = ("a verifier check referenced by several items labels all of them alike, so "
               "the verifier side is coarser than the items")


def cohen_kappa(matrix: np.ndarray) -> float | None:
    """Cohen's κ of a square confusion matrix (rows: rater A, columns: rater B).

    κ = (p_o − p_e) / (1 − p_e) with p_o the share on the diagonal and p_e the agreement
    expected from the margins; None when the matrix is empty or p_e = 1.

    >>> round(cohen_kappa(np.array([[20, 5, 0], [10, 15, 0], [0, 0, 0]])), 4)
    0.4
    """
    m = np.asarray(matrix, dtype=np.float64)
    n = m.sum()
    if n <= 0:
        return None
    p_o = np.trace(m) / n
    p_e = float((m.sum(axis=1) * m.sum(axis=0)).sum() / (n * n))
    if p_e >= 1.0:
        return None
    return float((p_o - p_e) / (1.0 - p_e))


@dataclass(frozen=True, slots=True)
class Pair:
    """One assertion item of one trial: both labels and what the LLM judge cited."""

    trial_id: str
    task_id: str
    item_id: str
    llm: str
    verifier: str
    quotes: tuple[tuple[int, str], ...]
    checks: tuple[tuple[str, str], ...]


def assertion_pairs(checklist: Checklist, llm: Sequence[ItemJudgment],
                    verifier: Sequence[ItemJudgment], trial_id: str, task_id: str,
                    check_status: dict[str, str]) -> list[Pair]:
    """LLM and verifier labels of every assertion item the verifier labelled."""
    by_llm = {j.item_id: j for j in llm}
    by_ver = {j.item_id: j for j in verifier}
    out = []
    for item in checklist.items:
        if item.route != "assertion" or item.id not in by_ver or item.id not in by_llm:
            continue
        judged, verifier_label = by_llm[item.id], by_ver[item.id].label
        conflict = "abstain" not in (judged.label, verifier_label) and \
            judged.label != verifier_label  # only a conflict's quotes are shown: keep no more
        out.append(Pair(trial_id, task_id, item.id, judged.label, verifier_label,
                        tuple((c.step, c.quote) for c in judged.evidence) if conflict else (),
                        tuple((c, check_status.get(c, "missing")) for c in item.checks)
                        if conflict else ()))
    return out


MAX_CONFLICTS = 1_000
"""Conflicts listed in full (the first ones); ``conflicts_total`` counts them all."""


class AgreementCounts:
    """The agreement study's counts, added a pair at a time (nothing but the first
    :data:`MAX_CONFLICTS` conflicts is kept)."""

    def __init__(self) -> None:
        self.overall = np.zeros((3, 3))
        self.by_task: dict[str, np.ndarray] = {}
        self.conflicts: list[Pair] = []
        self.items = self.decided = self.total = 0

    def add(self, p: Pair) -> None:
        i, j = LABELS.index(p.llm), LABELS.index(p.verifier)
        self.overall[i, j] += 1
        self.items += 1
        if "abstain" in (p.llm, p.verifier):
            return
        self.decided += 1
        self.by_task.setdefault(p.task_id, np.zeros((2, 2)))[i, j] += 1
        if i != j:
            self.total += 1
            if len(self.conflicts) < MAX_CONFLICTS:
                self.conflicts.append(p)

    def result(self, rng: np.random.Generator, *, draws: int = 2000,
               level: float = 0.95) -> dict[str, Any]:
        """Confusion, raw agreement and κ overall and per task, and the conflicts."""
        return _agreement(self, rng, draws, level)


def _agreement(counts: AgreementCounts, rng: np.random.Generator, draws: int,
               level: float) -> dict[str, Any]:
    overall, conflicts = counts.overall, counts.conflicts
    sub = overall[:2, :2]
    kappa = cohen_kappa(sub)
    tasks = sorted(counts.by_task)
    per_task = np.stack([counts.by_task[t] for t in tasks]) if tasks else np.zeros((0, 2, 2))
    interval = Interval(kappa, None, None, level)
    if kappa is not None and tasks:
        weights = cluster_weights(len(tasks), draws, rng)
        boot = np.einsum("bt,tij->bij", weights, per_task)
        values = np.array([k if (k := cohen_kappa(b)) is not None else np.nan for b in boot])
        valid = values[~np.isnan(values)]
        if len(valid):
            alpha = (1.0 - level) / 2.0
            low, high = np.quantile(valid, [alpha, 1.0 - alpha])
            interval = Interval(kappa, float(low), float(high), level)
    agree = float(np.trace(sub) / sub.sum()) if sub.sum() else None
    return {
        "items": counts.items, "decided_both": counts.decided, "conflicts_total": counts.total,
        "confusion": {f"llm_{a}": {f"verifier_{b}": int(overall[i, j])
                                   for j, b in enumerate(LABELS)}
                      for i, a in enumerate(LABELS)},
        "raw_agreement": agree, "kappa": interval.as_dict(),
        "per_task": {t: {"decided": int(per_task[k].sum()),
                         "raw_agreement": float(np.trace(per_task[k]) / per_task[k].sum())
                         if per_task[k].sum() else None,
                         "kappa": cohen_kappa(per_task[k])} for k, t in enumerate(tasks)},
        "conflicts": [{"trial_id": p.trial_id, "task_id": p.task_id, "item_id": p.item_id,
                       "llm": p.llm, "verifier": p.verifier,
                       "quotes": [{"step": s, "quote": q} for s, q in p.quotes],
                       "checks": [{"check": c, "status": s} for c, s in p.checks]}
                      for p in conflicts],
        "note": COARSE_NOTE,
    }


def evidence_kinds(judgments: Iterable[ItemJudgment]) -> dict[str, int]:
    """Citations by kind (every :data:`agentcredit.schema.EvidenceKind`, and not_found), and
    the labels downgraded because no (specific) output was cited.

    >>> from agentcredit.schema import Citation
    >>> evidence_kinds([ItemJudgment(item_id="C1", label="yes", source="llm",
    ...     evidence=(Citation(step=1, quote="x", kind="output"),))])["output"]
    1
    """
    counts: Counter[str] = Counter({kind: 0 for kind in get_args(EvidenceKind)})
    counts["not_found"] = counts["no_output_evidence"] = 0
    for judgment in judgments:
        for citation in judgment.evidence:
            counts[citation.kind or "not_found"] += 1
        counts["no_output_evidence"] += judgment.reason == "no_output_evidence"
    return dict(counts)
