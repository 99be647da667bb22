"""How far a judge panel's votes agree, how each judge scores alone, and where they split.

From the votes of a run judged by several judges or samples (``--judges``, ``--samples``):

- Krippendorff's alpha (nominal; the ``krippendorff`` package) between judges (each judge's
  first sample) and between the samples of each judge, over the items of every trial: once
  with yes / no / abstain as three values, once over yes / no with abstain left missing.
  Each comes with a task-clustered percentile bootstrap interval (tasks drawn with
  replacement, their items taken whole).
- Per judge: judge-only AUC against PASS/FAIL, Spearman's rho among FAIL trials against the
  fraction of checks passed, and kappa against the verifier on assertion items, each with a
  task-clustered interval; the same for the majority.
- The split items: every (checklist item) whose decided votes disagree in some trial, with
  how often it splits and each judge's label and first quote side by side.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agentcredit.analysis.agreement import AgreementCounts, assertion_pairs
from agentcredit.analysis.stats import (
    Interval,
    clustered_auc,
    clustered_spearman,
    percentile_interval,
)
from agentcredit.schema import ItemJudgment
from agentcredit.store.run_store import RunStore
from agentcredit.store.scores import score_trial, scored_trials

CODES = {"yes": 1.0, "no": 0.0, "abstain": 2.0}
ALPHA_DRAWS = 500
"""Bootstrap draws for alpha (each draw runs the coefficient once)."""


@dataclass
class _Judge:
    """One judge's scores and agreement, gathered trial by trial."""

    scores: list[float] = field(default_factory=list)
    positive: list[bool] = field(default_factory=list)
    tasks: list[str] = field(default_factory=list)
    failed: list[tuple[float, float, str]] = field(default_factory=list)
    agreement: AgreementCounts = field(default_factory=AgreementCounts)


def panel_study(store: RunStore, rng: np.random.Generator, *, draws: int = 2000
                ) -> dict[str, Any] | None:
    """The panel section of ``analyze`` (None when the run has no votes)."""
    if store.db.execute("SELECT 1 FROM votes LIMIT 1").fetchone() is None:
        return None  # no judge panel: no pass over the trials
    units: dict[tuple[str, str], dict[tuple[str, int], str]] = {}
    unit_task: dict[tuple[str, str], str] = {}
    judges: dict[str, _Judge] = defaultdict(_Judge)
    splits: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    seen: dict[tuple[str, str], int] = defaultdict(int)
    for stored in scored_trials(store):
        trial_id, task = stored.row["trial_id"], stored.row["task_id"] or "?"
        by_judge: dict[str, list[ItemJudgment]] = defaultdict(list)
        item_votes: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for _, item_id, judge, sample, judgment in store.votes(trial_id):
            units.setdefault((trial_id, item_id), {})[(judge, sample)] = judgment.label
            unit_task[(trial_id, item_id)] = task
            item_votes[item_id].append({
                "judge": judge, "sample": sample, "label": judgment.label,
                "quote": judgment.evidence[0].quote if judgment.evidence else "",
                "step": judgment.evidence[0].step if judgment.evidence else None})
            if sample == 0:
                by_judge[judge].append(judgment)
        if not by_judge:
            continue
        by_judge["majority"] = stored.judgments.get("llm", [])
        for name, labels in by_judge.items():
            _add_trial(judges[name], stored, labels)
        _note_splits(stored, item_votes, splits, seen)
    if not units:
        return None
    return {
        "judges": sorted({j for votes in units.values() for j, _ in votes}),
        "samples": 1 + max(s for votes in units.values() for _, s in votes),
        "alpha": _alphas(units, unit_task, rng),
        "per_judge": {name: _judge_result(j, rng, draws) for name, j in sorted(judges.items())},
        "split_items": _split_items(splits, seen),
    }


def _add_trial(judge: _Judge, stored: Any, labels: list[ItemJudgment]) -> None:
    trial, checklist = stored.row, stored.checklist
    outcome = trial["outcome"]
    only = score_trial(checklist, labels, outcome, propagate_pass=False, endpoint=False)[1]
    task = trial["task_id"] or "?"
    statuses = stored.statuses
    if only.partial_credit is not None and outcome in ("pass", "fail"):
        judge.scores.append(only.partial_credit)
        judge.positive.append(outcome == "pass")
        judge.tasks.append(task)
        if outcome == "fail" and statuses:
            fraction = sum(1 for s in statuses if s == "passed") / len(statuses)
            judge.failed.append((only.partial_credit, fraction, task))
    for pair in assertion_pairs(checklist, labels, stored.judgments.get("verifier", []),
                                trial["trial_id"], task, trial["checks"]):
        judge.agreement.add(pair)


def _judge_result(judge: _Judge, rng: np.random.Generator, draws: int) -> dict[str, Any]:
    auc, _ = clustered_auc(judge.scores, judge.positive, judge.tasks, rng, draws=draws)
    rho = Interval(None, None, None, 0.95)
    if len(judge.failed) >= 3:
        x, y, tasks = zip(*judge.failed, strict=True)
        rho = clustered_spearman(list(x), list(y), list(tasks), rng, draws=draws)
    kappa = judge.agreement.result(rng, draws=draws)["kappa"]
    return {"n": len(judge.scores), "judge_only_auc": auc.as_dict(),
            "progress_among_failures_rho": rho.as_dict(), "kappa_vs_verifier": kappa}


