"""A SQLite cache of model answers, safe for several processes at once.

Keys are sha256 of the canonical JSON (sorted keys, no whitespace) of exactly what
changes the output: provider, model, messages, schema and generation settings. The same
database also holds requests deferred for a batch file (see :mod:`agentcredit.llm.batch`),
and what the client learned of each endpoint (its structured-output mode and window).

Answers are kept by request: the same question has the same answer wherever it was asked.
Failures are kept by request *and endpoint* (base URL, model, window): a definitive failure
(a refused request, an answer that never fit its schema) is replayed only against the
endpoint that gave it, so a restarted server with a larger window is asked again.

A deferred request's body (the whole prompt, tens of KB) is kept zlib-compressed until its
answer arrives, then deleted; a new cache file gives the pages it took back to the disk when
no request is deferred any more (:meth:`ResponseCache.reclaim`), so a file that queued
100,000 requests does not stay the size of all of them.
"""

from __future__ import annotations

import json
import os
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentcredit.db import connect_reader, connect_wal
from agentcredit.hashing import canonical_json, canonical_sha256

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    response TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS failures (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    failure TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS embeddings (
    key TEXT PRIMARY KEY,
    backend TEXT NOT NULL,
    vector TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS pending (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS endpoints (
    endpoint TEXT PRIMARY KEY,
    info TEXT NOT NULL,
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS batch_answers (
    key TEXT PRIMARY KEY,
    created_at REAL NOT NULL
);
"""


def default_cache_path() -> Path:
    """``$AGENTCREDIT_CACHE``, else ``$XDG_CACHE_HOME/agentcredit/responses.sqlite``."""
    explicit = os.environ.get("AGENTCREDIT_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "agentcredit" / "responses.sqlite"


def _packed(body: dict[str, Any]) -> bytes:
    """A deferred request's body as stored: its canonical JSON, zlib-compressed (level 1:
    about a third of the size, for a fraction of a millisecond)."""
    return zlib.compress(canonical_json(body).encode(), 1)


def _unpacked(stored: bytes | str) -> dict[str, Any]:
    """A stored body back (older caches hold the JSON text uncompressed)."""
    text = zlib.decompress(stored) if isinstance(stored, bytes) else stored
    return dict(json.loads(text))


def cache_key(request: dict[str, Any]) -> str:
    """The cache key of a model request: sha256 of its canonical JSON."""
    return canonical_sha256(request)


class ResponseCache:
    """Answers by key. Thread-safe; WAL mode and a busy timeout for concurrent processes."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._db = connect_wal(self.path, _SCHEMA, reclaimable=True)

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored response for a key, or None."""
        with self._lock:
            row = self._db.execute("SELECT response FROM responses WHERE key = ?",
                                   (key,)).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def put(self, key: str, model: str, response: dict[str, Any], *,
            via_batch: bool = False) -> None:
        """Store a response (replacing one that did not validate).

        ``via_batch`` marks an answer imported from a batch results file: a gate repair of
        it is queued for the next batch rather than sent live (see ``from_batch``).
        """
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO responses (key, model, response, created_at) "
                "VALUES (?, ?, ?, ?)", (key, model, canonical_json(response), time.time()))
            if via_batch:
                self._db.execute("INSERT OR REPLACE INTO batch_answers (key, created_at) "
                                 "VALUES (?, ?)", (key, time.time()))
            self._db.execute("DELETE FROM pending WHERE key = ?", (key,))
            self._db.execute("DELETE FROM failures WHERE key = ?", (key,))

    def put_failure(self, key: str, model: str, failure: dict[str, Any]) -> None:
        """Record that a request failed, so that a rerun does not pay for it again."""
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO failures (key, model, failure, created_at) "
                "VALUES (?, ?, ?, ?)", (key, model, canonical_json(failure), time.time()))

    def get_failure(self, key: str) -> dict[str, Any] | None:
        """The recorded failure of a request, or None."""
        with self._lock:
            row = self._db.execute("SELECT failure FROM failures WHERE key = ?",
                                   (key,)).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def get_endpoint(self, endpoint: str) -> dict[str, Any] | None:
        """What an earlier run learned of ``endpoint`` (see ``EndpointInfo``), or None."""
        with self._lock:
            row = self._db.execute("SELECT info FROM endpoints WHERE endpoint = ?",
                                   (endpoint,)).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def put_endpoint(self, endpoint: str, info: dict[str, Any]) -> None:
        """Remember what was learned of ``endpoint``."""
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO endpoints (endpoint, info, updated_at) VALUES (?, ?, ?)",
                (endpoint, canonical_json(info), time.time()))

    def add_pending(self, key: str, model: str, body: dict[str, Any]) -> None:
        """Remember a request to be sent later in a batch file."""
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO pending (key, model, body, created_at) VALUES (?, ?, ?, ?)",
                (key, model, _packed(body), time.time()))

    def from_batch(self, key: str) -> bool:
        """Whether the stored answer of ``key`` came from an imported batch results file."""
        with self._lock:
            row = self._db.execute("SELECT 1 FROM batch_answers WHERE key = ?",
                                   (key,)).fetchone()
        return row is not None

    def pending(self) -> list[tuple[str, str, dict[str, Any]]]:
        """Deferred requests as (key, model, request body), oldest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT key, model, body FROM pending ORDER BY created_at, key").fetchall()
        return [(k, m, _unpacked(b)) for k, m, b in rows]

    def iter_pending(self) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """Deferred requests one row at a time (oldest first), without holding them all:
        a connection of its own reads them, so writers are not held up."""
        reader = connect_reader(self.path)
        try:
            cursor = reader.execute("SELECT key, model, body FROM pending "
                                    "ORDER BY created_at, key")
            for key, model, body in cursor:
                yield key, model, _unpacked(body)
        finally:
            reader.close()

    def drop_pending(self, key: str) -> None:
        """Forget a deferred request (it will not be sent in a batch again)."""
        with self._lock:
            self._db.execute("DELETE FROM pending WHERE key = ?", (key,))

    def pending_models(self) -> list[str]:
        """The models that deferred requests are for."""
        with self._lock:
            rows = self._db.execute("SELECT DISTINCT model FROM pending ORDER BY model")
            return [r[0] for r in rows.fetchall()]

    def pending_count(self) -> int:
        """How many requests are deferred."""
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM pending").fetchone()[0])

    def pending_model(self, key: str) -> str | None:
        """The model of one deferred request (None: not deferred), without its body."""
        with self._lock:
            row = self._db.execute("SELECT model FROM pending WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def reclaim(self) -> int:
        """Give the pages of answered requests back to the disk once no request is deferred;
        the pages freed (0 while requests wait: the next ones reuse them, and in a cache
        file made before auto-vacuum, which keeps its size until a ``VACUUM``)."""
        with self._lock:
            if self._db.execute("SELECT 1 FROM pending LIMIT 1").fetchone() is not None:
                return 0
            free = int(self._db.execute("PRAGMA freelist_count").fetchone()[0])
            if not free or not self._db.execute("PRAGMA auto_vacuum").fetchone()[0]:
                return 0
            self._db.executescript("PRAGMA incremental_vacuum;")  # steps until done
            return free - int(self._db.execute("PRAGMA freelist_count").fetchone()[0])

    def get_embeddings(self, keys: list[str]) -> dict[str, list[float]]:
        """Stored embedding vectors by key (keys without one are absent)."""
        found: dict[str, list[float]] = {}
        with self._lock:
            for start in range(0, len(keys), 500):
                chunk = keys[start:start + 500]
                marks = ",".join("?" * len(chunk))
                for key, vector in self._db.execute(
                        f"SELECT key, vector FROM embeddings WHERE key IN ({marks})", chunk):
                    found[key] = json.loads(vector)
        return found

    def put_embeddings(self, backend: str, vectors: dict[str, list[float]]) -> None:
        """Store embedding vectors by key (one transaction)."""
        now = time.time()
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany(
                    "INSERT OR REPLACE INTO embeddings (key, backend, vector, created_at) "
                    "VALUES (?, ?, ?, ?)",
                    [(k, backend, json.dumps(v), now) for k, v in vectors.items()])
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._db.close()
