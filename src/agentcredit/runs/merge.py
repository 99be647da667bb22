"""Runs past one machine: each machine judges a deterministic share of the trials
(``--shard K/N``, by a hash of the trial id) into its own run folder, and :func:`merge_runs`
builds one store from the shards, refusing what would not be one run: a trial in two
shards, a shard merged twice, or shards judged with other checklists, rules, prompts,
model or seed."""

from __future__ import annotations

import os
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentcredit.analysis.analyze import analyze_store
from agentcredit.errors import ConfigError
from agentcredit.report.build import write_report
from agentcredit.runs.pipeline import write_scores
from agentcredit.store.run_store import STORE_NAME, RunStore

SAME_IN_EVERY_SHARD = ("model", "rules", "seed", "judge_prompt_version",
                       "holistic_prompt_version", "synthesis_prompt_version", "per_item",
                       "evidence", "judge_panel", "samples")
"""What the scores of a run are made with (provenance keys): shards must agree on each."""
_COPIED = ("trials", "judgments", "votes", "done", "holistic", "turn_verdicts", "inputs")
_RENUMBERED = {"responses": "trial_id, kind, model, ok, text, usage, cached, request_id, "
               "latency_s, failure, at",
               "errors": "trial_id, stage, message, at, resolved_at"}


@dataclass(frozen=True)
class MergeResult:
    """What :func:`merge_runs` built."""

    out: Path
    trials: int
    shards: list[str]
    missing: list[str]  # shards of the same N not given: the run covers part of the trials


def merge_runs(parts: list[Path], out: Path, *, seed: int | None = None) -> MergeResult:
    """One run folder ``out`` (store, scores, summary, report) from the run folders
    ``parts``; refused with a one-line reason (a ConfigError) when they are not shards of
    one run. ``out`` must not hold a run yet; nothing is left there on a refusal."""
    stores = _opened(parts, out)
    work = out.with_name(f".{out.name}.merging")
    shutil.rmtree(work, ignore_errors=True)
    try:
        metas = [s.meta() for s in stores]
        shards = _check_parts(parts, stores, metas)
        merged = RunStore(work)
        try:
            for part, store in zip(parts, stores, strict=True):
                _copy(merged, part, store.path)
            merged.set_meta({**{k: v for k, v in metas[0].items()
                                if k not in ("shard", "outputs_state")},
                             "merged_from": [str(p) for p in parts], "shards": shards})
            trials = int(merged.db.execute("SELECT COUNT(*) FROM trials").fetchone()[0])
        finally:
            merged.close()
        if (parts[0] / "checklists").is_dir():
            shutil.copytree(parts[0] / "checklists", work / "checklists")
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    finally:
        for store in stores:
            store.close()
    out.parent.mkdir(parents=True, exist_ok=True)
    os.replace(work, out)  # (an empty folder is replaced)
    _write_outputs(out, metas[0].get("seed", 0) if seed is None else seed)
    missing = [f"{k}/{n}" for n in {s.partition("/")[2] for s in shards if s}
               for k in range(1, int(n) + 1) if f"{k}/{n}" not in shards]
    return MergeResult(out, trials, [s or "unsharded" for s in shards], missing)


def _opened(parts: list[Path], out: Path) -> list[RunStore]:
    if len(parts) < 2:
        raise ConfigError("merge needs at least two run folders")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ConfigError(f"{out} is not empty; merge into a new folder")
    for part in parts:
        if not (part / STORE_NAME).is_file():
            raise ConfigError(f"{part}: no run store here")
    if len({p.resolve() for p in parts}) < len(parts):
        raise ConfigError("a run folder is given twice: a trial is never counted twice")
    return [RunStore(p) for p in parts]


def _check_parts(parts: list[Path], stores: list[RunStore], metas: list[dict[str, Any]]
                 ) -> list[str]:
    """The parts' shards; a ConfigError when they are not shards of one run."""
    first = parts[0]
    for part, meta in zip(parts[1:], metas[1:], strict=True):
        for key in SAME_IN_EVERY_SHARD:
            if meta.get(key) != metas[0].get(key):
                raise ConfigError(f"{part}: {key} is {meta.get(key)!r} but {metas[0].get(key)!r} "
                                  f"in {first}: shards must be run with the same command")
    shards = [m.get("shard") for m in metas]
    seen: dict[str, Path] = {}
    for part, shard in zip(parts, shards, strict=True):
        if shard in seen:
            raise ConfigError(f"{seen[shard]} and {part} are both shard {shard}: a shard is "
                              "merged once")
        if shard:
            seen[shard] = part
    if len({s.partition("/")[2] if s else None for s in shards}) > 1:
        raise ConfigError("the runs were split differently (" + ", ".join(
            f"{p}: {s or 'unsharded'}" for p, s in zip(parts, shards, strict=True)) + ")")
    used: dict[str, tuple[str, Path]] = {}
    for part, store in zip(parts, stores, strict=True):
        for task, digest in store.db.execute("SELECT DISTINCT task_id, checklist_hash FROM "
                                             "trials WHERE checklist_hash IS NOT NULL"):
            other = used.setdefault(task, (digest, part))
            if other[0] != digest:
                raise ConfigError(f"task {task!r}: checklist {other[0][:12]} in {other[1]}, "
                                  f"{digest[:12]} in {part}: shards must use the same "
                                  "checklists")
    return [s or "" for s in shards]


def _copy(merged: RunStore, part: Path, path: Path) -> None:
    """Every row of the store at ``path`` into ``merged`` (a trial already there refused)."""
    db = merged.db
    db.execute("ATTACH DATABASE ? AS part", (str(path),))
    try:
        twice = db.execute("SELECT trial_id FROM part.trials WHERE trial_id IN "
                           "(SELECT trial_id FROM main.trials) LIMIT 1").fetchone()
        if twice is not None:
            raise ConfigError(f"trial {twice[0]!r} of {part} is in another run given too: a "
                              "trial is never counted twice (a shard given twice?)")
        with merged.transaction():
            db.execute("INSERT OR IGNORE INTO main.checklists SELECT * FROM part.checklists")
            for table in _COPIED:
                db.execute(f"INSERT INTO main.{table} SELECT * FROM part.{table}")
            for table, columns in _RENUMBERED.items():
                db.execute(f"INSERT INTO main.{table} ({columns}) SELECT {columns} "
                           f"FROM part.{table}")
    except sqlite3.OperationalError as exc:
        raise ConfigError(f"{part}: cannot read its store ({exc})") from None
    finally:
        db.execute("DETACH DATABASE part")


def _write_outputs(out: Path, seed: int) -> None:
    store = RunStore(out)
    try:
        write_scores(store, out, "csv")
        write_report(store, analyze_store(store, seed=seed), out / "report.html")
    finally:
        store.close()
