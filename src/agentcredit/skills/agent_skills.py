"""Agent Skills folders (``SKILL.md``) and SkillRL-style JSON, both ways.

``SKILL.md`` is YAML front matter between two ``---`` lines (``name``, ``description``,
optional others) followed by a markdown body. Import: description -> applicability, body ->
guidance kept byte for byte (the actor view); the rubric is derived later (or not at all).
Export writes front matter ``name`` (the skill id, an Agent Skills name) and
``description`` (the applicability), then the guidance as the body: never the rubric or
the lineage, which are for evaluators only.

SkillRL-style JSON holds ``{"skill_id", "title", "principle", "when_to_apply"}`` objects,
either as a list or under ``general_skills`` / ``task_specific_skills`` / ``skills``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from agentcredit.errors import InputError
from agentcredit.formats.structured import parse_yaml
from agentcredit.redact import redact_text
from agentcredit.safe_io import check_confined, confined_to, read_text
from agentcredit.schema import Lineage, Skill
from agentcredit.schema.skill import SkillFile
from agentcredit.skills.bank import slug

SKILL_FILE = "SKILL.md"
_FRONT = re.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)


@dataclass
class ImportResult:
    """Skills read, and every input that could not be read (path, reason)."""

    skills: list[Skill] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)


def parse_skill_md(text: str, where: str, default_name: str) -> Skill:
    """A rubric-less skill from the text of a SKILL.md; InputError when it is unusable."""
    match = _FRONT.match(text)
    if match is None:
        raise InputError(where, "no YAML front matter (a SKILL.md starts with a '---' line)")
    front = parse_yaml(match.group(1), where, "front matter")
    if not isinstance(front, dict):
        raise InputError(where, "front matter is not a mapping")
    description = front.get("description")
    if not isinstance(description, str) or not description.strip():
        raise InputError(where, "front matter has no description (it becomes the "
                         "applicability text used for retrieval)")
    name = front.get("name")
    name = name.strip() if isinstance(name, str) and name.strip() else default_name
    extra = {str(k): _plain(v) for k, v in front.items() if k not in {"name", "description"}}
    return Skill(id=slug(name), title=name, applicability=description.strip(),
                 body=text[match.end():], rubric=None, metadata=extra,
                 lineage=Lineage(stage="import", sources=(where,)))


def _plain(value: Any) -> Any:
    """Front-matter values as JSON-ready data (dates and other YAML types as text)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def skill_md_paths(path: Path) -> Iterator[Path]:
    """SKILL.md files at, or anywhere under, ``path``."""
    if path.is_file():
        yield path
    elif path.is_dir():
        yield from sorted(p for p in path.rglob(SKILL_FILE) if p.is_file())


def import_paths(paths: list[Path]) -> ImportResult:
    """Skills from SKILL.md folders (any depth) and SkillRL-style JSON files; every file
    read must lie inside the paths given (a link out of them is reported, not read)."""
    with confined_to(paths):
        return _import_paths(paths)


def _import_paths(paths: list[Path]) -> ImportResult:
    result = ImportResult()
    for path in paths:
        if not path.exists():
            result.errors.append((str(path), "no such file or folder"))
            continue
        found = False
        for file in ([path] if path.is_file() else list(skill_md_paths(path))):
            found = True
            try:
                text = redact_text(read_text(file))  # a key planted in a skill stays out
                if file.suffix == ".json":
                    result.skills += parse_skillrl(text, str(file))
                else:
                    skill = parse_skill_md(text, str(file), file.parent.name)
                    files, skipped = folder_manifest(file.parent)
                    result.errors += skipped
                    result.skills.append(skill.model_copy(update={"files": files}))
            except InputError as exc:
                result.errors.append((exc.path, exc.reason))
        if not found:
            result.errors.append((str(path), f"no {SKILL_FILE} found"))
    return result


FILES_DIR = "files"
"""Where a bank keeps its imported skills' folders: ``BANK/files/<id>/``."""
MAX_SKILL_FILE = 16 * 1024 * 1024
"""Largest file kept with an imported skill; bigger ones are reported and left out."""


def folder_manifest(folder: Path) -> tuple[dict[str, SkillFile], list[tuple[str, str]]]:
    """Every regular file of a skill folder (not inside a nested skill folder, not a
    symlink), by relative path, with its sha256 and permission bits; and what was left out."""
    files: dict[str, SkillFile] = {}
    skipped: list[tuple[str, str]] = []
    nested = {p.parent for p in folder.rglob(SKILL_FILE) if p.parent != folder}
    for path in sorted(folder.rglob("*")):
        if path.is_symlink() or not path.is_file() or "__pycache__" in path.parts or \
                any(n in path.parents for n in nested):
            continue
        info = path.stat()
        if info.st_size > MAX_SKILL_FILE:
            skipped.append((str(path), f"{info.st_size} bytes, over the "
                            f"{MAX_SKILL_FILE >> 20} MiB limit for a skill file: left out"))
            continue
        try:
            check_confined(path)  # under a linked folder: resolves outside the input
        except InputError as exc:
            skipped.append((exc.path, exc.reason))
            continue
        data = redacted_bytes(path.read_bytes())
        files[path.relative_to(folder).as_posix()] = SkillFile(
            sha256=hashlib.sha256(data).hexdigest(), mode=stat.S_IMODE(info.st_mode),
            size=len(data))
    return files, skipped


