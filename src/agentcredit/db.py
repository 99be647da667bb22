"""The one way a SQLite file of agentcredit is opened: the run store, the unit store and the
response cache all share it (WAL, a busy timeout, autocommit, usable from several threads
and processes), and a file that is not a usable database is one clear StoreError."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from agentcredit.errors import open_sqlite_error

BUSY_TIMEOUT_S = 30.0


def connect_wal(path: Path, schema: str, *, reclaimable: bool = False) -> sqlite3.Connection:
    """A connection to ``path`` (its folder created) with ``schema`` applied.

    WAL lets readers go on while one process writes; ``synchronous=NORMAL`` keeps every
    committed row across a crash of the process (WAL's guarantee) at a fraction of the
    fsyncs; the busy timeout makes concurrent writers wait instead of failing.
    ``reclaimable``: a new file is made with incremental auto-vacuum, so that its owner can
    give freed pages back to the disk (``PRAGMA incremental_vacuum``) — for a file whose
    rows come and go in bulk (the response cache's queued requests).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     db = connect_wal(Path(tmp) / "x.sqlite", "CREATE TABLE IF NOT EXISTS t (a)")
    ...     db.execute("PRAGMA journal_mode").fetchone()[0]
    'wal'
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, check_same_thread=False,
                             isolation_level=None)
        if reclaimable:  # before WAL: only a new, empty file takes it
            db.execute("PRAGMA auto_vacuum=INCREMENTAL")
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
        db.executescript(schema)
    except sqlite3.DatabaseError as exc:
        if (path.is_file() and not os.access(path.parent, os.W_OK)) or _read_only(exc):
            return connect_read_only(path)
        raise open_sqlite_error(path, exc) from None
    return db


def _read_only(exc: sqlite3.DatabaseError) -> bool:
    text = str(exc).lower()
    return "readonly" in text or "read-only" in text


def connect_read_only(path: Path) -> sqlite3.Connection:
    """A connection that only reads ``path``: a finished run on a folder this process cannot
    write (a read-only mount, another user's files). Writes through it fail with
    "attempt to write a readonly database", which a command reports as one line."""
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True,
                             timeout=BUSY_TIMEOUT_S, check_same_thread=False,
                             isolation_level=None)
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        raise open_sqlite_error(path, exc) from None
    return db


def connect_reader(path: Path) -> sqlite3.Connection:
    """A second connection for a long read (rows streamed while writers go on)."""
    return sqlite3.connect(path, timeout=BUSY_TIMEOUT_S)


MOUNTS = Path("/proc/mounts")
NETWORK_FILESYSTEMS = frozenset({
    "nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "afs", "ceph", "glusterfs", "lustre", "gpfs",
    "beegfs", "ocfs2", "gfs2", "fuse.sshfs", "fuse.glusterfs", "fuse.s3fs", "fuse.gcsfuse",
    "fuse.cephfs", "fuse.juicefs"})
"""Filesystems shared over a network: SQLite's WAL mode needs memory shared by every
process that opens the file, which they do not give to processes on other machines."""


def network_filesystem(path: Path) -> str | None:
    """The type of the network filesystem ``path`` is on (None: a local one, or unknown:
    no :data:`MOUNTS` table)."""
    try:
        mounts = MOUNTS.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    target, best, kind = path.resolve(), "", ""
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) >= 3:
            point = fields[1].replace("\\040", " ")
            if (target == Path(point) or Path(point) in target.parents) and \
                    len(point) >= len(best):
                best, kind = point, fields[2]
    return kind if kind in NETWORK_FILESYSTEMS else None
