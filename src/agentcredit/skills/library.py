"""Skill libraries, not folders: one id per distinct skill, settled before any model call.

Real libraries repeat themselves: several SkillsBench tasks ship a ``docx``, ``pdf`` or
``xlsx`` skill, sometimes byte for byte the same, sometimes different. Importing them into
one bank must neither abort nor pay for rubric requests it will throw away:

- skills with the same content (front matter and body) are one skill whose lineage lists
  every source path;
- skills that share a name but differ get distinct, deterministic ids: the name for the first
  whose folder bears that name (else the first in sorted source order), then the skill's own
  folder name when it differs, then ``name-<the folder holding the skill folder>`` (a
  SkillsBench task name), then a short content hash;
- a skill already in the bank with the same content is kept as it is (re-importing by another
  path is a no-op that says so); one whose id is taken by different content gets a distinct id
  the same way, unless ``force`` asks to replace it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePath

from agentcredit.hashing import canonical_sha256
from agentcredit.schema import Skill
from agentcredit.skills.bank import slug


def content_hash(skill: Skill) -> str:
    """What makes two imported skills the same skill: title, applicability, body, metadata,
    guidance and the folder's other files; not where they came from, nor their id, rubric or
    SKILL.md formatting."""
    return canonical_sha256({"title": skill.title, "applicability": skill.applicability,
                      "body": skill.body, "metadata": skill.metadata,
                      "guidance": [g.model_dump(mode="json") for g in skill.guidance],
                      "files": {k: f.sha256 for k, f in sorted(skill.files.items())
                                if k != "SKILL.md"}})


@dataclass
class Resolution:
    """The skills to import, and what became of every one that was read."""

    skills: list[Skill] = field(default_factory=list)
    table: list[tuple[str, str, str]] = field(default_factory=list)
    """(id, source path, what happened): new, renamed, same as <id>, already in the bank."""
    conflicts: list[str] = field(default_factory=list)
    """Bank ids whose own source file now holds other content (needs ``force``)."""


def resolve_ids(read: Iterable[Skill], existing: Iterable[Skill] = (), *,
                force: bool = False, want_rubrics: bool = False) -> Resolution:
    """Distinct ids for ``read``, merging identical skills (see the module docstring).

    With ``want_rubrics``, a skill already in the bank without a rubric is imported again
    under its bank id, so that it gets one.
    """
    result = Resolution()
    bank = {s.id: s for s in existing}
    bank_by_content = {content_hash(s): s.id for s in bank.values()}
    by_content: dict[str, int] = {}  # content hash -> position in result.skills
    taken = set() if force else set(bank)
    # The skill whose folder bears the wanted name gets it first; then sorted source order.
    ordered = sorted(read, key=lambda s: (_folder(s) != s.id, (s.lineage.sources or ("",))[0]))
    for skill in ordered:
        source = (skill.lineage.sources or ("",))[0]
        digest = content_hash(skill)
        if digest in by_content:
            n = by_content[digest]
            kept = result.skills[n]
            sources = tuple(dict.fromkeys((*kept.lineage.sources, *skill.lineage.sources)))
            result.skills[n] = kept.model_copy(update={"lineage": kept.lineage.model_copy(
                update={"sources": sources})})
            result.table.append((kept.id, source, f"same content as {kept.id}"))
            continue
        if not force and digest in bank_by_content:
            bank_id = bank_by_content[digest]
            if want_rubrics and bank[bank_id].rubric is None:
                by_content[digest] = len(result.skills)
                result.skills.append(skill.model_copy(update={"id": bank_id}))
                result.table.append((bank_id, source, "already in the bank without a rubric: "
                                     "its rubric is asked for"))
            else:
                result.table.append((bank_id, source, "already in the bank: kept as it is"))
            continue
        wanted = skill.id
        if not force and wanted in bank and _same_file(source, bank[wanted]):
            result.conflicts.append(wanted)
            result.table.append((wanted, source, "changed since it was imported from this "
                                 "file: --force replaces it"))
            continue
        new_id = _free_id(wanted, source, digest, taken)
        taken.add(new_id)
        by_content[digest] = len(result.skills)
        result.skills.append(skill if new_id == wanted else skill.model_copy(
            update={"id": new_id}))
        how = "new" if new_id == wanted else f"renamed: {wanted!r} is another skill"
        if force and wanted in bank and new_id == wanted:
            how = "replaces the bank's skill of that id"
        result.table.append((new_id, source, how))
    return result


def _same_file(source: str, skill: Skill) -> bool:
    """Whether ``source`` is one of the files ``skill`` was imported from."""
    here = Path(source).resolve()
    return any(Path(s).resolve() == here for s in skill.lineage.sources)


def _folder(skill: Skill) -> str:
    """The slug of the folder a skill was imported from ('' for other sources)."""
    sources = skill.lineage.sources
    parts = PurePath(sources[0]).parts if sources else ()
    return slug(parts[-2]) if len(parts) >= 2 and parts[-1] == "SKILL.md" else ""


def _free_id(wanted: str, source: str, digest: str, taken: set[str]) -> str:
    """``wanted``, else the skill's own folder name (an exported bank names folders by id,
    so a round trip keeps ids), else ``wanted-<owner folder>``, else a content hash."""
    if wanted not in taken:
        return wanted
    parts = PurePath(source).parts
    owner = slug(parts[-3]) if len(parts) >= 3 else ""
    folder = slug(parts[-2]) if len(parts) >= 2 and parts[-1] == "SKILL.md" else ""
    for candidate in (folder if folder != wanted else "",
                      f"{wanted}-{owner}" if owner else "", f"{wanted}-{digest[:6]}"):
        if candidate and candidate not in taken:
            return candidate[:128]
    n = 2
    while f"{wanted}-{digest[:6]}-{n}" in taken:
        n += 1
    return f"{wanted}-{digest[:6]}-{n}"
