"""What was sent in which batch, and what came back: a SQLite ledger beside the cache.

The ledger lives in the same database file as the response cache and its pending requests
(``RUN/responses.sqlite``), so that a client stopped at any point and started days later
knows every batch it created (provider, id, the file it sent, its requests) and the state of
each request in it: ``submitted``, ``answered``, ``failed`` (a definitive refusal, with the
provider's reason), ``retry`` (expired, cancelled, a transient error, or absent from the
results: asked again in a later batch) or ``given_up`` (too many attempts).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentcredit.db import connect_wal

_SCHEMA = """
CREATE TABLE IF NOT EXISTS batch_jobs (
    id TEXT PRIMARY KEY,
    provider TEXT NOT NULL,
    base_url TEXT,
    file TEXT NOT NULL,
    input_file_id TEXT,
    requests INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    status TEXT NOT NULL,
    counts TEXT NOT NULL DEFAULT '{}',
    collected INTEGER NOT NULL DEFAULT 0,
    submitted_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS batch_requests (
    key TEXT NOT NULL,
    batch_id TEXT NOT NULL,
    state TEXT NOT NULL,
    reason TEXT,
    PRIMARY KEY (key, batch_id)
);
CREATE INDEX IF NOT EXISTS batch_requests_by_batch ON batch_requests (batch_id);
CREATE TABLE IF NOT EXISTS batch_intents (
    token TEXT PRIMARY KEY,
    provider TEXT NOT NULL,
    base_url TEXT,
    file TEXT NOT NULL,
    keys TEXT NOT NULL,
    bytes INTEGER NOT NULL,
    created_at REAL NOT NULL
);
"""


@dataclass(frozen=True)
class Job:
    """One batch as the ledger knows it."""

    id: str
    provider: str
    base_url: str | None
    file: str
    requests: int
    bytes: int
    status: str
    counts: dict[str, int]
    collected: bool


@dataclass(frozen=True)
class Intent:
    """A batch about to be created: recorded before the provider is asked, with the token
    the batch carries in its metadata, so that a client stopped between the provider's
    answer and the ledger write finds the batch again instead of creating a second one."""

    token: str
    provider: str
    base_url: str | None
    file: str
    keys: tuple[str, ...]
    bytes: int
    created_at: float


class BatchLedger:
    """Batches and their requests. Thread-safe; WAL (and reclaimable), like the cache whose
    file it shares."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._db = connect_wal(self.path, _SCHEMA, reclaimable=True)

    def add_intent(self, token: str, provider: str, base_url: str | None, file: Path,
                   keys: Iterable[str], size: int) -> None:
        """Record a batch about to be created (its requests are in flight from now on)."""
        with self._lock:
            self._db.execute(
                "INSERT INTO batch_intents (token, provider, base_url, file, keys, bytes, "
                "created_at) VALUES (?,?,?,?,?,?,?)",
                (token, provider, base_url, str(file), json.dumps(list(keys)), size,
                 time.time()))

    def intents(self) -> list[Intent]:
        """Batches asked for whose creation was never recorded (oldest first)."""
        with self._lock:
            rows = self._db.execute("SELECT token, provider, base_url, file, keys, bytes, "
                                    "created_at FROM batch_intents ORDER BY created_at"
                                    ).fetchall()
        return [Intent(r[0], r[1], r[2], r[3], tuple(json.loads(r[4])), r[5], r[6])
                for r in rows]

    def drop_intent(self, token: str) -> None:
        """Forget an intent whose batch the provider never created (its requests are
        pending again)."""
        with self._lock:
            self._db.execute("DELETE FROM batch_intents WHERE token = ?", (token,))

    def add_job(self, job_id: str, provider: str, base_url: str | None, file: Path,
                input_file_id: str | None, keys: Iterable[str], size: int,
                token: str | None = None) -> None:
        """Record a created batch and its requests (``submitted``), and settle the intent
        ``token`` it was created under, in one transaction."""
        keys = list(keys)
        now = time.time()
        with self._lock:
            self._db.execute("BEGIN")
            if token is not None:
                self._db.execute("DELETE FROM batch_intents WHERE token = ?", (token,))
            self._db.execute(
                "INSERT INTO batch_jobs (id, provider, base_url, file, input_file_id, requests,"
                " bytes, status, submitted_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (job_id, provider, base_url, str(file), input_file_id, len(keys), size,
                 "submitted", now, now))
            self._db.executemany(
                "INSERT OR REPLACE INTO batch_requests (key, batch_id, state) "
                "VALUES (?, ?, 'submitted')", [(k, job_id) for k in keys])
            self._db.execute("COMMIT")

    def update(self, job_id: str, status: str, counts: dict[str, int]) -> None:
        with self._lock:
            self._db.execute("UPDATE batch_jobs SET status = ?, counts = ?, updated_at = ? "
                             "WHERE id = ?", (status, json.dumps(counts), time.time(), job_id))

    def settle(self, job_id: str, outcomes: dict[str, tuple[str, str | None]],
               file: Path | None = None) -> None:
        """Record each request's state and reason, and mark the batch collected (its input
        file now ``file``, when given: kept compressed)."""
        with self._lock:
            self._db.execute("BEGIN")
            self._db.executemany(
                "UPDATE batch_requests SET state = ?, reason = ? WHERE key = ? AND batch_id = ?",
                [(state, reason, key, job_id) for key, (state, reason) in outcomes.items()])
            self._db.execute("UPDATE batch_jobs SET collected = 1, updated_at = ?, "
                             "file = coalesce(?, file) WHERE id = ?",
                             (time.time(), None if file is None else str(file), job_id))
            self._db.execute("COMMIT")

    def jobs(self, *, open_only: bool = False) -> list[Job]:
        query = ("SELECT id, provider, base_url, file, requests, bytes, status, counts, "
                 "collected FROM batch_jobs")
        with self._lock:
            rows = self._db.execute(query + (" WHERE collected = 0" if open_only else "") +
                                    " ORDER BY submitted_at, id").fetchall()
        return [Job(r[0], r[1], r[2], r[3], r[4], r[5], r[6], json.loads(r[7]), bool(r[8]))
                for r in rows]

    def keys_of(self, job_id: str) -> list[str]:
        with self._lock:
            rows = self._db.execute("SELECT key FROM batch_requests WHERE batch_id = ?",
                                    (job_id,)).fetchall()
        return [r[0] for r in rows]

    def in_flight(self) -> set[str]:
        """Keys sent in a batch that was not collected yet, or in a batch about to be
        created (not to be sent again)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT r.key FROM batch_requests r JOIN batch_jobs j ON j.id = r.batch_id "
                "WHERE j.collected = 0").fetchall()
            intents = self._db.execute("SELECT keys FROM batch_intents").fetchall()
        return {r[0] for r in rows} | {k for (keys,) in intents for k in json.loads(keys)}

    def attempts(self, key: str) -> int:
        with self._lock:
            row = self._db.execute("SELECT COUNT(*) FROM batch_requests WHERE key = ?",
                                   (key,)).fetchone()
        return int(row[0])

    def states(self, job_id: str | None = None) -> dict[str, int]:
        """How many requests are in each state (of one batch, or of all)."""
        query = "SELECT state, COUNT(*) FROM batch_requests"
        args: tuple[Any, ...] = ()
        if job_id is not None:
            query, args = query + " WHERE batch_id = ?", (job_id,)
        with self._lock:
            rows = self._db.execute(query + " GROUP BY state", args).fetchall()
        return {state: int(count) for state, count in rows}

    def failures(self) -> list[tuple[str, str, str]]:
        """(key, batch id, reason) of every request a batch refused or gave up on."""
        with self._lock:
            rows = self._db.execute(
                "SELECT key, batch_id, reason FROM batch_requests WHERE state IN "
                "('failed', 'given_up') ORDER BY batch_id, key").fetchall()
        return [(r[0], r[1], r[2] or "") for r in rows]

    def close(self) -> None:
        with self._lock:
            self._db.close()
