"""Validity studies over a run (GCPC RQ1-RQ4): outcome discrimination with ablations,
human agreement, skill pairs. Values in, values out; randomness from the generator given.
"""

from __future__ import annotations

import csv
import json
import statistics
from collections.abc import Callable, Sequence
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


def trial_rows(store: RunStore, each: Callable[[StoredTrial], None] | None = None,
               ) -> tuple[list[TrialRow], dict[str, Checklist]]:
    """One row per stored trial with a checklist, scored every way the run allows;
    ``each`` sees every stored trial read (a study that needs more than the row)."""
    checklists = store.checklists()
    rows: list[TrialRow] = []
    for stored in scored_trials(store):
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
        rows.append(TrialRow(tid, trial["task_id"] or "?", outcome, trial["condition"],
                             trial.get("agent"), trial.get("model"), trial["started_at"],
                             checklist.hash, scores, dict(fused.labels), passed, len(statuses)))
    return rows, checklists


def _pc(checklist: Checklist, labels: list[ItemJudgment], outcome: str) -> float | None:
    metrics = score_trial(checklist, labels, outcome)[1]
    value: float | None = metrics.partial_credit
    return value


def outcome_discrimination(rows: Sequence[TrialRow], rng: np.random.Generator, *,
                           draws: int = 2000) -> dict[str, Any]:
    """AUC of every available scorer against the official outcome, task-clustered CIs, and
    paired differences between GCPC partial credit and each other scorer."""
    decided = [r for r in rows if r.outcome in ("pass", "fail")]
    out: dict[str, Any] = {"n_trials": len(decided),
                           "excluded_no_outcome": len(rows) - len(decided), "scorers": {}}
    for name in SCORERS:
        usable = [r for r in decided if r.scores.get(name) is not None]
        if not usable:
            continue
        interval, _ = clustered_auc([r.scores[name] for r in usable],  # type: ignore[misc]
                                    [r.outcome == "pass" for r in usable],
                                    [r.task_id for r in usable], rng, draws=draws)
        out["scorers"][name] = {"label": SCORERS[name], "n": len(usable),
                                "uses_outcome": name in USES_OUTCOME,
                                "excluded_undefined": len(decided) - len(usable),
                                "auc": interval.as_dict()}
    out["auc"] = out["scorers"].get("partial_credit", {}).get(
        "auc", {"estimate": None, "ci_low": None, "ci_high": None})
    out["paired"] = {}
    for name in out["scorers"]:
        if name == "partial_credit":
            continue
        both = [r for r in decided if r.scores.get(name) is not None
                and r.scores.get("partial_credit") is not None]
        if not both:
            continue
        paired = paired_delta_auc([r.scores["partial_credit"] for r in both],  # type: ignore[misc]
                                  [r.scores[name] for r in both],  # type: ignore[misc]
                                  [r.outcome == "pass" for r in both],
                                  [r.task_id for r in both], rng, draws=draws)
        out["paired"][name] = {"n": len(both), "delta_auc": paired.delta.as_dict(),
                               "share_positive": paired.share_positive}
    out["judge_only_paired"] = {}
    for name in ("holistic", "generic_checklist"):
        both = [r for r in decided if r.scores.get(name) is not None
                and r.scores.get("judge_only") is not None]
        if both:
            paired = paired_delta_auc([r.scores["judge_only"] for r in both],  # type: ignore[misc]
                                      [r.scores[name] for r in both],  # type: ignore[misc]
                                      [r.outcome == "pass" for r in both],
                                      [r.task_id for r in both], rng, draws=draws)
            out["judge_only_paired"][name] = {"n": len(both),
                                              "delta_auc": paired.delta.as_dict(),
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


def progress_among_failures(rows: Sequence[TrialRow], rng: np.random.Generator, *,
                            draws: int = 2000) -> dict[str, Any]:
    """How well each outcome-blind scorer orders FAIL trials by how far they got.

    Partial credit exists to tell failed trials apart, which the AUC against PASS/FAIL cannot
    show. Over FAIL trials only, each scorer is compared (Spearman's rho, task-clustered
    bootstrap interval) with the fraction of the verifier's checks the trial passed, and
    judge-only is paired against each of the others on the trials both scored.
    """
    failed = [r for r in rows if r.outcome == "fail" and r.scores.get("check_fraction")
              is not None]
    out: dict[str, Any] = {"n_failed": len(failed), "target": "check_fraction",
                           "scorers": {}, "judge_only_paired": {}}
    for name, label in PROGRESS_SCORERS.items():
        usable = [r for r in failed if r.scores.get(name) is not None]
        if len(usable) < 3:
            continue
        rho = clustered_spearman([r.scores[name] for r in usable],  # type: ignore[misc]
                                 [r.scores["check_fraction"] for r in usable],  # type: ignore[misc]
                                 [r.task_id for r in usable], rng, draws=draws)
        out["scorers"][name] = {"label": label, "n": len(usable),
                                "tasks": len({r.task_id for r in usable}),
                                "spearman": rho.as_dict()}
    for name in ("holistic", "generic_only"):
        both = [r for r in failed if r.scores.get(name) is not None
                and r.scores.get("judge_only") is not None]
        if len(both) < 3:
            continue
        paired = paired_delta_spearman(
            [r.scores["judge_only"] for r in both],  # type: ignore[misc]
            [r.scores[name] for r in both],  # type: ignore[misc]
            [r.scores["check_fraction"] for r in both],  # type: ignore[misc]
            [r.task_id for r in both], rng, draws=draws)
        out["judge_only_paired"][name] = {"n": len(both), "delta_rho": paired.delta.as_dict(),
                                          "share_positive": paired.share_positive}
    return out


def compare_runs(rows_a: Sequence[TrialRow], rows_b: Sequence[TrialRow],
                 rng: np.random.Generator, *, draws: int = 2000) -> dict[str, Any]:
    """Paired AUC difference of partial credit between two runs on their shared trials."""
    by_id = {r.trial_id: r for r in rows_b}
    shared = [(a, by_id[a.trial_id]) for a in rows_a if a.trial_id in by_id
              and a.outcome in ("pass", "fail") and a.scores["partial_credit"] is not None
              and by_id[a.trial_id].scores["partial_credit"] is not None]
    if not shared:
        return {"n": 0, "delta_auc": None}
    paired = paired_delta_auc([a.scores["partial_credit"] for a, _ in shared],  # type: ignore[misc]
                              [b.scores["partial_credit"] for _, b in shared],  # type: ignore[misc]
                              [a.outcome == "pass" for a, _ in shared],
                              [a.task_id for a, _ in shared], rng, draws=draws)
    return {"n": len(shared), "delta_auc": paired.delta.as_dict(),
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


def with_turn_rows(rows: list[TrialRow], path: Path) -> list[TrialRow]:
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
    out = [replace(r, scores={**found[r.trial_id].scores, **r.scores})
           if r.trial_id in found else r for r in rows]
    known = {r.trial_id for r in rows}
    return out + [r for trial_id, r in found.items() if trial_id not in known]
