"""The judge checked against labels a person gave: precision, recall, F1 and balanced
accuracy per label, Cohen's kappa and Krippendorff's alpha, on a dev and a test split.

The labels file is CSV (``trial_id,item_id,label``, a header row allowed) or JSON Lines
(``{"trial_id", "item_id", "label"}``), labels ``yes``, ``no`` or ``abstain``. Tasks are split
by a hash of their id (stable across runs and machines): a prompt or rule tuned while looking
at the ``dev`` numbers is judged on ``test``, which it never saw. Each judge of a panel is
checked too (its first sample), beside the run's label.
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from agentcredit.analysis.agreement import cohen_kappa
from agentcredit.analysis.panel import CODES, nominal_alpha
from agentcredit.errors import InputError
from agentcredit.store.run_store import RunStore

LABELS = ("yes", "no", "abstain")


def read_rows(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(line, fields) of a labels file: JSON Lines objects, or CSV rows named by a header
    (``trial_id,item_id,label`` or ``trial_id,score``; without a header, by their count)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(str(path), f"cannot read the labels: {exc.strerror}") from None
    if path.suffix in (".jsonl", ".json"):
        rows = []
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    rows.append((n, dict(json.loads(line))))
                except (json.JSONDecodeError, TypeError, ValueError):
                    raise InputError(str(path), f"line {n}: not a JSON object") from None
        return rows
    table = [(n, [c.strip() for c in r]) for n, r in enumerate(csv.reader(text.splitlines()), 1)
             if r and r[0].strip()]
    header = table[0][1] if table and table[0][1][0] == "trial_id" else None
    names = header or (["trial_id", "score"] if table and len(table[0][1]) == 2 else
                       ["trial_id", "item_id", "label"])
    return [(n, dict(zip(names, r, strict=False))) for n, r in table[1 if header else 0:]]


def read_labels(path: Path) -> dict[tuple[str, str], str]:
    """(trial_id, item_id) -> the person's label; InputError naming the line when unusable."""
    out: dict[tuple[str, str], str] = {}
    for n, row in read_rows(path):
        trial_id, item_id = row.get("trial_id"), row.get("item_id")
        label = str(row.get("label") or "").strip().lower()
        if not trial_id or not item_id or label not in LABELS:
            raise InputError(str(path), f"line {n}: need trial_id, item_id and a label of "
                             f"yes, no or abstain (got {label!r})")
        out[(str(trial_id).strip(), str(item_id).strip())] = label
    return out


def read_scores(path: Path) -> dict[str, float]:
    """trial_id -> the person's score of the trial (``trial_id,score`` rows)."""
    out: dict[str, float] = {}
    for n, row in read_rows(path):
        try:
            out[str(row["trial_id"]).strip()] = float(row["score"])
        except (KeyError, TypeError, ValueError):
            raise InputError(str(path), f"line {n}: need trial_id and a numeric score") from None
    return out


def split_of(task_id: str) -> str:
    """``dev`` or ``test``, from a hash of the task id.

    >>> [split_of(t) for t in ("csv-sales-summary", "log-error-filter")]
    ['test', 'dev']
    """
    return "dev" if hashlib.sha256(task_id.encode()).digest()[0] % 2 == 0 else "test"


def label_validation(store: RunStore, path: Path) -> dict[str, Any]:
    """The run's labels (the LLM judge's, or the verifier's in a run without a model; and
    each panel judge's) against the person's, per split; or, for a file of per-trial
    scores, Spearman's rho of each of the run's scores with the person's."""
    rows = read_rows(path)
    if rows and "score" in rows[0][1] and "item_id" not in rows[0][1]:
        return score_validation(store, path)
    person = read_labels(path)
    tasks = {t["trial_id"]: t["task_id"] or "?" for t in store.iter_trials()}
    source = "llm" if store.meta().get("model") else "verifier"  # what the run scored
    raters: dict[str, dict[tuple[str, str], str]] = {"run": {
        (t, j.item_id): j.label for t, j in store.iter_judgments(source)}}
    for trial_id, item_id, judge, sample, judgment in store.votes():
        if sample == 0:
            raters.setdefault(judge, {})[(trial_id, item_id)] = judgment.label
    missing = [k for k in person if k not in raters["run"]]
    out: dict[str, Any] = {"file": str(path), "labels": len(person),
                           "not_in_run": len(missing), "splits": {}}
    for split in ("dev", "test", "all"):
        keys = [k for k in person if k not in missing and
                (split == "all" or split_of(tasks.get(k[0], "?")) == split)]
        out["splits"][split] = {
            "items": len(keys), "tasks": len({tasks.get(k[0], "?") for k in keys}),
            "raters": {name: _metrics([person[k] for k in keys],
                                      [labels.get(k) for k in keys])
                       for name, labels in raters.items()}}
    return out


def _metrics(truth: list[str], given: list[str | None]) -> dict[str, Any]:
    pairs = [(t, g) for t, g in zip(truth, given, strict=True) if g is not None]
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for t, g in pairs:
        counts[t][g] += 1
    per_label: dict[str, Any] = {}
    recalls = []
    for label in LABELS:
        tp = counts[label][label]
        predicted = sum(counts[t][label] for t in LABELS)
        actual = sum(counts[label].values())
        precision = tp / predicted if predicted else None
        recall = tp / actual if actual else None
        f1 = 2 * precision * recall / (precision + recall) \
            if precision and recall else (0.0 if predicted and actual else None)
        per_label[label] = {"precision": precision, "recall": recall, "f1": f1,
                            "support": actual}
        if recall is not None:
            recalls.append(recall)
    matrix = np.array([[counts[t][g] for g in LABELS] for t in LABELS], dtype=float)
    data = np.array([[CODES[t] for t, _ in pairs], [CODES[g] for _, g in pairs]]) \
        if pairs else np.zeros((2, 0))
    return {"n": len(pairs), "per_label": per_label,
            "balanced_accuracy": float(np.mean(recalls)) if recalls else None,
            "kappa": cohen_kappa(matrix), "alpha": nominal_alpha(data) if pairs else None}


def score_validation(store: RunStore, path: Path) -> dict[str, Any]:
    """The run's per-trial scores against a person's, per split (Spearman's rho)."""
    from agentcredit.analysis.stats import spearman
    from agentcredit.store.scores import run_scores

    person = read_scores(path)
    rows = {r.trial_id: r for r in run_scores(store)}
    out: dict[str, Any] = {"file": str(path), "scores": len(person),
                           "not_in_run": sum(1 for t in person if t not in rows), "splits": {}}
    for split in ("dev", "test", "all"):
        mine = [t for t in person if t in rows and
                (split == "all" or split_of(rows[t].task_id or "?") == split)]
        scorers: dict[str, Any] = {}
        for name in ("partial_credit", "holistic", "checks_fraction"):
            pairs = [(person[t], _score(rows[t], name)) for t in mine]
            pairs = [(a, b) for a, b in pairs if b is not None]
            scorers[name] = {"n": len(pairs), "spearman": spearman(
                [a for a, _ in pairs], [b for _, b in pairs]) if len(pairs) >= 3 else None}
        out["splits"][split] = {"trials": len(mine), "scorers": scorers}
    return out


def _score(row: Any, name: str) -> float | None:
    if name == "checks_fraction":
        return row.checks_passed / row.checks_total if row.checks_total else None
    value = getattr(row, name)
    return None if value is None else float(value)
