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
import math
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from agentcredit.analysis.agreement import cohen_kappa
from agentcredit.analysis.panel import CODES, nominal_alpha
from agentcredit.errors import InputError
from agentcredit.safe_io import open_regular
from agentcredit.store.run_store import RunStore
from agentcredit.text import shorten

LABELS = ("yes", "no", "abstain")


LINE_BYTES = 64 * 1024
"""Longest line of a labels file: ids and a label fit many times over; a longer line (a
pasted document in a field) is refused with its line number, never read into memory."""


def read_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, fields) of a labels file, streamed: JSON Lines objects, or CSV rows named by a
    header (``trial_id,item_id,label`` or ``trial_id,score``; without a header, by their
    count). A UTF-8 byte order mark (as spreadsheets save) is skipped; invalid UTF-8, a line
    over :data:`LINE_BYTES` and a FIFO or device are refused with an InputError."""
    with open_regular(path) as handle:
        counted = _lines(path, handle)
        if path.suffix in (".jsonl", ".json"):
            for n, line in counted:
                if line.strip():
                    try:
                        yield n, dict(json.loads(line))
                    except (json.JSONDecodeError, TypeError, ValueError):
                        raise InputError(str(path), f"line {n}: not a JSON object") from None
            return
        where = [0]
        reader = csv.reader(line for where[0], line in counted)
        names: list[str] | None = None
        while True:
            try:
                cells = next(reader, None)
            except csv.Error as exc:
                raise InputError(str(path), f"line {where[0]}: not CSV ({exc})") from None
            if cells is None:
                return
            row = [c.strip() for c in cells]
            if not row or not row[0]:
                continue
            if names is None:
                names = row if row[0] == "trial_id" else (
                    ["trial_id", "score"] if len(row) == 2 else ["trial_id", "item_id", "label"])
                if row[0] == "trial_id":
                    continue
            yield where[0], dict(zip(names, row, strict=False))


def _lines(path: Path, handle: BinaryIO) -> Iterator[tuple[int, str]]:
    n = 0
    while raw := handle.readline(LINE_BYTES + 1):
        n += 1
        if len(raw) > LINE_BYTES:
            raise InputError(str(path), f"line {n}: over {LINE_BYTES // 1024} KB (a labels "
                             "file holds ids, a label or a score)")
        try:
            yield n, raw.decode("utf-8-sig" if n == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(str(path), f"line {n}: invalid UTF-8 ({exc.reason}); save the "
                             "file as UTF-8") from None


def read_labels(path: Path) -> dict[tuple[str, str], str]:
    """(trial_id, item_id) -> the person's label; InputError naming the line when unusable,
    or when one item is labelled twice with different labels (never settled by row order)."""
    out: dict[tuple[str, str], str] = {}
    for n, row in read_rows(path):
        trial_id, item_id = row.get("trial_id"), row.get("item_id")
        label = str(row.get("label") or "").strip().lower()
        if not trial_id or not item_id or label not in LABELS:
            raise InputError(str(path), f"line {n}: need trial_id, item_id and a label of "
                             f"yes, no or abstain (got {shorten(label, 40)!r})")
        key = (sys.intern(str(trial_id).strip()), sys.intern(str(item_id).strip()))
        if out.setdefault(key, sys.intern(label)) != label:
            raise InputError(str(path), f"line {n}: trial {shorten(key[0], 80)!r} item "
                             f"{shorten(key[1], 80)!r} is labelled {label!r} here and "
                             f"{out[key]!r} on line {_first(path, key)}; keep one")
    return out


def _first(path: Path, key: tuple[str, ...]) -> int:
    """The line that first names ``key`` (read again only to report a contradiction)."""
    names = ("trial_id", "item_id")[:len(key)]
    return next(n for n, row in read_rows(path)
                if tuple(str(row.get(k) or "").strip() for k in names) == key)


def read_scores(path: Path) -> dict[str, float]:
    """trial_id -> the person's score of the trial (``trial_id,score`` rows); a score that is
    not a finite number, or a trial scored twice differently, is refused naming the line."""
    out: dict[str, float] = {}
    for n, row in read_rows(path):
        try:
            trial_id, score = str(row["trial_id"]).strip(), float(row["score"])
        except (KeyError, TypeError, ValueError):
            raise InputError(str(path), f"line {n}: need trial_id and a numeric score") from None
        if not math.isfinite(score):
            raise InputError(str(path), f"line {n}: the score {score} is not a finite number")
        if out.setdefault(trial_id, score) != score:
            raise InputError(str(path), f"line {n}: trial {shorten(trial_id, 80)!r} is scored "
                             f"{score:g} here and {out[trial_id]:g} on line "
                             f"{_first(path, (trial_id,))}; keep one")
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
    head = next(iter(read_rows(path)), None)
    if head and "score" in head[1] and "item_id" not in head[1]:
        return score_validation(store, path)
    person = read_labels(path)
    tasks = {t["trial_id"]: t["task_id"] or "?" for t in store.iter_trials()}
    source = "llm" if store.meta().get("model") else "verifier"  # what the run scored
    raters: dict[str, dict[tuple[str, str], str]] = {"run": {
        (t, j.item_id): j.label for t, j in store.iter_judgments(source)}}
    for trial_id, item_id, judge, sample, judgment in store.votes():
        if sample == 0:
            raters.setdefault(judge, {})[(trial_id, item_id)] = judgment.label
    kept = [k for k in person if k in raters["run"]]
    out: dict[str, Any] = {"file": str(path), "labels": len(person),
                           "not_in_run": len(person) - len(kept), "splits": {}}
    for split in ("dev", "test", "all"):
        keys = [k for k in kept if split == "all" or split_of(tasks.get(k[0], "?")) == split]
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
            pairs = [(person[t], b) for t in mine if (b := _score(rows[t], name)) is not None]
            scorers[name] = {"n": len(pairs), "spearman": spearman(
                [a for a, _ in pairs], [b for _, b in pairs]) if len(pairs) >= 3 else None}
        out["splits"][split] = {"trials": len(mine), "scorers": scorers}
    return out


def _score(row: Any, name: str) -> float | None:
    if name == "checks_fraction":
        return row.checks_passed / row.checks_total if row.checks_total else None
    value = getattr(row, name)
    return None if value is None else float(value)
