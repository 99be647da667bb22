"""Retrieval: rank a bank's skills for each task.

The task side is the task instruction. The skill side: for the default ranker (``lexical``),
its name, applicability text and body, each a BM25 field (:func:`skill_fields`); for
``bm25``, its name and applicability text; for embedding models, its applicability text
(cosine similarity). Never its rubric. Lexical weights
(TF-IDF, BM25) come from the bank alone, so a task's ranking never depends on which other
tasks are asked in the same call. Top-1 is the paper's choice; ``k`` gives more. Ties are
broken by skill id, so a ranking is deterministic.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

import numpy as np

from agentcredit.schema import Skill, SkillBank, Task
from agentcredit.skills.embed import Embedder, cosine_matrix


@dataclass(frozen=True)
class Match:
    """One ranked skill and its cosine similarity to the task."""

    skill_id: str
    score: float


@dataclass(frozen=True)
class Retrieval:
    """The ranked skills of one task, best first."""

    task_id: str
    matches: tuple[Match, ...]

    @property
    def best(self) -> Match | None:
        return self.matches[0] if self.matches else None


def _document(skill: Skill, kind: str) -> str:
    """The skill side of retrieval: its applicability text, or (BM25) its name and it."""
    if kind == "title+applicability":
        return f"{skill.title.replace('-', ' ')} {skill.applicability}"
    return skill.applicability


def skill_fields(skills: Sequence[Skill]) -> dict[str, list[str]]:
    """The fields a field-aware ranker reads: name, applicability text, and body (a
    SKILL.md's own text, else the guidance stages' names and actions; never the rubric)."""
    return {"title": [s.title.replace("-", " ") for s in skills],
            "applicability": [s.applicability for s in skills],
            "body": [s.body if s.body else " ".join(f"{g.name}. {g.action}" for g in s.guidance)
                     for s in skills]}


def top_k(similarity: np.ndarray, skill_ids: Sequence[str], k: int) -> list[tuple[Match, ...]]:
    """Per row, the ``k`` best columns by score (ties: smaller skill id first).

    >>> sims = np.array([[0.2, 0.9, 0.9], [0.5, 0.1, 0.0]])
    >>> [[(m.skill_id, m.score) for m in row] for row in top_k(sims, ["c", "b", "a"], 2)]
    [[('a', 0.9), ('b', 0.9)], [('c', 0.5), ('b', 0.1)]]
    """
    if similarity.size == 0:
        return [() for _ in range(similarity.shape[0])]
    k = max(1, min(k, similarity.shape[1]))
    names = np.asarray(skill_ids)
    name_rank = np.argsort(np.argsort(names, kind="stable"), kind="stable")
    out: list[tuple[Match, ...]] = []
    for row in similarity:
        if k < len(row):
            threshold = np.partition(row, len(row) - k)[len(row) - k]
            candidates = np.flatnonzero(row >= threshold)
        else:
            candidates = np.arange(len(row))
        order = sorted(candidates, key=lambda j: (-row[j], name_rank[j]))[:k]
        out.append(tuple(Match(str(names[j]), round(float(row[j]), 6)) for j in order))
    return out


RETRIEVAL_FLOOR: dict[str, float] = {"lexical": 35.0}
"""Per ranker, the top-1 score below which a task has no skill (``no_skill``) rather than
the nearest unrelated one. Measured on the corpus (``benchmarks/retrieval_floor.py``, one
bank of its 142 skills): 35 keeps 90% of the tasks whose top-1 is their own skill, and turns
away 67% of the tasks asked without their own skills and 90% of Terminal-Bench tasks."""
FLOOR_MIN_SKILLS = 50
"""BM25 scores follow the bank's statistics: the measured floor holds for banks of this many
skills or more; a smaller bank has none unless one is given."""


def floor_of(embed: str, floor: float | None = None, skills: int = FLOOR_MIN_SKILLS) -> float:
    """``floor`` when given, else the measured floor of the ranker for a bank of ``skills``
    skills (0: none).

    >>> floor_of("lexical"), floor_of("lexical", skills=3), floor_of("minilm", 0.2)
    (35.0, 0.0, 0.2)
    """
    if floor is not None:
        return floor
    return RETRIEVAL_FLOOR.get(embed, 0.0) if skills >= FLOOR_MIN_SKILLS else 0.0


async def retrieve(bank: SkillBank, tasks: Sequence[Task], embedder: Embedder, *,
                   k: int = 1) -> list[Retrieval]:
    """The ``k`` best skills of ``bank`` for each task."""
    skills = list(bank.skills)
    if not skills or not tasks:
        return [Retrieval(t.id, ()) for t in tasks]
    queries = [t.instruction for t in tasks]
    parts = getattr(embedder, "parts", None)
    if parts:  # reciprocal-rank fusion of the parts' rankings
        similarity = sum([reciprocal_ranks(await _similarity(part, skills, queries))
                          for part in parts])
    else:
        similarity = await _similarity(embedder, skills, queries)
    ranked = top_k(np.asarray(similarity), [s.id for s in skills], k)
    return [Retrieval(t.id, r) for t, r in zip(tasks, ranked, strict=True)]


async def _similarity(embedder: Embedder, skills: list[Skill], queries: list[str]
                      ) -> np.ndarray:
    """Scores (queries x skills) under one ranker; its weights come from the bank alone, so a
    task's ranking never depends on the other tasks asked with it."""
    rank_fields = getattr(embedder, "rank_fields", None)
    if rank_fields is not None:  # field-aware
        return np.asarray(rank_fields(skill_fields(skills), queries))
    documents = [_document(s, getattr(embedder, "document", "applicability")) for s in skills]
    rank = getattr(embedder, "rank", None)
    if rank is not None:
        return np.asarray(await rank(documents, queries))
    vectors = await embedder.embed(documents + queries)  # per text: independent
    return cosine_matrix(vectors[len(skills):], vectors[:len(skills)])


