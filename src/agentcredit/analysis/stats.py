"""Statistics for validity analyses. Pure: values in, values out; every random draw comes
from a ``numpy.random.Generator`` passed in.

The task-clustered bootstrap resamples tasks with replacement and keeps all of a task's
trials. For AUC it is computed exactly and fast: with ``C[t, u]`` the number of
(positive of task t, negative of task u) pairs ordered correctly (ties count half), a draw
that takes task t ``w_t`` times has AUC ``w·C·w / ((w·n_pos)(w·n_neg))``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class Interval:
    """An estimate with a two-sided confidence interval."""

    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    level: float = 0.95

    def as_dict(self) -> dict[str, float | None]:
        return {"estimate": self.estimate, "ci_low": self.ci_low, "ci_high": self.ci_high,
                "level": self.level}


def average_ranks(values: FloatArray) -> FloatArray:
    """1-based ranks with ties sharing their average rank.

    >>> average_ranks(np.array([3.0, 1.0, 3.0, 2.0])).tolist()
    [3.5, 1.0, 3.5, 2.0]
    """
    order = np.argsort(values, kind="mergesort")
    boundaries = np.flatnonzero(np.diff(values[order])) + 1
    starts = np.concatenate(([0], boundaries))
    ends = np.concatenate((boundaries, [len(values)]))
    ranks = np.empty(len(values), dtype=np.float64)
    ranks[order] = np.repeat((starts + ends + 1) / 2.0, ends - starts)
    return ranks


def _ties(values: FloatArray) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """(order, group): the stable sort of ``values`` and each sorted value's tie group."""
    order = np.argsort(values, kind="mergesort")
    return order, np.concatenate(([0], np.cumsum(np.diff(values[order]) != 0)))


def _weighted_ranks(order: NDArray[np.int64], group: NDArray[np.int64],
                    weight: FloatArray) -> FloatArray:
    """The average ranks of a multiset that holds each value ``weight`` times (as
    :func:`average_ranks` of the values repeated), per value."""
    sums = np.bincount(group, weights=weight[order])
    group_rank = np.cumsum(sums) - sums + (sums + 1.0) / 2.0
    ranks = np.empty(len(order))
    ranks[order] = group_rank[group]
    return ranks


def _weighted_rho(ra: FloatArray, rb: FloatArray, weight: FloatArray) -> float:
    """Pearson's r of two rank vectors over a multiset (NaN when a side is constant)."""
    total = weight.sum()  # (sums, not BLAS dot products: threaded BLAS spins on a busy box)
    da, db = ra - (weight * ra).sum() / total, rb - (weight * rb).sum() / total
    wa, wb = weight * da, weight * db
    va, vb = (wa * da).sum(), (wb * db).sum()
    return float((wa * db).sum() / np.sqrt(va * vb)) if va > 0 and vb > 0 else np.nan


def _cluster_rhos(a: FloatArray, b: FloatArray, cluster: NDArray[np.int64], n_clusters: int,
                  weights: FloatArray) -> FloatArray:
    """Spearman's rho of ``a`` and ``b`` in each bootstrap draw that takes cluster t
    ``weights[d, t]`` times: ranks of the weighted multiset, in time linear in the rows
    per draw (no resampled copy is made or sorted)."""
    ties_a, ties_b = _ties(a), _ties(b)
    values = np.full(len(weights), np.nan)
    for d, draw in enumerate(weights):
        weight = draw[cluster]
        if np.count_nonzero(weight) < 2:
            continue
        values[d] = _weighted_rho(_weighted_ranks(*ties_a, weight),
                                  _weighted_ranks(*ties_b, weight), weight)
    return values


