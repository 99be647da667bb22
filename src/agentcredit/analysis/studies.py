"""Validity studies over a run (GCPC RQ1-RQ4): outcome discrimination with ablations,
human agreement, skill pairs. Values in, values out; randomness from the generator given.
"""

from __future__ import annotations

import csv
import json
import statistics
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from agentcredit.analysis.stats import (
    clustered_auc,
    clustered_spearman,
    paired_delta_auc,
    paired_delta_spearman,
    pairwise_agreement,
)
from agentcredit.errors import InputError
from agentcredit.judging.generic import generic_checklist
from agentcredit.schema import Checklist, ItemJudgment
from agentcredit.store.run_store import RunStore
from agentcredit.store.scores import StoredTrial, score_trial, scored_trials


@dataclass(frozen=True)
class TrialRow:
    """Everything the studies need about one trial, with every scorer's value."""

    trial_id: str
    task_id: str
    outcome: str
    condition: str | None
    agent: str | None
    model: str | None
    started_at: str | None
    checklist_hash: str
    scores: dict[str, float | None]
    labels: dict[str, str]
    checks_passed: int
    checks_total: int


SCORERS = {
    "judge_only": "LLM judge labels only (no fusion)",
    "partial_credit": "checklist partial credit (GCPC)",
    "holistic": "holistic 0-1 judge",
    "no_endpoint": "ablation: without the endpoint item",
    "no_pass_propagation": "ablation: without PASS propagation",
    "verifier_judge": "verifier-evidence judge only",
    "check_fraction": "fraction of verifier checks passed",
    "generic_checklist": "ablation: fixed generic checklist",
    "turn_checklist": "turn verifier S: the task's checklist",
    "turn_skill": "turn verifier S: the skill's rubric",
}
USES_OUTCOME = frozenset({"partial_credit", "no_endpoint", "no_pass_propagation",
                          "verifier_judge", "generic_checklist", "check_fraction",
                          "turn_checklist"})
"""Scorers whose value is built from the official outcome or the verifier's checks: their
agreement with PASS/FAIL is partly mechanical, not independent validity evidence."""
SCORE_NAMES = (*SCORERS, "generic_only")
OUTCOMES = ("none", "pass", "fail")
NONE, PASS, FAIL = range(3)


class TrialTable:
    """Every trial's outcome, task and scores as compact columns (8 bytes a score, a
    trial's id as its only object), in trial id order: what the studies compute on, so
    that memory grows by ~0.15 KB per trial, not by a row object. ``held``: the whole rows
    of the trials a study needs more of (skill pairs, rated trials)."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.held: list[TrialRow] = []
        self._tasks: dict[str, int] = {}
        self._task, self._outcome = array("i"), array("b")
        self._hashes: list[str] = []
        self._scores = {name: array("d") for name in SCORE_NAMES}

    def add(self, row: TrialRow, *, hold: bool = False) -> None:
        self.ids.append(row.trial_id)
        self._task.append(self._tasks.setdefault(row.task_id, len(self._tasks)))
        self._outcome.append(OUTCOMES.index(row.outcome) if row.outcome in OUTCOMES else NONE)
        self._hashes.append(row.checklist_hash)
        for name, column in self._scores.items():
            value = row.scores.get(name)
            column.append(np.nan if value is None else value)
        if hold:
            self.held.append(row)

    @classmethod
    def of(cls, rows: TrialTable | Sequence[TrialRow]) -> TrialTable:
        """``rows`` as a table (kept whole, in trial id order)."""
        if isinstance(rows, TrialTable):
            return rows
        table = cls()
        for row in sorted(rows, key=lambda r: r.trial_id):
            table.add(row, hold=True)
        return table

    def __len__(self) -> int:
        return len(self.ids)

    def column(self, name: str) -> np.ndarray:
        """A scorer's values (NaN: undefined)."""
        return np.frombuffer(self._scores[name], dtype=np.float64) if len(self) else \
            np.zeros(0)

    def outcomes(self) -> np.ndarray:
        """Each trial's outcome as :data:`NONE`, :data:`PASS` or :data:`FAIL`."""
        return np.frombuffer(self._outcome, dtype=np.int8) if len(self) else np.zeros(0, np.int8)

    def tasks(self) -> tuple[list[str], np.ndarray]:
        """(task names sorted, each trial's task as an index into them)."""
        names = sorted(self._tasks)
        rank = np.zeros(len(names), dtype=np.int64)
        for n, name in enumerate(names):
            rank[self._tasks[name]] = n
        codes = np.frombuffer(self._task, dtype=np.int32) if len(self) else np.zeros(0, int)
        return names, rank[codes]

    def __iter__(self) -> Iterator[TrialRow]:
        """Each trial as a row of its id, task, outcome, checklist and scores."""
        names, tasks = self.tasks()
        outcomes, columns = self.outcomes(), {n: self.column(n) for n in SCORE_NAMES}
        for i, trial_id in enumerate(self.ids):
            yield TrialRow(trial_id, names[tasks[i]], OUTCOMES[outcomes[i]], None, None, None,
                           None, self._hashes[i], {
                               n: None if np.isnan(c[i]) else float(c[i])
                               for n, c in columns.items()}, {}, 0, 0)


