"""The run store: one SQLite file (WAL) per run directory.

It holds the run's configuration and provenance, the checklists used (by hash), the
trials, every per-item judgment with its evidence, the raw model responses, the holistic
scores and every error. A trial's judgments from one source are written in a single
transaction together with its "done" mark, so a run killed at any moment resumes without
losing finished work or redoing it.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agentcredit.db import connect_wal
from agentcredit.errors import open_sqlite_error
from agentcredit.llm.types import ModelFailure, ModelResponse
from agentcredit.redact import redact_text
from agentcredit.schema import (
    Checklist,
    Citation,
    ItemJudgment,
    RiggingFlag,
    Trial,
    TrialVerdict,
)

STORE_NAME = "run.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS checklists (
    hash TEXT PRIMARY KEY, task_id TEXT NOT NULL, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS trials (
    trial_id TEXT PRIMARY KEY, task_id TEXT, outcome TEXT NOT NULL, outcome_reason TEXT,
    condition TEXT, checks TEXT NOT NULL, format TEXT, source_path TEXT, steps INTEGER,
    checklist_hash TEXT, started_at TEXT, agent TEXT, model TEXT, rigging TEXT);
CREATE TABLE IF NOT EXISTS judgments (
    trial_id TEXT NOT NULL, item_id TEXT NOT NULL, source TEXT NOT NULL, label TEXT NOT NULL,
    reason TEXT, rationale TEXT, evidence TEXT NOT NULL, checklist_hash TEXT NOT NULL,
    model TEXT, prompt_version TEXT, seed INTEGER,
    PRIMARY KEY (trial_id, item_id, source));
CREATE TABLE IF NOT EXISTS votes (
    trial_id TEXT NOT NULL, item_id TEXT NOT NULL, judge TEXT NOT NULL, sample INTEGER NOT NULL,
    label TEXT NOT NULL, reason TEXT, rationale TEXT, evidence TEXT NOT NULL,
    PRIMARY KEY (trial_id, item_id, judge, sample));
CREATE TABLE IF NOT EXISTS done (
    trial_id TEXT NOT NULL, source TEXT NOT NULL, at REAL NOT NULL,
    PRIMARY KEY (trial_id, source));
CREATE TABLE IF NOT EXISTS responses (
    id INTEGER PRIMARY KEY AUTOINCREMENT, trial_id TEXT NOT NULL, kind TEXT NOT NULL,
    model TEXT, ok INTEGER NOT NULL, text TEXT, usage TEXT, cached INTEGER, request_id TEXT,
    latency_s REAL, failure TEXT, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS holistic (
    trial_id TEXT PRIMARY KEY, score REAL, rationale TEXT, model TEXT, prompt_version TEXT,
    seed INTEGER);
CREATE TABLE IF NOT EXISTS turn_verdicts (
    trial_id TEXT PRIMARY KEY, skill_id TEXT NOT NULL, skill_hash TEXT NOT NULL,
    body TEXT NOT NULL, model TEXT, prompt_version TEXT, seed INTEGER, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS inputs (
    trial_id TEXT PRIMARY KEY, folder TEXT NOT NULL, fingerprint TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS errors (
    id INTEGER PRIMARY KEY AUTOINCREMENT, trial_id TEXT, stage TEXT NOT NULL,
    message TEXT NOT NULL, at REAL NOT NULL, resolved_at REAL);
"""


_JUDGMENTS = "SELECT trial_id, source, item_id, label, reason, rationale, evidence " \
    "FROM judgments"


def _judgment(source: str, item_id: str, label: Any, reason: Any, rationale: str | None,
              evidence: str) -> ItemJudgment:
    return ItemJudgment(item_id=item_id, label=label, reason=reason, rationale=rationale or "",
                        source=source,
                        evidence=() if evidence == "[]" else tuple(
                            Citation(**c) for c in json.loads(evidence)))