def auc(scores: Sequence[float] | FloatArray, positive: Sequence[bool] | NDArray[np.bool_]
        ) -> float | None:
    """Area under the ROC curve by the rank formula (ties count half); None when one class
    is empty.

    >>> auc([0.1, 0.4, 0.35, 0.8], [False, False, True, True])
    0.75
    """
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(positive, dtype=bool)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    if n_pos == 0 or n_neg == 0:
        return None
    ranks = average_ranks(s)
    return float((ranks[y].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def _cluster_index(clusters: Sequence[str] | NDArray[np.int64]) -> tuple[NDArray[np.int64],
                                                                         int]:
    """Each row's cluster as 0..n-1, in the order of the clusters' names (integer codes
    given in that order are taken as they are)."""
    given = clusters if isinstance(clusters, np.ndarray) and clusters.dtype.kind in "iu" \
        else np.asarray(clusters, dtype=object).astype(str)
    _, index = np.unique(given, return_inverse=True)
    return index.astype(np.int64), int(index.max()) + 1 if len(index) else 0


def pair_matrix(scores: FloatArray, positive: NDArray[np.bool_], cluster: NDArray[np.int64],
                n_clusters: int) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(C, n_pos, n_neg) per cluster: C[t, u] counts correctly ordered (pos in t, neg in u)."""
    c = np.zeros((n_clusters, n_clusters))
    n_pos = np.bincount(cluster[positive], minlength=n_clusters).astype(np.float64)
    n_neg = np.bincount(cluster[~positive], minlength=n_clusters).astype(np.float64)
    pos_scores, pos_cluster = scores[positive], cluster[positive]
    for u in range(n_clusters):
        neg = np.sort(scores[(~positive) & (cluster == u)])
        if len(neg) == 0:
            continue
        below = np.searchsorted(neg, pos_scores, side="left")
        at_or_below = np.searchsorted(neg, pos_scores, side="right")
        wins = below + 0.5 * (at_or_below - below)
        c[:, u] = np.bincount(pos_cluster, weights=wins, minlength=n_clusters)
    return c, n_pos, n_neg


def cluster_weights(n_clusters: int, draws: int, rng: np.random.Generator) -> FloatArray:
    """How many times each cluster is taken in each bootstrap draw (draws x clusters)."""
    picks = rng.integers(0, n_clusters, size=(draws, n_clusters))
    weights = np.zeros((draws, n_clusters))
    np.add.at(weights, (np.repeat(np.arange(draws), n_clusters), picks.ravel()), 1.0)
    return weights


def _draw_aucs(c: FloatArray, n_pos: FloatArray, n_neg: FloatArray,
               weights: FloatArray) -> FloatArray:
    num = ((weights @ c) * weights).sum(axis=1)  # exact: counts times half-integers
    den = (weights @ n_pos) * (weights @ n_neg)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / den, np.nan)


def percentile_interval(estimate: float | None, draws: FloatArray, level: float) -> Interval:
    valid = draws[~np.isnan(draws)]
    if estimate is None or len(valid) == 0:
        return Interval(estimate, None, None, level)
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(valid, [alpha, 1.0 - alpha])
    return Interval(estimate, float(low), float(high), level)


def clustered_auc(scores: Sequence[float], positive: Sequence[bool], clusters: Sequence[str],
                  rng: np.random.Generator, *, draws: int = 2000, level: float = 0.95
                  ) -> tuple[Interval, FloatArray]:
    """AUC with a task-clustered percentile bootstrap interval, and the bootstrap draws."""
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(positive, dtype=bool)
    cluster, n_clusters = _cluster_index(clusters)
    estimate = auc(s, y)
    if estimate is None or n_clusters == 0:
        return Interval(estimate, None, None, level), np.array([])
    c, n_pos, n_neg = pair_matrix(s, y, cluster, n_clusters)
    boot = _draw_aucs(c, n_pos, n_neg, cluster_weights(n_clusters, draws, rng))
    return percentile_interval(estimate, boot, level), boot


@dataclass(frozen=True)
class PairedDelta:
    """AUC(a) - AUC(b) on the same trials, with its interval and P(delta > 0) over draws."""

    delta: Interval
    share_positive: float | None


def paired_delta_auc(scores_a: Sequence[float], scores_b: Sequence[float],
                     positive: Sequence[bool], clusters: Sequence[str],
                     rng: np.random.Generator, *, draws: int = 2000, level: float = 0.95
                     ) -> PairedDelta:
    """Paired difference of two scorers' AUCs, resampling the same task clusters for both."""
    estimate, diff = paired_auc_draws(scores_a, scores_b, positive, clusters, rng,
                                      draws=draws)
    if estimate is None:
        return PairedDelta(Interval(None, None, None, level), None)
    valid = diff[~np.isnan(diff)]
    share = float((valid > 0).mean()) if len(valid) else None
    return PairedDelta(percentile_interval(estimate, diff, level), share)


def paired_auc_draws(scores_a: Sequence[float], scores_b: Sequence[float],
                     positive: Sequence[bool], clusters: Sequence[str],
                     rng: np.random.Generator, *, draws: int = 2000,
                     ) -> tuple[float | None, FloatArray]:
    """AUC(a) - AUC(b) and its paired bootstrap draws (the same clusters for both; NaN where
    a draw lacks a class). Give every row its own cluster to resample single rows."""
    y = np.asarray(positive, dtype=bool)
    a, b = np.asarray(scores_a, dtype=np.float64), np.asarray(scores_b, dtype=np.float64)
    auc_a, auc_b = auc(a, y), auc(b, y)
    if auc_a is None or auc_b is None:
        return None, np.array([])
    cluster, n_clusters = _cluster_index(clusters)
    weights = cluster_weights(n_clusters, draws, rng)
    boot_a = _draw_aucs(*pair_matrix(a, y, cluster, n_clusters), weights)
    boot_b = _draw_aucs(*pair_matrix(b, y, cluster, n_clusters), weights)
    return auc_a - auc_b, boot_a - boot_b


def spearman(x: Sequence[float] | FloatArray, y: Sequence[float] | FloatArray) -> float | None:
    """Spearman's rank correlation (average ranks for ties); None when undefined.

    >>> spearman([1, 2, 3, 4], [10, 20, 30, 40]), spearman([1, 2, 3], [3, 2, 1])
    (1.0, -1.0)
    """
    a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if len(a) < 2:
        return None
    ra, rb = average_ranks(a), average_ranks(b)
    if ra.std() == 0 or rb.std() == 0:
        return None
    return float(np.corrcoef(ra, rb)[0, 1])


def clustered_spearman(x: Sequence[float], y: Sequence[float], clusters: Sequence[str],
                       rng: np.random.Generator, *, draws: int = 2000, level: float = 0.95
                       ) -> Interval:
    """Spearman's rho with a task-clustered bootstrap interval."""
    a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    cluster, n_clusters = _cluster_index(clusters)
    estimate = spearman(a, b)
    if estimate is None:
        return Interval(None, None, None, level)
    weights = cluster_weights(n_clusters, draws, rng)
    return percentile_interval(estimate, _cluster_rhos(a, b, cluster, n_clusters, weights),
                               level)


@dataclass(frozen=True)
class PairedRho:
    """rho(a, y) - rho(b, y) on the same rows, with a paired clustered interval."""

    delta: Interval
    share_positive: float | None


def paired_delta_spearman(a: Sequence[float], b: Sequence[float], y: Sequence[float],
                          clusters: Sequence[str], rng: np.random.Generator, *,
                          draws: int = 2000, level: float = 0.95) -> PairedRho:
    """Paired difference of two scorers' Spearman correlations with ``y``, resampling the
    same task clusters for both in every draw.

    >>> rng = np.random.default_rng(0)
    >>> d = paired_delta_spearman([1, 2, 3, 4], [4, 3, 2, 1], [1, 2, 3, 4], list("aabb"), rng,
    ...                           draws=50)
    >>> d.delta.estimate
    2.0
    """
    xa, xb = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    target = np.asarray(y, dtype=np.float64)
    rho_a, rho_b = spearman(xa, target), spearman(xb, target)
    if rho_a is None or rho_b is None:
        return PairedRho(Interval(None, None, None, level), None)
    cluster, n_clusters = _cluster_index(clusters)
    weights = cluster_weights(n_clusters, draws, rng)
    values = _cluster_rhos(xa, target, cluster, n_clusters, weights) - \
        _cluster_rhos(xb, target, cluster, n_clusters, weights)
    finite = values[~np.isnan(values)]
    share = float(np.mean(finite > 0)) if finite.size else None
    return PairedRho(percentile_interval(rho_a - rho_b, values, level), share)


@dataclass(frozen=True)
class PairAgreement:
    """How often a score orders preference pairs as humans did."""

    pairs: int
    concordant: int
    discordant: int
    ties: int

    @property
    def agreement(self) -> float | None:
        """Concordant / (concordant + discordant): tied scores left out (and reported)."""
        decided = self.concordant + self.discordant
        return self.concordant / decided if decided else None

    @property
    def agreement_ties_half(self) -> float | None:
        """Agreement counting a tied score as half right."""
        return (self.concordant + 0.5 * self.ties) / self.pairs if self.pairs else None


def pairwise_agreement(pairs: Sequence[tuple[float, float, int]]) -> PairAgreement:
    """Pairs of (score_a, score_b, preference) where preference is +1 (a preferred) or -1.

    >>> a = pairwise_agreement([(0.9, 0.1, 1), (0.2, 0.5, 1), (0.4, 0.4, -1), (0.1, 0.3, -1)])
    >>> a.concordant, a.discordant, a.ties, a.agreement, a.agreement_ties_half
    (2, 1, 1, 0.6666666666666666, 0.625)
    """
    concordant = discordant = ties = 0
    for score_a, score_b, preference in pairs:
        if score_a == score_b:
            ties += 1
        elif (score_a > score_b) == (preference > 0):
            concordant += 1
        else:
            discordant += 1
    return PairAgreement(len(pairs), concordant, discordant, ties)


def lower_bound(draws: FloatArray, *, level: float = 0.95) -> float | None:
    """One-sided lower confidence bound from bootstrap draws (their (1-level) quantile).

    >>> round(lower_bound(np.arange(101, dtype=float), level=0.95), 6)
    5.0
    """
    valid = np.asarray(draws, dtype=np.float64)
    valid = valid[~np.isnan(valid)]
    return float(np.quantile(valid, 1.0 - level)) if len(valid) else None
