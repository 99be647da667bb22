"""Freezing and loading a SkillBank: ``BANK/bank.json`` plus ``BANK/bank.lock``.

The bank's ``hash`` is the sha256 of the canonical JSON of its skills (and benchmark);
``bank.lock`` records that hash and each skill's own hash. :func:`load_bank` refuses a bank
whose content no longer matches either, through the same mechanism as frozen checklists
(:mod:`agentcredit.integrity`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agentcredit.errors import ConfigError, InputError, Missing
from agentcredit.hashing import atomic_write, canonical_sha256
from agentcredit.integrity import edited, read_lock, unlocked, verify, write_lock
from agentcredit.safe_io import confined_to, read_bytes
from agentcredit.schema import Skill, SkillBank
from agentcredit.schema.base import first_error

BANK_NAME = "bank.json"
LOCK_NAME = "bank.lock"


def skill_hash(skill: Skill) -> str:
    """sha256 of the canonical JSON of one skill."""
    return canonical_sha256(skill.model_dump(mode="json"))


def bank_hash(skills: Iterable[Skill], benchmark: str | None) -> str:
    """sha256 of the canonical JSON of the skills (sorted by id) and the benchmark."""
    ordered = sorted(skills, key=lambda s: s.id)
    return canonical_sha256({"benchmark": benchmark, "skills": [s.model_dump(mode="json")
                                                         for s in ordered]})


def make_bank(skills: Iterable[Skill], *, benchmark: str | None, embedding: str,
              rules_version: str, prompt_version: str, synthesizer: str | None = None,
              tau: float | None = None) -> SkillBank:
    """A bank record with its hash and creation time (skills ordered by id)."""
    ordered = tuple(sorted(skills, key=lambda s: s.id))
    ids = [s.id for s in ordered]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ConfigError(f"duplicate skill ids in a bank: {', '.join(duplicates)}")
    return SkillBank(skills=ordered, benchmark=benchmark, embedding=embedding,
                     rules_version=rules_version, prompt_version=prompt_version,
                     synthesizer=synthesizer, tau=tau,
                     created_at=datetime.now(UTC).isoformat(timespec="seconds"),
                     hash=bank_hash(ordered, benchmark))


def freeze_bank(bank: SkillBank, directory: Path | str) -> Path:
    """Write ``bank.json`` and ``bank.lock`` (each atomically)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / BANK_NAME
    atomic_write(path, bank.model_dump_json(indent=2) + "\n")
    write_lock(directory / LOCK_NAME, {"hash": bank.hash,
                                       "skills": {s.id: skill_hash(s) for s in bank.skills}})
    return path


MAX_BANK_BYTES = 256 * 1024 * 1024
"""Largest ``bank.json`` read (a bank of thousands of skills is a few MB)."""


def read_bank(directory: Path | str) -> SkillBank:
    """Parse ``bank.json`` without checking integrity (see load_bank)."""
    directory = Path(directory)
    path = directory / BANK_NAME if directory.is_dir() else directory
    try:
        with confined_to([path.parent]):
            data = read_bytes(path, MAX_BANK_BYTES)
        return SkillBank.model_validate_json(data)
    except Missing:
        raise InputError(str(path), "no bank here (build one with `agentcredit skills build` "
                         "or `skills import`)") from None
    except ValidationError as exc:
        raise InputError(str(path), f"not a skill bank: {first_error(exc)}") from None


def integrity_problems(bank: SkillBank, directory: Path | str) -> list[str]:
    """Hash and lock mismatches of a frozen bank (empty when it is intact)."""
    directory = Path(directory)
    actual = bank_hash(bank.skills, bank.benchmark)
    lock = read_lock(directory / LOCK_NAME)
    skills = lock.get("skills")
    locked: dict[str, Any] = skills if isinstance(skills, dict) else {}
    found = [edited(actual, bank.hash), unlocked(actual, lock.get("hash"), LOCK_NAME, "the bank"),
             *(unlocked(skill_hash(s), locked.get(s.id), LOCK_NAME, f"skill {s.id}")
               for s in bank.skills)]
    return [p for p in found if p]


def load_bank(directory: Path | str) -> SkillBank:
    """A frozen bank whose hash and lock match; IntegrityError otherwise."""
    directory = Path(directory)
    directory = directory if directory.is_dir() or not directory.name.endswith(".json") \
        else directory.parent
    bank = read_bank(directory)
    verify(directory, integrity_problems(bank, directory))
    return bank


def slug(text: str, limit: int = 64) -> str:
    """An Agent Skills style name: lower-case letters, digits and single hyphens.

    >>> slug("Filter Log Lines by Level (v2)!")
    'filter-log-lines-by-level-v2'
    """
    value = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return value[:limit].rstrip("-") or "skill"


def unique_ids(wanted: Iterable[str], taken: Iterable[str] = ()) -> list[str]:
    """The wanted ids, with -2, -3, ... appended where one is already taken.

    >>> unique_ids(["a", "b", "a"], taken=["b"])
    ['a', 'b-2', 'a-2']
    """
    used = set(taken)
    out: list[str] = []
    for base in wanted:
        candidate, n = base, 1
        while candidate in used:
            n += 1
            candidate = f"{base}-{n}"
        used.add(candidate)
        out.append(candidate)
    return out