def trial_rows(store: RunStore, each: Callable[[StoredTrial], None] | None = None,
               hold: Callable[[TrialRow], bool] | None = None,
               ) -> tuple[TrialTable, dict[str, Checklist]]:
    """A table of every stored trial with a checklist, scored every way the run allows;
    ``each`` sees every stored trial read (a study that needs more than the row); the table
    holds the whole rows ``hold`` asks for (default: those of a skill-pair condition)."""
    checklists = store.checklists()
    rows = TrialTable()
    for stored in scored_trials(store, by_id=True):
        if each is not None:
            each(stored)
        trial, checklist, source, labels = stored.row, stored.checklist, stored.source, \
            stored.labels
        judged, tid = stored.judgments, trial["trial_id"]
        outcome = trial["outcome"]
        statuses = stored.statuses
        passed = sum(1 for s in statuses if s == "passed")
        fused, main = score_trial(checklist, labels, outcome)
        scores: dict[str, float | None] = {
            "judge_only": score_trial(checklist, labels, outcome, propagate_pass=False,
                                      endpoint=False)[1].partial_credit
            if source == "llm" else None,
            "partial_credit": main.partial_credit,
            "holistic": stored.holistic,
            "no_endpoint": score_trial(checklist, labels, outcome, endpoint=False)[1]
            .partial_credit,
            "no_pass_propagation": score_trial(checklist, labels, outcome,
                                               propagate_pass=False)[1].partial_credit,
            "verifier_judge": _pc(checklist, judged.get("verifier", []), outcome)
            if source == "llm" else None,
            "check_fraction": passed / len(statuses) if statuses else None,
            "generic_checklist": _pc(generic_checklist(trial["task_id"] or ""),
                                     judged["generic"], outcome)
            if "generic" in judged else None,
            # The generic checklist's own labels, no fusion: outcome-blind, like judge_only.
            "generic_only": score_trial(generic_checklist(trial["task_id"] or ""),
                                        judged["generic"], outcome,
                                        propagate_pass=False, endpoint=False)[1].partial_credit
            if "generic" in judged else None,
        }
        row = TrialRow(tid, trial["task_id"] or "?", outcome, trial["condition"],
                       trial.get("agent"), trial.get("model"), trial["started_at"],
                       checklist.hash, scores, dict(fused.labels), passed, len(statuses))
        rows.add(row, hold=hold(row) if hold else row.condition in ("skills", "no-skills"))
    return rows, checklists


def _pc(checklist: Checklist, labels: list[ItemJudgment], outcome: str) -> float | None:
    metrics = score_trial(checklist, labels, outcome)[1]
    value: float | None = metrics.partial_credit
    return value


def outcome_discrimination(rows: TrialTable | Sequence[TrialRow], rng: np.random.Generator,
                           *, draws: int = 2000) -> dict[str, Any]:
    """AUC of every available scorer against the official outcome, task-clustered CIs, and
    paired differences between GCPC partial credit and each other scorer."""
    table = TrialTable.of(rows)
    outcome, (_, tasks) = table.outcomes(), table.tasks()
    decided, positive = outcome != NONE, outcome == PASS
    n = int(decided.sum())
    out: dict[str, Any] = {"n_trials": n, "excluded_no_outcome": len(table) - n,
                           "scorers": {}}
    for name in SCORERS:
        values = table.column(name)
        usable = decided & ~np.isnan(values)
        if not usable.any():
            continue
        interval, _ = clustered_auc(values[usable], positive[usable], tasks[usable], rng,
                                    draws=draws)
        out["scorers"][name] = {"label": SCORERS[name], "n": int(usable.sum()),
                                "uses_outcome": name in USES_OUTCOME,
                                "excluded_undefined": n - int(usable.sum()),
                                "auc": interval.as_dict()}
    out["auc"] = out["scorers"].get("partial_credit", {}).get(
        "auc", {"estimate": None, "ci_low": None, "ci_high": None})
    out["paired"] = _paired(table, "partial_credit", [n for n in out["scorers"]
                                                      if n != "partial_credit"], rng, draws)
    out["judge_only_paired"] = _paired(table, "judge_only", ["holistic", "generic_checklist"],
                                       rng, draws)
    return out