RRF_K = 60
"""The constant of reciprocal-rank fusion (Cormack et al.'s 60)."""


def reciprocal_ranks(similarity: np.ndarray) -> np.ndarray:
    """Each score replaced by ``1 / (RRF_K + rank)`` within its row (rank 1 = best; equal
    scores share the better rank).

    >>> reciprocal_ranks(np.array([[0.1, 0.9, 0.9]])).round(4).tolist()
    [[0.0159, 0.0164, 0.0164]]
    """
    out = np.empty_like(similarity, dtype=np.float64)
    for n, row in enumerate(similarity):
        ranks = (row[None, :] > row[:, None]).sum(axis=1) + 1  # competition ranking
        out[n] = 1.0 / (RRF_K + ranks)
    return out


def expected_from_lineage(bank: SkillBank) -> dict[str, set[str]]:
    """Task -> skills it ships, from where each skill was imported (``<task>/<skill>/SKILL.md``,
    the SkillsBench layout): the relevant set for evaluating retrieval on such a library."""
    expected: dict[str, set[str]] = {}
    for skill in bank.skills:
        for source in skill.lineage.sources:
            parts = PurePath(source).parts
            if len(parts) >= 3 and parts[-1] == "SKILL.md":
                expected.setdefault(parts[-3], set()).add(skill.id)
    return expected


def read_expected(path: Path) -> dict[str, set[str]]:
    """Task -> relevant skill ids from JSON (``{"task": ["skill", ...]}``) or CSV
    (``task_id,skill_id`` rows; a header row is skipped)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        raw = json.loads(text)
        if not isinstance(raw, dict):
            raise ValueError(f"{path}: expected an object of task id -> list of skill ids")
        return {str(k): {str(v) for v in (vs if isinstance(vs, list) else [vs])}
                for k, vs in raw.items()}
    expected: dict[str, set[str]] = {}
    for row in csv.reader(text.splitlines()):
        if len(row) >= 2 and row[0].strip() and row[0].strip() != "task_id":
            expected.setdefault(row[0].strip(), set()).add(row[1].strip())
    return expected


def hit_rates(results: Sequence[Retrieval], expected: dict[str, set[str]]) -> dict[str, Any]:
    """Top-1 and top-3 hit rates over the tasks that have an expected set.

    >>> r = [Retrieval("t1", (Match("a", 0.9), Match("b", 0.5))),
    ...      Retrieval("t2", (Match("c", 1),))]
    >>> hit_rates(r, {"t1": {"b"}, "t2": {"c"}, "t3": {"x"}})
    {'tasks': 2, 'top1': 0.5, 'top3': 1.0, 'missing': ['t3']}
    """
    scored = [r for r in results if r.task_id in expected]
    top1 = sum(1 for r in scored if r.best and r.best.skill_id in expected[r.task_id])
    top3 = sum(1 for r in scored
               if any(m.skill_id in expected[r.task_id] for m in r.matches[:3]))
    asked = {r.task_id for r in results}
    return {"tasks": len(scored), "top1": round(top1 / len(scored), 4) if scored else None,
            "top3": round(top3 / len(scored), 4) if scored else None,
            "missing": sorted(t for t in expected if t not in asked)}