def store_files(skill: Skill, source: Path, root: Path) -> None:
    """Copy a skill's files from its source folder into ``root/<id>/`` (checked by hash),
    replacing whatever an earlier skill of that id left there."""
    shutil.rmtree(inside(root, skill.id), ignore_errors=True)
    for rel, ref in skill.files.items():
        data = redacted_bytes((source / rel).read_bytes())
        if hashlib.sha256(data).hexdigest() != ref.sha256:
            raise InputError(str(source / rel), "changed while it was being imported")
        target = safe_join(inside(root, skill.id), rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def redacted_bytes(data: bytes) -> bytes:
    """A skill file as the bank keeps it: text with every secret redacted (the one
    redaction); binary content as it is."""
    try:
        text = data.decode("utf-8") if b"\x00" not in data else None
    except UnicodeDecodeError:
        text = None
    return data if text is None else redact_text(text).encode("utf-8")


def safe_join(root: Path, rel: str) -> Path:
    """``root / rel`` for a relative POSIX path that stays inside ``root`` (ValueError)."""
    parts = rel.split("/")
    if not rel or rel.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"{rel!r} is not a safe relative path")
    return root.joinpath(*parts)


def inside(root: Path, name: str) -> Path:
    """``root / name``, proven to stay inside ``root`` (ValueError otherwise).

    >>> inside(Path("/out"), "pdf").as_posix()
    '/out/pdf'
    >>> inside(Path("/out"), "../../etc")
    Traceback (most recent call last):
    ...
    ValueError: '../../etc' would be written outside /out
    """
    base = root.resolve()
    target = (base / name).resolve()
    if target.parent != base or not name or name in (".", ".."):
        raise ValueError(f"{name!r} would be written outside {root}")
    return root / name


def export_skill_md(skills: list[Skill], out: Path, files_root: Path | None = None
                    ) -> list[Path]:
    """One ``<id>/`` folder per skill: an imported skill's whole folder byte for byte (every
    file, modes kept) from ``files_root/<id>/``; otherwise (or when its guidance changed since
    it was imported) a ``SKILL.md`` whose body is the guidance, byte for byte."""
    written: list[Path] = []
    for skill in skills:
        if skill.files and files_root is not None and \
                _copy_folder(skill, files_root, inside(out, skill.id)):
            written.append(inside(out, skill.id) / SKILL_FILE)
            continue  # its SKILL.md was copied verbatim too
        front: dict[str, Any] = {"name": skill.id, "description": skill.applicability}
        front.update(skill.metadata)
        header = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=1_000_000)
        folder = inside(out, skill.id)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / SKILL_FILE
        with path.open("w", encoding="utf-8", newline="") as handle:
            handle.write(redact_text(f"---\n{header}---\n{skill.guidance_text()}"))
        written.append(path)
    return written


def _copy_folder(skill: Skill, files_root: Path, folder: Path) -> bool:
    """Write the skill's stored files into ``folder``, modes kept; True when its SKILL.md was
    among them, False when the skill was revised since import (its SKILL.md is then left to
    be written from the skill as it is now)."""
    source = inside(files_root, skill.id)
    original = source / SKILL_FILE
    verbatim = SKILL_FILE in skill.files
    if verbatim:
        stored = parse_skill_md(read_text(original), str(original), skill.id)
        verbatim = (stored.applicability, stored.body, stored.metadata) == \
            (skill.applicability, skill.guidance_text(), skill.metadata)
    for rel, ref in skill.files.items():
        if rel == SKILL_FILE and not verbatim:
            continue
        data = safe_join(source, rel).read_bytes()
        if hashlib.sha256(data).hexdigest() != ref.sha256:
            raise InputError(str(safe_join(source, rel)), "does not match the bank's record "
                             "of it (edited after import)")
        target = safe_join(folder, rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(redacted_bytes(data))  # also a bank imported before redaction
        os.chmod(target, ref.mode)
    return verbatim


def to_skillrl(skills: list[Skill]) -> dict[str, Any]:
    """SkillRL-style JSON: every skill under ``general_skills``."""
    return {"general_skills": [{"skill_id": s.id, "title": s.title,
                                "principle": s.guidance_text(),
                                "when_to_apply": s.applicability} for s in skills],
            "task_specific_skills": {}}


def parse_skillrl(text: str, where: str) -> list[Skill]:
    """Skills from SkillRL-style JSON (principle -> verbatim guidance body)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(where, f"malformed JSON: {exc.msg} at line {exc.lineno}") from None
    entries = list(_skillrl_entries(data))
    if not entries:
        raise InputError(where, "no SkillRL skills (objects with skill_id/title/principle/"
                         "when_to_apply)")
    skills = []
    for n, entry in enumerate(entries):
        principle, when = entry.get("principle"), entry.get("when_to_apply")
        if not isinstance(principle, str) or not isinstance(when, str) or not when.strip():
            raise InputError(where, f"skill {n + 1} lacks a principle or when_to_apply text")
        title = str(entry.get("title") or entry.get("skill_id") or f"skill-{n + 1}")
        skills.append(Skill(id=slug(str(entry.get("skill_id") or title)), title=title,
                            applicability=when.strip(), body=principle, rubric=None,
                            lineage=Lineage(stage="import", sources=(where,))))
    return skills


def _skillrl_entries(data: Any) -> Iterator[dict[str, Any]]:
    if isinstance(data, list):
        yield from (d for d in data if isinstance(d, dict))
    elif isinstance(data, dict):
        for key in ("general_skills", "skills", "task_specific_skills"):
            value = data.get(key)
            if isinstance(value, dict):
                for group in value.values():
                    yield from _skillrl_entries(group)
            elif isinstance(value, list):
                yield from _skillrl_entries(value)
