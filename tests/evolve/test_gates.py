"""Co-evolution gates against hand-worked cases, boundaries included."""

from __future__ import annotations

import numpy as np
import pytest

from agentcredit.analysis.stats import auc
from agentcredit.evolve.gates import guidance_gate, pass_rate, rubric_decision, rubric_gate


def test_guidance_gate_exactly_four_valid_pairs_is_enough() -> None:
    decision = guidance_gate([0.0, 1.0, 0.5, 0.0, None, 1.0, None, None],
                             [1.0, 1.0, 0.5, 0.0, 1.0, None, 0.0, None])
    assert decision.accepted, decision.reason
    assert decision.numbers["valid_pairs"] == 4 and decision.numbers["invalid_pairs"] == 4
    assert decision.numbers["current_mean"] == pytest.approx(0.375)
    assert decision.numbers["candidate_mean"] == pytest.approx(0.625)


def test_guidance_gate_three_valid_pairs_is_rejected() -> None:
    decision = guidance_gate([0.0, 0.0, 0.0, None], [1.0, 1.0, 1.0, 1.0])
    assert not decision.accepted and "3 valid pairs" in decision.reason


def test_guidance_gate_regression_boundary() -> None:
    # A regression of exactly 0.05 is allowed; the mean still has to rise.
    ok = guidance_gate([0.5, 0.0, 0.0, 0.0], [0.45, 1.0, 0.0, 0.0])
    assert ok.accepted and ok.numbers["worst_pair_change"] == pytest.approx(-0.05)
    bad = guidance_gate([0.5, 0.0, 0.0, 0.0], [0.449, 1.0, 0.0, 0.0])
    assert not bad.accepted and "regresses by 0.051" in bad.reason
    binary = guidance_gate([1, 0, 0, 0, 0, 0, 0, 0], [0, 1, 1, 1, 0, 0, 0, 0])
    assert not binary.accepted  # one success lost is a regression of 1, whatever the mean


def test_guidance_gate_needs_a_strictly_higher_mean() -> None:
    same = guidance_gate([1, 0, 1, 0], [1, 0, 1, 0])
    assert not same.accepted and "not above" in same.reason
    with pytest.raises(ValueError):
        guidance_gate([1, 0], [1])


def test_rubric_decision_boundaries() -> None:
    assert rubric_decision(0.01, -0.02, 0.0)[0]                 # bound exactly at the floor
    assert not rubric_decision(0.01, -0.0201, 0.0)[0]
    assert rubric_decision(0.01, 0.0, 0.10)[0]                  # change exactly 0.10
    assert rubric_decision(0.01, 0.0, -0.10)[0]
    assert not rubric_decision(0.01, 0.0, 0.1000001)[0]
    assert not rubric_decision(0.0, 0.0, 0.0)[0]                # gain must be positive
    assert not rubric_decision(None, None, 0.0)[0]


def test_rubric_gate_hand_worked_case() -> None:
    outcomes = [True, True, True, False, False, False]
    current = [0.6, 0.4, 0.7, 0.5, 0.3, 0.65]    # AUC 6/9: three pairs misordered
    candidate = [0.6, 0.55, 0.7, 0.5, 0.3, 0.45]  # AUC 1: every positive above every negative
    assert auc(current, outcomes) == pytest.approx(6 / 9)
    decision = rubric_gate(current, candidate, outcomes, seed=3)
    assert decision.numbers["gain"] == pytest.approx(1 - 6 / 9)
    # pass rates (>= 0.5): current 4/6, candidate 4/6 -> no change
    assert decision.numbers["pass_rate_change"] == pytest.approx(0.0)
    assert decision.numbers["lower_bound"] is not None
    assert decision.accepted == (decision.numbers["lower_bound"] >= -0.02)
    again = rubric_gate(current, candidate, outcomes, seed=3)
    assert again.numbers == decision.numbers  # seeded: bit for bit


def test_rubric_gate_rejects_a_uniformly_relaxed_rubric() -> None:
    rng = np.random.default_rng(0)
    outcomes = list(rng.random(128) < 0.5)
    current = [0.2 + 0.2 * o + 0.3 * rng.random() for o in outcomes]
    relaxed = [c + 0.3 + 0.1 * o for c, o in zip(current, outcomes, strict=True)]
    decision = rubric_gate(current, relaxed, outcomes)
    assert pass_rate(relaxed, 0.5) - pass_rate(current, 0.5) > 0.10
    assert not decision.accepted and "pass rate" in decision.reason


def test_rubric_gate_lower_bound_uses_the_paired_bootstrap() -> None:
    rng = np.random.default_rng(1)
    outcomes = list(rng.random(128) < 0.5)
    current = [0.5 + 0.2 * (o - 0.5) + 0.3 * rng.standard_normal() for o in outcomes]
    noisy = [c + 0.4 * rng.standard_normal() for c in current]  # worse alignment
    decision = rubric_gate(current, noisy, outcomes)
    assert not decision.accepted
    better = [0.5 + 0.6 * (o - 0.5) + 0.1 * rng.standard_normal() for o in outcomes]
    improved = rubric_gate(current, better, outcomes, max_pass_rate_change=1.0)
    assert improved.accepted and improved.numbers["lower_bound"] > 0
