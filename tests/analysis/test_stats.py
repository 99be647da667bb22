"""Statistics against independent computations and hand-worked examples."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import mannwhitneyu, spearmanr

from agentcredit.analysis import stats


def test_auc_matches_mann_whitney_with_ties() -> None:
    rng = np.random.default_rng(3)
    for _ in range(20):
        n = int(rng.integers(5, 200))
        scores = rng.integers(0, 6, n) / 5.0  # many ties
        positive = rng.random(n) < 0.5
        if positive.all() or not positive.any():
            continue
        u = mannwhitneyu(scores[positive], scores[~positive]).statistic
        expected = u / (positive.sum() * (~positive).sum())
        assert stats.auc(scores, positive) == pytest.approx(expected, abs=1e-12)


def test_auc_undefined_with_one_class() -> None:
    assert stats.auc([0.1, 0.2], [True, True]) is None


def test_clustered_bootstrap_hand_worked() -> None:
    # Task A: pos 0.9, neg 0.1 (AUC 1). Task B: pos 0.2, neg 0.8 (AUC 0).
    # A draw of {A, A} gives 1, {B, B} gives 0, {A, B} gives 3/4.
    scores, positive = [0.9, 0.1, 0.2, 0.8], [True, False, True, False]
    clusters = ["A", "A", "B", "B"]
    c, n_pos, n_neg = stats.pair_matrix(np.array(scores), np.array(positive),
                                        np.array([0, 0, 1, 1]), 2)
    assert c.tolist() == [[1.0, 1.0], [1.0, 0.0]]
    assert n_pos.tolist() == [1, 1] and n_neg.tolist() == [1, 1]
    interval, draws = stats.clustered_auc(scores, positive, clusters,
                                          np.random.default_rng(0), draws=400)
    assert interval.estimate == 0.75
    assert set(np.round(draws, 6)) == {0.0, 0.75, 1.0}
    assert abs(np.mean(draws == 0.75) - 0.5) < 0.08  # {A,B} half the time


def test_vectorised_bootstrap_equals_a_plain_loop() -> None:
    rng = np.random.default_rng(5)
    n = 300
    tasks = rng.integers(0, 12, n)
    scores = rng.random(n).round(1)
    positive = rng.random(n) < scores
    weights = stats.cluster_weights(12, 50, np.random.default_rng(9))
    fast = stats._draw_aucs(*stats.pair_matrix(scores, positive, tasks, 12), weights)
    for d in range(50):
        picked = np.concatenate([np.repeat(np.flatnonzero(tasks == t), int(w))
                                 for t, w in enumerate(weights[d])])
        slow = stats.auc(scores[picked], positive[picked])
        assert fast[d] == pytest.approx(slow, abs=1e-12)


def test_seeded_bootstrap_repeats_bit_for_bit() -> None:
    args = ([0.1, 0.5, 0.7, 0.2, 0.9, 0.4], [False, True, True, False, True, False],
            ["a", "a", "b", "b", "c", "c"])
    one = stats.clustered_auc(*args, np.random.default_rng(42), draws=300)[1]
    two = stats.clustered_auc(*args, np.random.default_rng(42), draws=300)[1]
    assert np.array_equal(one, two, equal_nan=True)


def test_paired_delta_auc() -> None:
    rng = np.random.default_rng(1)
    n = 400
    positive = rng.random(n) < 0.5
    good = positive + rng.normal(0, 0.5, n)
    noise = rng.normal(0, 1, n)
    clusters = [str(i % 20) for i in range(n)]
    result = stats.paired_delta_auc(good, noise, positive, clusters,
                                    np.random.default_rng(0), draws=500)
    assert result.delta.estimate == pytest.approx(stats.auc(good, positive)
                                                  - stats.auc(noise, positive))
    assert result.delta.ci_low is not None and result.delta.ci_low > 0
    assert result.share_positive == 1.0


def test_spearman_matches_scipy() -> None:
    rng = np.random.default_rng(2)
    x, y = rng.integers(0, 5, 60), rng.integers(0, 5, 60)
    assert stats.spearman(x, y) == pytest.approx(spearmanr(x, y).statistic)
    interval = stats.clustered_spearman(x, y, [str(i % 6) for i in range(60)],
                                        np.random.default_rng(0), draws=200)
    assert interval.ci_low <= interval.estimate <= interval.ci_high  # type: ignore[operator]


def test_pairwise_agreement_hand_worked() -> None:
    result = stats.pairwise_agreement([(0.8, 0.2, 1), (0.8, 0.2, -1), (0.5, 0.5, 1),
                                       (0.1, 0.9, -1)])
    assert (result.concordant, result.discordant, result.ties) == (2, 1, 1)
    assert result.agreement == pytest.approx(2 / 3)
    assert result.agreement_ties_half == pytest.approx(2.5 / 4)


def test_lower_bounds() -> None:
    draws = np.linspace(0, 1, 1001)
    assert stats.lower_bound(draws, level=0.9) == pytest.approx(0.1)