def _paired(table: TrialTable, base: str, others: list[str], rng: np.random.Generator,
            draws: int) -> dict[str, Any]:
    """ΔAUC of ``base`` − each of ``others`` on the decided trials both scored."""
    outcome, (_, tasks) = table.outcomes(), table.tasks()
    first, out = table.column(base), {}
    for name in others:
        second = table.column(name)
        both = (outcome != NONE) & ~np.isnan(first) & ~np.isnan(second)
        if both.any():
            paired = paired_delta_auc(first[both], second[both], outcome[both] == PASS,
                                      tasks[both], rng, draws=draws)
            out[name] = {"n": int(both.sum()), "delta_auc": paired.delta.as_dict(),
                         "share_positive": paired.share_positive}
    return out


PROGRESS_SCORERS = {
    "judge_only": "LLM judge labels only (no fusion)",
    "holistic": "holistic 0-1 judge",
    "generic_only": "generic checklist, its labels only (no fusion)",
    "turn_skill": "turn verifier S: the skill's rubric",
    "turn_checklist": "turn verifier S: the task's checklist (credits its checks)",
}
"""The outcome-blind scorers whose ordering of failed trials is worth checking."""


def progress_among_failures(rows: TrialTable | Sequence[TrialRow], rng: np.random.Generator,
                            *, draws: int = 2000) -> dict[str, Any]:
    """How well each outcome-blind scorer orders FAIL trials by how far they got.

    Partial credit exists to tell failed trials apart, which the AUC against PASS/FAIL cannot
    show. Over FAIL trials only, each scorer is compared (Spearman's rho, task-clustered
    bootstrap interval) with the fraction of the verifier's checks the trial passed, and
    judge-only is paired against each of the others on the trials both scored.
    """
    table = TrialTable.of(rows)
    (_, tasks), target = table.tasks(), table.column("check_fraction")
    failed = (table.outcomes() == FAIL) & ~np.isnan(target)
    out: dict[str, Any] = {"n_failed": int(failed.sum()), "target": "check_fraction",
                           "scorers": {}, "judge_only_paired": {}}
    for name, label in PROGRESS_SCORERS.items():
        values = table.column(name)
        usable = failed & ~np.isnan(values)
        if usable.sum() < 3:
            continue
        rho = clustered_spearman(values[usable], target[usable], tasks[usable], rng,
                                 draws=draws)
        out["scorers"][name] = {"label": label, "n": int(usable.sum()),
                                "tasks": len(np.unique(tasks[usable])),
                                "spearman": rho.as_dict()}
    judge_only = table.column("judge_only")
    for name in ("holistic", "generic_only"):
        values = table.column(name)
        both = failed & ~np.isnan(values) & ~np.isnan(judge_only)
        if both.sum() < 3:
            continue
        paired = paired_delta_spearman(judge_only[both], values[both], target[both],
                                       tasks[both], rng, draws=draws)
        out["judge_only_paired"][name] = {"n": int(both.sum()),
                                          "delta_rho": paired.delta.as_dict(),
                                          "share_positive": paired.share_positive}
    return out