def _alphas(units: dict[tuple[str, str], dict[tuple[str, int], str]],
            unit_task: dict[tuple[str, str], str], rng: np.random.Generator
            ) -> dict[str, Any]:
    """Alpha between judges (first samples) and between each judge's samples."""
    keys = sorted(units)
    judges = sorted({j for votes in units.values() for j, _ in votes})
    samples = 1 + max(s for votes in units.values() for _, s in votes)
    out: dict[str, Any] = {}
    if len(judges) > 1:
        out["between_judges"] = _alpha_pair([[units[k].get((j, 0)) for k in keys]
                                             for j in judges], keys, unit_task, rng)
    if samples > 1:
        out["between_samples"] = {
            judge: _alpha_pair([[units[k].get((judge, s)) for k in keys]
                                for s in range(samples)], keys, unit_task, rng)
            for judge in judges}
    return out


def _alpha_pair(rows: list[list[str | None]], keys: list[tuple[str, str]],
                unit_task: dict[tuple[str, str], str], rng: np.random.Generator
                ) -> dict[str, Any]:
    three = np.array([[CODES[v] if v else np.nan for v in row] for row in rows])
    two = np.where(three == CODES["abstain"], np.nan, three)
    tasks = sorted({unit_task[k] for k in keys})
    columns = {t: [n for n, k in enumerate(keys) if unit_task[k] == t] for t in tasks}
    return {"yes_no_abstain": _alpha_interval(three, columns, rng).as_dict(),
            "yes_no": _alpha_interval(two, columns, rng).as_dict(),
            "units": len(keys), "tasks": len(tasks)}


def _alpha_interval(data: np.ndarray, columns: dict[str, list[int]],
                    rng: np.random.Generator, level: float = 0.95) -> Interval:
    estimate = nominal_alpha(data)
    if estimate is None or len(columns) < 2:
        return Interval(estimate, None, None, level)
    groups = list(columns.values())
    values = np.full(ALPHA_DRAWS, np.nan)
    for d in range(ALPHA_DRAWS):
        picked = [c for t in rng.integers(0, len(groups), len(groups)) for c in groups[t]]
        drawn = nominal_alpha(data[:, picked])
        values[d] = np.nan if drawn is None else drawn
    return percentile_interval(estimate, values, level)


def nominal_alpha(data: np.ndarray) -> float | None:
    """Nominal alpha, None when it is undefined (fewer than two values or one value only)."""
    import krippendorff

    present = data[~np.isnan(data)]
    if len(np.unique(present)) < 2 or np.sum((~np.isnan(data)).sum(axis=0) >= 2) < 1:
        return None
    try:
        value = float(krippendorff.alpha(reliability_data=data,
                                         level_of_measurement="nominal"))
    except (ValueError, ZeroDivisionError):
        return None
    return value if np.isfinite(value) else None


def _note_splits(stored: Any, item_votes: dict[str, list[dict[str, Any]]],
                 splits: dict[tuple[str, str], list[dict[str, Any]]],
                 seen: dict[tuple[str, str], int]) -> None:
    """Each item of this trial whose decided votes disagree, with every vote's quote."""
    texts = {item.id: item.text for item in stored.checklist.items}
    for item_id, votes in item_votes.items():
        key = (stored.checklist.hash, item_id)
        seen[key] += 1
        if len({v["label"] for v in votes if v["label"] in ("yes", "no")}) > 1:
            splits[key].append({"trial_id": stored.row["trial_id"],
                                "text": texts.get(item_id, ""), "votes": votes})


def _split_items(splits: dict[tuple[str, str], list[dict[str, Any]]],
                 seen: dict[tuple[str, str], int]) -> list[dict[str, Any]]:
    """Items that split, most often split first (an item that splits often is worded
    badly), each with up to five trials' votes."""
    rows = [{"checklist_hash": h, "item_id": item, "text": found[0]["text"],
             "split_in": len(found), "trials": seen[(h, item)],
             "rate": len(found) / seen[(h, item)], "examples": found[:5]}
            for (h, item), found in splits.items()]
    return sorted(rows, key=lambda r: (-r["rate"], -r["split_in"], r["item_id"]))


def item_split_rates(store: RunStore, checklist_hash: str) -> dict[str, tuple[int, int]]:
    """item id -> (trials whose decided votes disagree on it, trials with votes on it), over
    the run's trials judged against the checklist ``checklist_hash``."""
    trials = {t["trial_id"] for t in store.iter_trials() if t["checklist_hash"] == checklist_hash}
    labels: dict[tuple[str, str], set[str]] = defaultdict(set)
    for trial_id, item_id, _, _, judgment in store.votes():
        if trial_id in trials:
            labels[(trial_id, item_id)].add(judgment.label)
    out: dict[str, tuple[int, int]] = {}
    for (_, item_id), given in labels.items():
        split, total = out.get(item_id, (0, 0))
        out[item_id] = (split + ({"yes", "no"} <= given), total + 1)
    return out
