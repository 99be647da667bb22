"""Freezing's one integrity mechanism, shared by frozen checklists and frozen banks: a
record carries the hash of its content, a lock file beside it records the same hash, and
loading recomputes the hash and compares it with both. Any mismatch is one
:class:`~agentcredit.errors.IntegrityError` naming what differs."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentcredit.errors import InputError, IntegrityError
from agentcredit.hashing import atomic_write


def read_lock(path: Path) -> dict[str, Any]:
    """A lock file's JSON object (empty when there is none); InputError when unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(str(path), f"unreadable lock file: {exc}") from None
    if not isinstance(data, dict):
        raise InputError(str(path), "a lock file must hold a JSON object")
    return data


def write_lock(path: Path, data: dict[str, Any]) -> None:
    """Write a lock file atomically, keys sorted (diffs stay small)."""
    atomic_write(path, json.dumps(dict(sorted(data.items())), indent=2) + "\n")


def edited(actual: str, recorded: str) -> str | None:
    """The problem when a record's content no longer hashes to the hash it records.

    >>> edited("ab" * 32, "cd" * 32)
    'content hash abababababab… does not match the recorded cdcdcdcdcdcd… (edited after freezing)'
    """
    if actual == recorded:
        return None
    return (f"content hash {actual[:12]}… does not match the recorded {recorded[:12]}… "
            "(edited after freezing)")


def unlocked(actual: str, locked: object, lock_name: str, what: str = "") -> str | None:
    """The problem when the lock file records another hash for ``what`` (or none)."""
    subject = f"{what} " if what else ""
    if locked is None:
        return f"{subject}missing from {lock_name}"
    if locked != actual:
        return f"{subject}does not match {lock_name}, which records {str(locked)[:12]}…"
    return None


def verify(where: object, problems: Sequence[str | None]) -> None:
    """Raise IntegrityError naming ``where`` and every problem found, if any."""
    found = [p for p in problems if p]
    if found:
        raise IntegrityError(f"{where}: " + "; ".join(found))