class RunStore:
    """Typed access to a run's SQLite file."""

    def __init__(self, run_dir: Path | str) -> None:
        run_dir = Path(run_dir)
        run_dir.mkdir(parents=True, exist_ok=True)
        self.path = run_dir / STORE_NAME
        self.db = connect_wal(self.path, _SCHEMA)
        try:
            columns = {row[1] for row in self.db.execute("PRAGMA table_info(errors)")}
            if "resolved_at" not in columns:  # a store written before errors could be resolved
                self.db.execute("ALTER TABLE errors ADD COLUMN resolved_at REAL")
            columns = {row[1] for row in self.db.execute("PRAGMA table_info(trials)")}
            if "rigging" not in columns:  # a store written before trials were flagged
                self.db.execute("ALTER TABLE trials ADD COLUMN rigging TEXT")
        except sqlite3.OperationalError as exc:
            if "readonly" not in str(exc):  # a read-only store of an older run: read as is
                raise open_sqlite_error(self.path, exc) from None
        except sqlite3.DatabaseError as exc:
            raise open_sqlite_error(self.path, exc) from None

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # configuration and provenance
    def set_meta(self, values: dict[str, Any]) -> None:
        with self.transaction() as db:
            db.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                           [(k, json.dumps(v)) for k, v in values.items()])

    def meta(self) -> dict[str, Any]:
        return {k: json.loads(v) for k, v in self.db.execute("SELECT key, value FROM meta")}

    # checklists and trials
    def add_checklist(self, checklist: Checklist) -> None:
        self.db.execute("INSERT OR IGNORE INTO checklists (hash, task_id, body) VALUES (?, ?, ?)",
                        (checklist.hash, checklist.task_id, checklist.model_dump_json()))

    def checklists(self) -> dict[str, Checklist]:
        return {h: Checklist.model_validate_json(b)
                for h, b in self.db.execute("SELECT hash, body FROM checklists")}

    def add_trial(self, trial: Trial, checklist_hash: str | None,
                  rigging: tuple[RiggingFlag, ...] = ()) -> None:
        """Store a trial's row (``rigging``: the actions that rig its measurement)."""
        self.db.execute(
            "INSERT OR REPLACE INTO trials (trial_id, task_id, outcome, outcome_reason, "
            "condition, checks, format, source_path, steps, checklist_hash, started_at, agent, "
            "model, rigging) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (trial.id, trial.task_id, trial.outcome,
             trial.outcome_reason and redact_text(trial.outcome_reason), trial.condition,
             json.dumps(trial.checks), trial.format,
             trial.source_path.encode("utf-8", "surrogateescape").decode("utf-8", "replace"),
             len(trial.steps),
             checklist_hash, trial.started_at, trial.agent.name if trial.agent else None,
             trial.model, json.dumps([f.model_dump() for f in rigging]) if rigging else None))

    def iter_trials(self, *, without_checklist: bool = False, by_id: bool = False,
                    ) -> Iterator[dict[str, Any]]:
        """The stored trials one at a time, in the order they were first stored (in trial id
        order with ``by_id``: the same in a run and in one merged from its shards; only those
        whose task has no checklist, with ``without_checklist``)."""
        cursor = self.db.execute("SELECT * FROM trials " + (
            "WHERE checklist_hash IS NULL " if without_checklist else "") + "ORDER BY " + (
            "trial_id" if by_id else "rowid"))
        names = [d[0] for d in cursor.description]
        for values in cursor:
            row = dict(zip(names, values, strict=True))
            row["checks"] = json.loads(row["checks"])
            row["rigging"] = tuple(RiggingFlag(**f)
                                   for f in json.loads(row.get("rigging") or "[]"))
            yield row

    def record_input(self, trial_id: str, folder: str, fingerprint: str) -> None:
        """Where a trial was read from, and what its folder held then."""
        self.db.execute("INSERT OR REPLACE INTO inputs (trial_id, folder, fingerprint) "
                        "VALUES (?, ?, ?)",  # the folder's bytes: names need not be UTF-8
                        (trial_id, os.fsencode(folder), fingerprint))

    def finished_inputs(self, sources: list[str], checklist_hashes: dict[str, str], *,
                        holistic: bool = False, failed_again: bool = False,
                        ) -> dict[str, tuple[str, str]]:
        """folder -> (fingerprint, trial id) of every trial read from a folder that needs
        no more work: done for every source in ``sources`` (and its holistic score when
        ``holistic``), judged against its task's checklist in ``checklist_hashes``, no open
        error, and (``failed_again``) no failed judge call to ask again."""
        marks = ",".join("?" * len(sources))
        query = (
            "SELECT i.folder, i.fingerprint, t.trial_id, t.task_id, t.checklist_hash "
            "FROM inputs i JOIN trials t ON t.trial_id = i.trial_id WHERE "
            f"(SELECT COUNT(*) FROM done d WHERE d.trial_id = t.trial_id AND d.source IN "
            f"({marks})) = ? AND NOT EXISTS (SELECT 1 FROM errors e WHERE "
            "e.trial_id = t.trial_id AND e.resolved_at IS NULL)"
            + (" AND EXISTS (SELECT 1 FROM holistic h WHERE h.trial_id = t.trial_id)"
               if holistic else "")
            + (" AND NOT EXISTS (SELECT 1 FROM judgments j WHERE j.trial_id = t.trial_id AND "
               "j.reason = 'judge_failed')" if failed_again else ""))
        return {os.fsdecode(folder): (fingerprint, trial_id) for folder, fingerprint, trial_id,
                task_id,
                checklist_hash in self.db.execute(query, (*sources, len(sources)))
                if checklist_hashes.get(task_id or "") == checklist_hash}

    def state(self, options: list[Any]) -> str:
        """A digest of what outputs are made from: every table's size and last write, the
        provenance (but its timestamps and the outputs' own mark) and ``options``."""
        counts = self.db.execute(
            "SELECT (SELECT COUNT(*) FROM judgments), (SELECT MAX(rowid) FROM judgments), "
            "(SELECT MAX(rowid) FROM trials), (SELECT COUNT(*) FROM trials), "
            "(SELECT MAX(at) FROM done), (SELECT MAX(rowid) FROM responses), "
            "(SELECT COUNT(*) FROM holistic), (SELECT MAX(rowid) FROM holistic), "
            "(SELECT COUNT(*) FROM errors), (SELECT MAX(COALESCE(resolved_at, at)) FROM errors), "
            "(SELECT COUNT(*) FROM checklists)").fetchone()
        meta = {k: v for k, v in self.meta().items()
                if k not in ("updated_at", "created_at", "outputs_state")}
        return hashlib.sha256(json.dumps([list(counts), meta, options], sort_keys=True,
                                         default=str).encode()).hexdigest()[:32]

    # judgments

    def done_set(self, source: str) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT trial_id FROM done WHERE source = ?",
                                              (source,))}

    def record_judgments(
        self, trial_id: str, source: str, judgments: list[ItemJudgment], *,
        checklist_hash: str, model: str | None, prompt_version: str | None, seed: int | None,
        responses: list[ModelResponse] | None = None,
        failures: list[ModelFailure] | None = None, votes: Sequence[Any] = (),
    ) -> None:
        """All judgments of one trial from one source, its responses, the votes of a judge
        panel behind them (:class:`agentcredit.judging.panel.Vote`), and the done mark."""
        now = time.time()
        rows = [(j.rationale, json.dumps([c.model_dump() for c in j.evidence]))
                for j in judgments]
        joined = "\x00".join(t for row in rows for t in row)
        if redact_text(joined) != joined:  # (rarely: one look at the whole trial first)
            rows = [(redact_text(r), redact_text(e)) for r, e in rows]
        with self.transaction() as db:
            db.execute("DELETE FROM judgments WHERE trial_id = ? AND source = ?",
                       (trial_id, source))
            db.executemany(
                "INSERT INTO judgments (trial_id, item_id, source, label, reason, rationale, "
                "evidence, checklist_hash, model, prompt_version, seed) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(trial_id, j.item_id, source, j.label, j.reason, rationale, evidence,
                  checklist_hash, model, prompt_version, seed)
                 for j, (rationale, evidence) in zip(judgments, rows, strict=True)])
            self._responses(db, trial_id, "judge", responses or [], failures or [], now)
            if votes:
                db.execute("DELETE FROM votes WHERE trial_id = ?", (trial_id,))
                db.executemany(
                    "INSERT INTO votes (trial_id, item_id, judge, sample, label, reason, "
                    "rationale, evidence) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [(trial_id, v.item_id, v.judge, v.sample, v.judgment.label,
                      v.judgment.reason, redact_text(v.judgment.rationale),
                      redact_text(json.dumps([c.model_dump() for c in v.judgment.evidence])))
                     for v in votes])
            db.execute("INSERT OR REPLACE INTO done (trial_id, source, at) VALUES (?, ?, ?)",
                       (trial_id, source, now))

    def votes(self, trial_id: str | None = None) -> Iterator[tuple[str, str, str, int,
                                                                  ItemJudgment]]:
        """(trial_id, item_id, judge, sample, judgment) of every vote of a judge panel
        (one trial's, with ``trial_id``), in trial and item order."""
        query = "SELECT trial_id, item_id, judge, sample, label, reason, rationale, " \
            "evidence FROM votes" + (" WHERE trial_id = ?" if trial_id else "") + \
            " ORDER BY trial_id, item_id, judge, sample"
        for tid, item_id, judge, sample, *row in self.db.execute(
                query, (trial_id,) if trial_id else ()):
            yield tid, item_id, judge, sample, _judgment("llm", item_id, *row)

    def judgments(self, source: str | None = None) -> dict[tuple[str, str], list[ItemJudgment]]:
        """Judgments by (trial_id, source)."""
        out: dict[tuple[str, str], list[ItemJudgment]] = {}
        for trial_id, judgment in self.iter_judgments(source):
            out.setdefault((trial_id, judgment.source or ""), []).append(judgment)
        return out

    def iter_judgments(self, source: str | None = None) -> Iterator[tuple[str, ItemJudgment]]:
        """(trial_id, judgment) one at a time, a trial's together, in key order."""
        query = _JUDGMENTS + (" WHERE source = ?" if source else "") + \
            " ORDER BY trial_id, source, rowid"
        for trial_id, *row in self.db.execute(query, (source,) if source else ()):
            yield trial_id, _judgment(*row)

    def judgments_of(self, trial_id: str) -> dict[str, list[ItemJudgment]]:
        """One trial's judgments by source."""
        out: dict[str, list[ItemJudgment]] = {}
        for _, *row in self.db.execute(_JUDGMENTS + " WHERE trial_id = ? ORDER BY rowid",
                                    (trial_id,)):
            judgment = _judgment(*row)
            out.setdefault(judgment.source or "", []).append(judgment)
        return out

    def judged_model(self, trial_id: str, source: str,
                     ) -> tuple[str | None, str | None, int | None]:
        """(model, prompt_version, seed) of one trial's judgments from one source."""
        row = self.db.execute("SELECT model, prompt_version, seed FROM judgments WHERE "
                              "trial_id = ? AND source = ? LIMIT 1", (trial_id, source)).fetchone()
        return (row[0], row[1], row[2]) if row else (None, None, None)

    def trials_with_failed_judge(self) -> set[str]:
        return {r[0] for r in self.db.execute(
            "SELECT DISTINCT trial_id FROM judgments WHERE reason = 'judge_failed'")}

    # holistic baseline
    def record_holistic(self, trial_id: str, score: float | None, rationale: str, *,
                        model: str, prompt_version: str, seed: int | None,
                        response: ModelResponse | ModelFailure) -> None:
        with self.transaction() as db:
            db.execute("INSERT OR REPLACE INTO holistic (trial_id, score, rationale, model, "
                       "prompt_version, seed) VALUES (?, ?, ?, ?, ?, ?)",
                       (trial_id, score, rationale, model, prompt_version, seed))
            ok = [response] if isinstance(response, ModelResponse) else []
            bad = [response] if isinstance(response, ModelFailure) else []
            self._responses(db, trial_id, "holistic", ok, bad, time.time())

    def holistic(self) -> dict[str, tuple[float | None, str]]:
        return {t: (s, r) for t, s, r in self.db.execute(
            "SELECT trial_id, score, rationale FROM holistic")}

    def holistic_score(self, trial_id: str) -> float | None:
        row = self.db.execute("SELECT score FROM holistic WHERE trial_id = ?",
                              (trial_id,)).fetchone()
        return row[0] if row else None

    # turn-level rubric verdicts (SkillRubric)
    def record_turn_verdict(self, verdict: TrialVerdict, *,
                            responses: list[ModelResponse] | None = None,
                            failures: list[ModelFailure] | None = None) -> None:
        """A trial's turn verdicts with their citations, the verifier's raw responses (kind
        ``turn-verifier``, as judge responses are kept) and its done mark, in one go."""
        now = time.time()
        with self.transaction() as db:
            db.execute("DELETE FROM responses WHERE trial_id = ? AND kind = 'turn-verifier'",
                       (verdict.trial_id,))
            self._responses(db, verdict.trial_id, "turn-verifier", responses or [],
                            failures or [], now)
            db.execute("INSERT OR REPLACE INTO turn_verdicts (trial_id, skill_id, skill_hash, "
                       "body, model, prompt_version, seed, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                       (verdict.trial_id, verdict.skill_id, verdict.key,
                        verdict.model_dump_json(), verdict.model, verdict.prompt_version,
                        verdict.seed, now))
            db.execute("INSERT OR REPLACE INTO done (trial_id, source, at) VALUES (?, ?, ?)",
                       (verdict.trial_id, "turns", now))

    def turn_verdicts(self, trial_ids: Sequence[str] | None = None) -> dict[str, TrialVerdict]:
        """Turn verdicts by trial id (of ``trial_ids`` only, when given)."""
        if trial_ids is None:
            return {t: TrialVerdict.model_validate_json(b) for t, b in self.db.execute(
                "SELECT trial_id, body FROM turn_verdicts ORDER BY rowid")}
        found: dict[str, TrialVerdict] = {}
        for start in range(0, len(trial_ids), 500):
            chunk = trial_ids[start:start + 500]
            found.update((t, TrialVerdict.model_validate_json(b)) for t, b in self.db.execute(
                f"SELECT trial_id, body FROM turn_verdicts WHERE trial_id IN "
                f"({','.join('?' * len(chunk))})", chunk))
        return found

    def turn_verdict_marks(self) -> dict[str, tuple[str, str | None, str | None, int | None]]:
        """trial id -> (rubric key: :attr:`TrialVerdict.key`, model, prompt version, seed) of
        its stored turn verdict: what a rerun compares to decide whether to verify again (no
        verdict is parsed)."""
        return {t: (h, m, p, s) for t, h, m, p, s in self.db.execute(
            "SELECT trial_id, skill_hash, model, prompt_version, seed FROM turn_verdicts")}

    # errors and usage
    def add_error(self, trial_id: str | None, stage: str, message: str) -> None:
        """Record an error, unless the same one is already open (a rerun that fails the
        same way again adds nothing)."""
        message = redact_text(message)
        if self.db.execute("SELECT 1 FROM errors WHERE trial_id IS ? AND stage = ? AND "
                           "message = ? AND resolved_at IS NULL",
                           (trial_id, stage, message)).fetchone() is not None:
            return
        self.db.execute("INSERT INTO errors (trial_id, stage, message, at) VALUES (?, ?, ?, ?)",
                        (trial_id, stage, message, time.time()))

    def resolve_errors(self, trial_id: str, stage: str, *, prefix: str = "") -> int:
        """Mark the open errors of a trial and stage (whose message starts with ``prefix``)
        as resolved now; returns how many were."""
        cursor = self.db.execute(
            "UPDATE errors SET resolved_at = ? WHERE trial_id = ? AND stage = ? AND "
            "resolved_at IS NULL AND substr(message, 1, ?) = ?",
            (time.time(), trial_id, stage, len(prefix), prefix))
        return int(cursor.rowcount)

    def errors(self) -> list[tuple[str | None, str, str]]:
        """Open errors (those no later run resolved), oldest first."""
        return list(self.db.execute("SELECT trial_id, stage, message FROM errors WHERE "
                                    "resolved_at IS NULL ORDER BY id"))

    def resolved_errors(self) -> list[tuple[str | None, str, str, float]]:
        """Errors a later run resolved, with the time they were resolved."""
        return list(self.db.execute("SELECT trial_id, stage, message, resolved_at FROM errors "
                                    "WHERE resolved_at IS NOT NULL ORDER BY id"))

    def usage(self) -> dict[str, int]:
        row = self.db.execute(
            "SELECT COUNT(*), COALESCE(SUM(cached), 0), COALESCE(SUM(1 - ok), 0) "
            "FROM responses").fetchone()
        tokens = {"input": 0, "cached_input": 0, "output": 0}
        for (usage,) in self.db.execute("SELECT usage FROM responses WHERE ok = 1 AND cached = 0"):
            for k, v in json.loads(usage).items():
                tokens[k] = tokens.get(k, 0) + int(v)
        return {"responses": row[0], "cache_hits": row[1], "failures": row[2],
                **{f"{k}_tokens": v for k, v in tokens.items()}}

    @staticmethod
    def _responses(db: sqlite3.Connection, trial_id: str, kind: str,
                   responses: list[ModelResponse], failures: list[ModelFailure],
                   now: float) -> None:
        db.executemany(
            "INSERT INTO responses (trial_id, kind, model, ok, text, usage, cached, request_id, "
            "latency_s, failure, at) VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?, NULL, ?)",
            [(trial_id, kind, r.model, r.text, r.usage.model_dump_json(), int(r.cached),
              r.request_id, r.latency_s, now) for r in responses])
        db.executemany(
            "INSERT INTO responses (trial_id, kind, model, ok, text, usage, cached, request_id, "
            "latency_s, failure, at) VALUES (?, ?, ?, 0, NULL, NULL, 0, NULL, NULL, ?, ?)",
            [(trial_id, kind, f.model, f.model_dump_json(), now) for f in failures])
