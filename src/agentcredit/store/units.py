"""The unit store: resumable units of work keyed by content hash, in one SQLite file (WAL).

A unit's output is written in its own transaction the moment it is known, keyed by the
stage, the unit and a hash of the unit's inputs; a killed job therefore resumes without
asking the model again for anything finished, and changed inputs are asked for afresh.
The SkillBank build (``BANK/build.sqlite``) and co-evolution (``BANK/evolve/evolve.sqlite``)
keep their units here; the GCPC run store (:mod:`agentcredit.store.run_store`) keeps judged
trials.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from agentcredit.db import connect_wal

STORE_NAME = "build.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS units (
    stage TEXT NOT NULL, unit TEXT NOT NULL, input_key TEXT NOT NULL, status TEXT NOT NULL,
    output TEXT NOT NULL, at REAL NOT NULL, PRIMARY KEY (stage, unit));
CREATE TABLE IF NOT EXISTS errors (
    id INTEGER PRIMARY KEY AUTOINCREMENT, stage TEXT NOT NULL, unit TEXT NOT NULL,
    message TEXT NOT NULL, at REAL NOT NULL);
"""


class UnitStore:
    """Typed access to a unit store's SQLite file."""

    def __init__(self, directory: Path, name: str = STORE_NAME) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / name
        self.db = connect_wal(self.path, _SCHEMA)

    def close(self) -> None:
        self.db.close()

    def get(self, stage: str, unit: str, input_key: str) -> tuple[str, Any] | None:
        """(status, output) of a finished unit whose inputs are unchanged, else None."""
        row = self.db.execute("SELECT input_key, status, output FROM units WHERE stage = ? "
                              "AND unit = ?", (stage, unit)).fetchone()
        if row is None or row[0] != input_key:
            return None
        return row[1], json.loads(row[2])

    def put(self, stage: str, unit: str, input_key: str, status: str, output: Any) -> None:
        """Record a finished unit (``done`` or ``rejected``)."""
        self.db.execute("INSERT OR REPLACE INTO units (stage, unit, input_key, status, output,"
                        " at) VALUES (?, ?, ?, ?, ?, ?)",
                        (stage, unit, input_key, status, json.dumps(output), time.time()))

    def error(self, stage: str, unit: str, message: str) -> None:
        self.db.execute("INSERT INTO errors (stage, unit, message, at) VALUES (?, ?, ?, ?)",
                        (stage, unit, message, time.time()))

    def counts(self) -> dict[str, int]:
        """Finished units per stage."""
        return {stage: int(n) for stage, n in
                self.db.execute("SELECT stage, COUNT(*) FROM units GROUP BY stage")}
