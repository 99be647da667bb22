"""Retrieval: rank a bank's skills for each task by cosine similarity of embeddings.

The task side is the task instruction; the skill side is the skill's applicability text
(never its guidance or rubric). Top-1 is the paper's choice; ``k`` gives more. Ties are
broken by skill id, so a ranking is deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from agentcredit.schema import SkillBank, Task
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


async def retrieve(bank: SkillBank, tasks: Sequence[Task], embedder: Embedder, *,
                   k: int = 1) -> list[Retrieval]:
    """The ``k`` best skills of ``bank`` for each task."""
    skills = list(bank.skills)
    if not skills or not tasks:
        return [Retrieval(t.id, ()) for t in tasks]
    vectors = await embedder.embed([s.applicability for s in skills] +
                                   [t.instruction for t in tasks])
    skill_vectors, task_vectors = vectors[:len(skills)], vectors[len(skills):]
    ranked = top_k(cosine_matrix(task_vectors, skill_vectors), [s.id for s in skills], k)
    return [Retrieval(t.id, r) for t, r in zip(tasks, ranked, strict=True)]
