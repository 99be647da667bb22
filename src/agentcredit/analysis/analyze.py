"""Putting the studies together for ``agentcredit analyze`` and the report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from agentcredit.analysis.agreement import AgreementCounts, assertion_pairs, evidence_kinds
from agentcredit.analysis.panel import panel_study
from agentcredit.analysis.perturb import Candidate, perturbation_study
from agentcredit.analysis.stats import clustered_auc
from agentcredit.analysis.studies import (
    compare_runs,
    human_agreement,
    match_skill_pairs,
    outcome_discrimination,
    progress_among_failures,
    read_human_labels,
    skill_pair_study,
    trial_rows,
    with_turn_rows,
)
from agentcredit.formats import load
from agentcredit.formats.join import first_user_message
from agentcredit.llm.client import Model
from agentcredit.schema import Trial
from agentcredit.store.run_store import RunStore
from agentcredit.store.scores import StoredTrial


def analyze_store(store: RunStore, *, seed: int = 0, draws: int = 2000,
                  human: Path | None = None, pairs: str | Path | None = "auto",
                  compare: RunStore | None = None, threshold: float = 0.10) -> dict[str, Any]:
    """Every study a run supports, as one JSON-ready dict (seeded: repeats bit for bit)."""
    rng = np.random.default_rng(seed)
    counts = AgreementCounts()  # filled in the same read of the store as the rows

    def pairs_of(stored: StoredTrial) -> None:
        if "llm" in stored.judgments:
            for pair in assertion_pairs(stored.checklist, stored.judgments["llm"],
                                        stored.judgments.get("verifier", []),
                                        stored.row["trial_id"], stored.row["task_id"] or "?",
                                        stored.row["checks"]):
                counts.add(pair)

    ratings, preference_pairs = read_human_labels(human) if human is not None else ({}, [])
    wanted = {*ratings, *(t for a, b, _ in preference_pairs for t in (a, b))}
    rows, checklists = trial_rows(store, each=pairs_of, hold=lambda row: row.trial_id in wanted
                                  or row.condition in ("skills", "no-skills")
                                  or pairs not in (None, "auto"))  # a pairing CSV: every row
    if (turns := store.path.parent / "turn_rewards.jsonl").exists():  # skills reward's
        rows = with_turn_rows(rows, turns)
    result: dict[str, Any] = {"seed": seed, "bootstrap_draws": draws, "meta": store.meta()}
    discrimination = outcome_discrimination(rows, rng, draws=draws)
    result.update({"n_trials": discrimination["n_trials"], "auc": discrimination["auc"],
                   "discrimination": discrimination, "scorers": discrimination["scorers"]})
    result["progress_among_failures"] = progress_among_failures(rows, rng, draws=draws)
    result["agreement"] = counts.result(rng, draws=draws)
    result["evidence_kinds"] = evidence_kinds(j for _, j in store.iter_judgments("llm"))
    panel = panel_study(store, rng, draws=draws)
    if panel is not None:
        result["panel"] = panel
    if compare is not None:
        other, _ = trial_rows(compare, hold=lambda _: False)
        result["compare"] = compare_runs(rows, other, rng, draws=draws)
    if human is not None:
        result["human"] = human_agreement(rows.held, ratings, preference_pairs, rng,
                                          draws=draws)
    if pairs is not None:
        matched = match_skill_pairs(rows.held, None if pairs == "auto" else Path(pairs))
        if matched:
            result["skill_pairs"] = skill_pair_study(matched, checklists, threshold=threshold)
    return result


async def perturb_store(store: RunStore, model: Model, *, n: int, seed: int = 0
                        ) -> dict[str, Any]:
    """The evidence-perturbation study on a run's LLM Yes judgments (needs a model)."""
    rng = np.random.default_rng(seed + 1)
    checklists = store.checklists()
    judged = store.judgments("llm")
    rows = {r["trial_id"]: r for r in store.iter_trials()}
    trials = _reload({r["source_path"] for r in rows.values() if r["source_path"]})
    candidates: list[Candidate] = []
    instructions: dict[str, str] = {}
    for (trial_id, _), judgments in sorted(judged.items()):
        trial = trials.get(trial_id)
        checklist = checklists.get(rows.get(trial_id, {}).get("checklist_hash") or "")
        if trial is None or checklist is None:
            continue
        instructions[trial_id] = first_user_message(trial) or ""
        candidates += [Candidate(trial, checklist, j) for j in judgments
                       if j.label == "yes" and j.evidence]
    return await perturbation_study(candidates, model, instructions, rng, n=n)


def _reload(paths: set[str]) -> dict[str, Trial]:
    found: dict[str, Trial] = {}
    if paths:
        for trial in load(sorted(paths)).trials:
            found[trial.id] = trial
    return found


def analyze_trials(trials: list[Trial], *, seed: int = 0, draws: int = 2000) -> dict[str, Any]:
    """Outcome discrimination of the per-check pass fraction, for trials read directly (no
    run, no judging): e.g. a Terminal-Bench outcome listing."""
    usable = [t for t in trials if t.outcome in ("pass", "fail") and t.checks]
    excluded_outcome = sum(1 for t in trials if t.outcome == "none")
    excluded_checks = sum(1 for t in trials if t.outcome != "none" and not t.checks)
    fractions = [sum(s == "passed" for s in t.checks.values()) / len(t.checks) for t in usable]
    interval, _ = clustered_auc(fractions, [t.outcome == "pass" for t in usable],
                                [t.task_id or "?" for t in usable],
                                np.random.default_rng(seed), draws=draws)
    return {"scorer": "check_fraction", "n_trials": len(usable),
            "tasks": len({t.task_id for t in usable}),
            "excluded_no_outcome": excluded_outcome, "excluded_no_checks": excluded_checks,
            "auc": interval.as_dict(), "seed": seed, "bootstrap_draws": draws}
