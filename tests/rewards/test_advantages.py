"""Reward and advantage math against hand-worked examples (see rewards/advantages.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentcredit.rewards.advantages import (
    STATE_VALUES,
    GroupMoments,
    compute_advantages,
    row_terms,
)

V = STATE_VALUES


def _batch() -> dict[str, np.ndarray]:
    """Four trajectories of one task, 6 turns (padded), 3 criteria weighted 1, 2, 1.

    Trajectory 0 (6 turns), states after each turn:
      A: missing hypothesis hypothesis supported supported verified; satisfied,
         responsibility 0.5 on turn 4 and 0.5 on turn 6
      B: missing missing supported supported contradicted supported; satisfied,
         responsibility 0.25 on turn 3 and 0.75 on turn 6
      C: missing missing missing hypothesis hypothesis hypothesis; not satisfied
    Trajectory 1 (3 turns): only A satisfied (turn 2), nothing else moves -> S = 0.25.
    Trajectory 2 (2 turns): C not applicable; A satisfied on turn 1 -> S = 1/3.
    Trajectory 3 (4 turns): A and B satisfied on turn 4 -> S = 0.75.
    """
    n, c, t = 4, 3, 6
    values = np.zeros((n, c, t))
    resp = np.zeros((n, c, t))
    sat = np.zeros((n, c), dtype=bool)
    values[0, 0] = [0, V["hypothesis"], V["hypothesis"], V["supported"], V["supported"],
                    V["verified"]]
    values[0, 1] = [0, 0, V["supported"], V["supported"], V["contradicted"], V["supported"]]
    values[0, 2] = [0, 0, 0, V["hypothesis"], V["hypothesis"], V["hypothesis"]]
    resp[0, 0, [3, 5]] = 0.5
    resp[0, 1, [2, 5]] = [0.25, 0.75]
    sat[0, :2] = True
    values[1, 0, 1:3] = 1.0
    resp[1, 0, 1] = 1.0
    sat[1, 0] = True
    values[2, 0, 0:2] = 1.0
    resp[2, 0, 0] = 1.0
    sat[2, 0] = True
    values[3, :2, 3] = 1.0
    resp[3, :2, 3] = 1.0
    sat[3, :2] = True
    valid = np.ones((n, c), dtype=bool)
    valid[2, 2] = False
    mask = np.zeros((n, t), dtype=bool)
    for row, turns in enumerate((6, 3, 2, 4)):
        mask[row, :turns] = True
    return {"values": values, "responsibility": resp, "satisfied": sat, "valid": valid,
            "weights": np.tile([1.0, 2.0, 1.0], (n, 1)), "turn_mask": mask,
            "outcomes": np.array([1.0, 0.0, 0.0, 1.0]), "groups": np.zeros(n, dtype=int)}


def test_six_turns_three_criteria_give_the_documented_values() -> None:
    result = compute_advantages(**_batch(), process_weight=0.5)
    # progress P = 0.25*dA + 0.5*dB + 0.25*dC per turn
    assert result.progress[0] == pytest.approx([0, 0.0625, 0.3, 0.15, -0.3, 0.4])
    # sigma: A credit 0.25 split 0.5/0.5 on turns 4 and 6; B credit 0.5 split 0.25/0.75
    assert result.satisfaction_turn[0] == pytest.approx([0, 0, 0.125, 0.125, 0, 0.5])
    # S = 0.75, 0.25, 1/3 (C excluded: weights 1/3, 2/3 over A, B), 0.75
    assert result.satisfaction == pytest.approx([0.75, 0.25, 1 / 3, 0.75])
    mean_s = (0.75 + 0.25 + 1 / 3 + 0.75) / 4
    assert result.satisfaction_advantage == pytest.approx(
        [0.75 - mean_s, 0.25 - mean_s, 1 / 3 - mean_s, 0.75 - mean_s])
    a_s = 0.75 - mean_s
    share = np.array([0, 0, 1 / 6, 1 / 6, 0, 2 / 3])
    expected_process = a_s * share + np.array([0, 0.0625, 0.3, 0.15, -0.3, 0.4])
    assert result.process[0] == pytest.approx(expected_process)
    assert result.outcome == pytest.approx([0.5, -0.5, -0.5, 0.5])
    assert result.combined[0] == pytest.approx(0.5 + 0.5 * expected_process)
    # Padded turns carry nothing; trajectory 1 has S > 0 only on turn 2.
    assert result.combined[1, 3:] == pytest.approx([0, 0, 0])
    assert result.process[1] == pytest.approx([0, (0.25 - mean_s) + 0.25, 0, 0, 0, 0])
    assert result.kept.all() and not result.dropped_groups and not result.suppressed_groups


def test_grpo_outcome_advantages_of_four_trials() -> None:
    batch = _batch()
    batch["outcomes"] = np.array([1.0, 0.0, 1.0, 1.0])
    plain = compute_advantages(**batch)
    assert plain.outcome == pytest.approx([0.25, -0.75, 0.25, 0.25])
    scaled = compute_advantages(**batch, normalize=True)
    std = np.sqrt(0.75 * 0.25)  # population std of 1, 0, 1, 1
    assert scaled.outcome == pytest.approx(np.array([0.25, -0.75, 0.25, 0.25]) / std)
    batch["outcomes"] = np.array([1.0, np.nan, 0.0, np.nan])  # rows without an outcome
    partial = compute_advantages(**batch)
    assert partial.outcome == pytest.approx([0.5, 0.0, -0.5, 0.0])


def test_zero_variance_satisfaction_is_suppressed_and_progress_kept() -> None:
    batch = _batch()
    batch["satisfied"] = np.zeros((4, 3), dtype=bool)  # S = 0 everywhere: no variance
    result = compute_advantages(**batch, normalize=True)
    assert result.suppressed_groups == (0,)
    assert result.satisfaction_advantage == pytest.approx([0, 0, 0, 0])
    assert result.process[0] == pytest.approx([0, 0.0625, 0.3, 0.15, -0.3, 0.4])


def test_a_group_without_outcome_or_process_signal_is_dropped() -> None:
    batch = _batch()
    two = {k: np.concatenate([v, v]) for k, v in batch.items()}
    two["groups"] = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    two["values"][4:] = 0.0
    two["satisfied"][4:] = False
    two["outcomes"][4:] = 1.0
    result = compute_advantages(**two)
    assert result.dropped_groups == (1,)
    assert list(result.kept) == [True] * 4 + [False] * 4
    assert result.combined[4:] == pytest.approx(np.zeros((4, 6)))
    assert result.combined[:4].any()


def test_invalid_criteria_are_excluded_entirely() -> None:
    batch = _batch()
    batch["valid"][0] = [True, True, False]  # C unverifiable for trajectory 0
    result = compute_advantages(**batch)
    # weights over A, B: 1/3, 2/3; C's hypothesis no longer counts as progress on turn 4
    assert result.progress[0] == pytest.approx(
        [0, 0.25 / 3, 0.4, 0.35 / 3, -0.4, 0.4 / 3 + 0.4])
    batch["valid"][0] = False
    none = compute_advantages(**batch)
    assert none.progress[0] == pytest.approx(np.zeros(6)) and none.satisfaction[0] == 0


@st.composite
def _batches(draw: st.DrawFn) -> dict[str, np.ndarray]:
    """A batch of several groups, of mixed turn counts, outcomes and valid criteria."""
    n, c, t = draw(st.integers(1, 8)), draw(st.integers(1, 3)), draw(st.integers(1, 5))
    states = list(STATE_VALUES.values())
    values = np.array(draw(st.lists(st.sampled_from(states), min_size=n * c * t,
                                    max_size=n * c * t))).reshape(n, c, t)
    resp = np.array(draw(st.lists(st.floats(0, 1), min_size=n * c * t,
                                  max_size=n * c * t))).reshape(n, c, t)
    turns = draw(st.lists(st.integers(1, t), min_size=n, max_size=n))
    mask = np.arange(t)[None, :] < np.array(turns)[:, None]
    flags = draw(st.lists(st.booleans(), min_size=2 * n * c, max_size=2 * n * c))
    outcomes = draw(st.lists(st.sampled_from([0.0, 1.0, 0.4, np.nan]), min_size=n,
                             max_size=n))
    return {"values": values * mask[:, None, :], "responsibility": resp * mask[:, None, :],
            "satisfied": np.array(flags[: n * c]).reshape(n, c),
            "valid": np.array(flags[n * c:]).reshape(n, c),
            "weights": np.ones((n, c)), "turn_mask": mask, "outcomes": np.array(outcomes),
            "groups": np.array(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)))}


@settings(max_examples=150, deadline=None)
@given(_batches(), st.booleans())
def test_advantages_of_one_group_at_a_time_equal_the_whole_batch(
        batch: dict[str, np.ndarray], normalize: bool) -> None:
    """What lets `skills reward` compute its rows a group at a time (memory follows the
    largest group, not the run): every quantity of a row depends on its own group only."""
    whole = compute_advantages(**batch, normalize=normalize)
    for group in np.unique(batch["groups"]):
        rows = batch["groups"] == group
        part = {k: v[rows] for k, v in batch.items()}
        part["groups"] = np.zeros(int(rows.sum()), dtype=np.int64)
        alone = compute_advantages(**part, normalize=normalize)
        for name in ("progress", "satisfaction", "satisfaction_advantage", "process",
                     "outcome", "combined", "kept"):
            assert np.allclose(getattr(alone, name), getattr(whole, name)[rows]), name
        assert bool(alone.dropped_groups) == (int(group) in whole.dropped_groups)
        assert bool(alone.suppressed_groups) == (int(group) in whole.suppressed_groups)


@settings(max_examples=150, deadline=None)
@given(_batches(), st.booleans(), st.integers(1, 4))
def test_one_group_computed_a_chunk_at_a_time_equals_the_whole_group(
        batch: dict[str, np.ndarray], normalize: bool, size: int) -> None:
    """A group too large to hold is computed in chunks of rows, given the group's moments
    (from each row's S and R) and whether any of its rows carries a signal."""
    batch = {**batch, "groups": np.zeros(len(batch["outcomes"]), dtype=np.int64)}
    whole = compute_advantages(**batch, normalize=normalize, process_weight=0.5)
    _, _, score, has_rubric = row_terms(batch["values"], batch["responsibility"],
                                        batch["satisfied"], batch["valid"], batch["weights"],
                                        batch["turn_mask"])
    moments = GroupMoments.of(score, has_rubric, batch["outcomes"], batch["groups"], 1)
    pieces = [slice(k, k + size) for k in range(0, len(score), size)]
    signal = np.array([any(compute_advantages(
        **{k: v[p] for k, v in batch.items()}, normalize=normalize, process_weight=0.5,
        moments=moments).signal.any() for p in pieces)])
    for piece in pieces:
        part = compute_advantages(**{k: v[piece] for k, v in batch.items()},
                                  normalize=normalize, process_weight=0.5, moments=moments,
                                  group_signal=signal)
        for name in ("satisfaction_advantage", "process", "outcome", "combined", "kept"):
            assert np.allclose(getattr(part, name), getattr(whole, name)[piece]), name
