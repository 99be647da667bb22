"""Freezing checklists: one JSON file per task plus a lock file of hashes.

``DIR/<task_id>.json`` holds the checklist; ``DIR/checklists.lock`` maps every task id to its
checklist hash. A frozen checklist is never overwritten without ``force``, and
:func:`load_checklist` refuses one whose content no longer matches its hash or the lock.
"""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agentcredit.checklists.gates import HASH, LOCK
from agentcredit.checklists.rules import Rules
from agentcredit.errors import AlreadyFrozenError, InputError
from agentcredit.hashing import atomic_write
from agentcredit.integrity import edited, unlocked, verify, write_lock
from agentcredit.integrity import read_lock as lock_file
from agentcredit.schema import Checklist, ChecklistItem, RulesRef, Waiver
from agentcredit.schema.base import first_error
from agentcredit.schema.checklist import checklist_hash
from agentcredit.schema.outcomes import GateFailure

LOCK_NAME = "checklists.lock"


def file_name(task_id: str) -> str:
    """A safe file name for a task id: path separators replaced, control characters and
    undecodable bytes made visible, and ids too long for a file system shortened (their
    head, then a hash of the whole id, so two long ids never share a file).

    >>> file_name("sub/t1.1-of-5")
    'sub__t1.1-of-5.json'
    >>> len(file_name("x" * 300).encode()), file_name("x" * 300)[-18:]
    (168, '~0d4e2ca9e9cb.json')
    """
    name = task_id.replace("/", "__").replace("\\", "__")
    name = _UNSAFE.sub("_", name.encode("utf-8", "surrogateescape").decode("utf-8", "replace"))
    if len(name.encode()) > _MAX_NAME_BYTES:
        digest = hashlib.sha256(task_id.encode("utf-8", "surrogateescape")).hexdigest()[:12]
        head = name.encode()[:_MAX_NAME_BYTES - 30].decode("utf-8", "ignore")
        name = f"{head}~{digest}"
    return name + ".json"


_UNSAFE = re.compile(r"[\x00-\x1f\x7f\ufffd]")
_MAX_NAME_BYTES = 180  # file systems allow 255 bytes; room for suffixes and temp names


def make_checklist(task_id: str, items: list[ChecklistItem], waivers: list[Waiver],
                   rules: Rules, *, synthesizer: str, prompt_version: str) -> Checklist:
    """A checklist record with its hash and creation time."""
    return Checklist(
        task_id=task_id, items=tuple(items), waivers=tuple(waivers),
        rules=RulesRef(**rules.ref()), synthesizer=synthesizer, prompt_version=prompt_version,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        hash=checklist_hash(task_id, items))


def freeze(checklist: Checklist, directory: Path | str, *, force: bool = False) -> Path:
    """Write a checklist and record its hash in the lock file (atomically)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / file_name(checklist.task_id)
    if path.exists() and not force:
        raise AlreadyFrozenError(f"{path} is already frozen; use --force to rebuild it")
    atomic_write(path, checklist.model_dump_json(indent=2) + "\n")
    lock = read_lock(directory)
    lock[checklist.task_id] = checklist.hash
    write_lock(directory / LOCK_NAME, dict(lock))
    return path


def read_lock(directory: Path) -> dict[str, str]:
    """The lock file's task id -> hash map (empty when there is none)."""
    return {str(k): str(v) for k, v in lock_file(directory / LOCK_NAME).items()}


def read_checklist(path: Path) -> Checklist:
    """Parse a checklist file without checking its integrity (see load_checklist)."""
    try:
        return Checklist.model_validate_json(path.read_bytes())
    except OSError as exc:
        raise InputError(str(path), f"cannot read: {exc.strerror or exc}") from None
    except ValidationError as exc:
        raise InputError(str(path), f"not a checklist: {first_error(exc)}") from None


def integrity_failures(checklist: Checklist, lock: dict[str, str]) -> list[GateFailure]:
    """Hash and lock problems of a frozen checklist."""
    actual = checklist_hash(checklist.task_id, checklist.items)
    found = [(HASH, edited(actual, checklist.hash)),
             (LOCK, unlocked(actual, lock.get(checklist.task_id), LOCK_NAME, "the task"))]
    return [GateFailure(code, None, message) for code, message in found if message]


def load_checklist(path: Path | str) -> Checklist:
    """A frozen checklist whose hash and lock entry match; IntegrityError otherwise."""
    path = Path(path)
    checklist = read_checklist(path)
    verify(path, [f.message for f in integrity_failures(checklist, read_lock(path.parent))])
    return checklist


def load_checklists(directory: Path | str) -> dict[str, Checklist]:
    """Every frozen checklist of a directory, by task id (integrity checked)."""
    directory = Path(directory)
    found: dict[str, Checklist] = {}
    for path in sorted(directory.glob("*.json")):
        checklist = load_checklist(path)
        found[checklist.task_id] = checklist
    return found


def as_dict(checklist: Checklist) -> dict[str, Any]:
    """The checklist as plain JSON-ready data."""
    return checklist.model_dump(mode="json")
