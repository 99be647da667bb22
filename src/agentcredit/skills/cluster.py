"""Complete-linkage clustering by cosine distance (pure).

Clusters start as single skills. The two clusters whose *largest* pairwise cosine distance
is smallest are merged, again and again, and the process stops when that smallest
remaining distance exceeds ``1 - tau`` (SkillRubric C.4). Ties go to the pair that comes
first in index order, so the result is deterministic.
"""

from __future__ import annotations

import numpy as np


def complete_linkage(similarity: np.ndarray, tau: float) -> list[list[int]]:
    """Clusters of indices (each sorted; clusters ordered by their first index).

    >>> sims = np.array([[1.0, 0.9, 0.1], [0.9, 1.0, 0.2], [0.1, 0.2, 1.0]])
    >>> complete_linkage(sims, tau=0.7)
    [[0, 1], [2]]
    >>> complete_linkage(sims, tau=0.95)
    [[0], [1], [2]]
    """
    n = similarity.shape[0]
    if n == 0:
        return []
    distance = 1.0 - np.asarray(similarity, dtype=np.float64)
    np.fill_diagonal(distance, np.inf)
    members: dict[int, list[int]] = {i: [i] for i in range(n)}
    active = np.ones(n, dtype=bool)
    limit = 1.0 - tau + 1e-12  # "exceeds": a distance of exactly 1 - tau still merges
    while active.sum() > 1:
        masked = np.where(active[:, None] & active[None, :], distance, np.inf)
        flat = int(np.argmin(masked))
        i, j = divmod(flat, n)
        if not masked[i, j] <= limit:
            break
        i, j = min(i, j), max(i, j)
        merged = np.maximum(distance[i], distance[j])  # complete linkage: the farthest pair
        distance[i, :] = merged
        distance[:, i] = merged
        distance[i, i] = np.inf
        active[j] = False
        members[i] = sorted(members[i] + members.pop(j))
    return [members[i] for i in sorted(members)]