def compare_runs(rows_a: TrialTable | Sequence[TrialRow],
                 rows_b: TrialTable | Sequence[TrialRow], rng: np.random.Generator, *,
                 draws: int = 2000) -> dict[str, Any]:
    """Paired AUC difference of partial credit between two runs on their shared trials."""
    a, b = TrialTable.of(rows_a), TrialTable.of(rows_b)
    where = {trial_id: n for n, trial_id in enumerate(b.ids)}
    in_a = np.array([n for n, t in enumerate(a.ids) if t in where], dtype=np.int64)
    in_b = np.array([where[a.ids[n]] for n in in_a], dtype=np.int64)
    del where
    outcome, (_, tasks) = a.outcomes()[in_a], a.tasks()
    pc_a, pc_b = a.column("partial_credit")[in_a], b.column("partial_credit")[in_b]
    shared = (outcome != NONE) & ~np.isnan(pc_a) & ~np.isnan(pc_b)
    if not shared.any():
        return {"n": 0, "delta_auc": None}
    paired = paired_delta_auc(pc_a[shared], pc_b[shared], outcome[shared] == PASS,
                              tasks[in_a][shared], rng, draws=draws)
    return {"n": int(shared.sum()), "delta_auc": paired.delta.as_dict(),
            "share_positive": paired.share_positive}


def read_human_labels(path: Path) -> tuple[dict[str, float], list[tuple[str, str, int]]]:
    """Ratings (trial_id, progress) and preference pairs (trial_a, trial_b, preferred)."""
    ratings: dict[str, float] = {}
    pairs: list[tuple[str, str, int]] = []
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            for n, row in enumerate(csv.DictReader(handle), start=2):
                if row.get("trial_id") and row.get("progress") not in (None, ""):
                    ratings[row["trial_id"]] = float(row["progress"])
                if row.get("trial_a") and row.get("trial_b") and row.get("preferred"):
                    pref = row["preferred"].strip()
                    if pref in ("a", row["trial_a"]):
                        pairs.append((row["trial_a"], row["trial_b"], 1))
                    elif pref in ("b", row["trial_b"]):
                        pairs.append((row["trial_a"], row["trial_b"], -1))
                    elif pref != "tie":
                        raise InputError(f"{path}:{n}", f"preferred must be a, b, tie or one "
                                         f"of the two trial ids, not {pref!r}")
    except OSError as exc:
        raise InputError(str(path), f"cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise InputError(str(path), f"bad progress value: {exc}") from None
    return ratings, pairs


def human_agreement(rows: Sequence[TrialRow], ratings: dict[str, float],
                    pairs: list[tuple[str, str, int]], rng: np.random.Generator, *,
                    draws: int = 2000) -> dict[str, Any]:
    """Per scorer: Spearman with progress ratings and agreement on preference pairs."""
    by_id = {r.trial_id: r for r in rows}
    out: dict[str, Any] = {"ratings": len(ratings), "pairs": len(pairs), "scorers": {}}
    for name in SCORERS:
        entry: dict[str, Any] = {}
        rated = [(by_id[t].scores[name], v, by_id[t].task_id) for t, v in ratings.items()
                 if t in by_id and by_id[t].scores.get(name) is not None]
        if len(rated) >= 3:
            entry["spearman"] = clustered_spearman([r[0] for r in rated],  # type: ignore[misc]
                                                   [r[1] for r in rated], [r[2] for r in rated],
                                                   rng, draws=draws).as_dict()
            entry["n_rated"] = len(rated)
        scored = [(by_id[a].scores[name], by_id[b].scores[name], p) for a, b, p in pairs
                  if a in by_id and b in by_id and by_id[a].scores.get(name) is not None
                  and by_id[b].scores.get(name) is not None]
        if scored:
            agreement = pairwise_agreement(scored)  # type: ignore[arg-type]
            entry["pairs"] = {"n": agreement.pairs, "concordant": agreement.concordant,
                              "discordant": agreement.discordant, "ties": agreement.ties,
                              "agreement": agreement.agreement,
                              "agreement_ties_half": agreement.agreement_ties_half}
        if entry:
            out["scorers"][name] = entry
    return out


def match_skill_pairs(rows: Sequence[TrialRow],
                      pairing: Path | None = None) -> list[tuple[TrialRow, TrialRow]]:
    """(without-skill, with-skill) pairs: from a pairing CSV (no_skills,skills), else by task,
    agent and model, in trial order."""
    by_id = {r.trial_id: r for r in rows}
    if pairing is not None:
        with pairing.open(newline="", encoding="utf-8") as handle:
            return [(by_id[p["no_skills"]], by_id[p["skills"]]) for p in csv.DictReader(handle)
                    if p.get("no_skills") in by_id and p.get("skills") in by_id]
    groups: dict[tuple[str, str | None, str | None], dict[str, list[TrialRow]]] = {}
    for row in rows:
        if row.condition in ("skills", "no-skills"):
            key = (row.task_id, row.agent, row.model)
            groups.setdefault(key, {"skills": [], "no-skills": []})[row.condition].append(row)
    pairs: list[tuple[TrialRow, TrialRow]] = []
    for key in sorted(groups, key=lambda k: tuple(str(x) for x in k)):
        sides = groups[key]
        order = sorted(sides["no-skills"], key=lambda r: (r.started_at or "", r.trial_id))
        with_skill = sorted(sides["skills"], key=lambda r: (r.started_at or "", r.trial_id))
        pairs.extend(zip(order, with_skill, strict=False))
    return pairs


def skill_pair_study(pairs: Sequence[tuple[TrialRow, TrialRow]],
                     checklists: dict[str, Checklist], *, threshold: float = 0.10,
                     score: str = "partial_credit") -> dict[str, Any]:
    """Outcome transitions with score changes, and the items that changed most."""
    transitions: dict[str, list[float]] = {}
    listed: list[dict[str, Any]] = []
    item_moves: dict[tuple[str, str], int] = {}
    for without, with_skill in pairs:
        if without.outcome == "none" or with_skill.outcome == "none":
            continue
        name = f"{without.outcome.upper()}->{with_skill.outcome.upper()}"
        before, after = without.scores.get(score), with_skill.scores.get(score)
        delta = None if before is None or after is None else after - before
        if delta is not None:
            transitions.setdefault(name, []).append(delta)
        listed.append({"task_id": without.task_id, "without": without.trial_id,
                       "with": with_skill.trial_id, "transition": name, "before": before,
                       "after": after, "delta": delta,
                       "checks_before": f"{without.checks_passed}/{without.checks_total}",
                       "checks_after": f"{with_skill.checks_passed}/{with_skill.checks_total}"})
        if without.checklist_hash == with_skill.checklist_hash:
            for item_id, label in with_skill.labels.items():
                old = without.labels.get(item_id)
                change = _value(label) - _value(old)
                if change:
                    key = (without.checklist_hash, item_id)
                    item_moves[key] = item_moves.get(key, 0) + change
    summary = {}
    for name, deltas in sorted(transitions.items()):
        entry: dict[str, Any] = {"pairs": len(deltas), "median_change": statistics.median(deltas)}
        if name == "FAIL->FAIL":
            entry["share_improving"] = sum(d > threshold for d in deltas) / len(deltas)
            entry["share_regressing"] = sum(d < -threshold for d in deltas) / len(deltas)
        summary[name] = entry
    top = sorted(item_moves.items(), key=lambda kv: -abs(kv[1]))[:10]
    items = [{"task_id": checklists[h].task_id, "item_id": i,
              "text": next((x.text for x in checklists[h].items if x.id == i), ""),
              "net_change": v} for (h, i), v in top if h in checklists]
    return {"pairs": len(listed), "threshold": threshold, "transitions": summary,
            "list": listed, "items_changed_most": items}


def _value(label: str | None) -> int:
    return {"yes": 1, "no": -1}.get(label or "", 0)


TURN_SCORERS = {"checklist": "turn_checklist", "skill": "turn_skill"}


def with_turn_rows(rows: TrialTable, path: Path) -> TrialTable:
    """``rows`` with each trial's turn-verifier ``S`` of every rubric part from a turn-rewards
    output (``turn_rewards.jsonl``); a trial only it has gets a row of its own."""
    found: dict[str, TrialRow] = {}
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            turn = json.loads(line)
            if turn["trial_id"] in found or turn.get("outcome") is None:
                continue
            fraction = turn.get("check_fraction")
            found[turn["trial_id"]] = TrialRow(
                turn["trial_id"], turn.get("task_id") or turn["group"],
                "pass" if turn["outcome"] >= 1.0 else "fail", None, None, None, None,
                turn.get("checklist_hash") or "", {
                    TURN_SCORERS[part]: value for part, value in
                    (turn.get("rubric_satisfaction") or {}).items() if part in TURN_SCORERS}
                | {"check_fraction": fraction}, {}, 0, 0)
    merged = [replace(r, scores={**found.pop(r.trial_id).scores, **r.scores})
              if r.trial_id in found else r for r in rows]
    out = TrialTable()
    for row in sorted([*merged, *found.values()], key=lambda r: r.trial_id):
        out.add(row)
    out.held = rows.held
    return out
