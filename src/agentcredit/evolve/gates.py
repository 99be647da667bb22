"""Outcome-grounded acceptance gates of SkillRubric's co-evolution (§3.3, B.4). Pure.

How the paper's rules are read here (every threshold is a keyword argument):

Guidance gate (paired rollouts under a frozen policy, one rollout per version per task,
eight tasks by default, the same decoding settings for both versions):

- a pair is valid when both rollouts produced an outcome (``None`` marks an invalid
  rollout: aborted, truncated, harness error); invalid pairs are dropped;
- "at least four valid rollout pairs": fewer than ``min_pairs`` valid pairs rejects;
- "improve mean outcome": the candidate's mean over the valid pairs must be strictly
  higher than the current version's mean over the same pairs;
- "without a paired regression greater than 0.05": any valid pair with
  ``candidate < current - max_regression`` rejects; a regression of exactly
  ``max_regression`` is allowed.

Rubric gate (offline, the same outcome-labelled trajectories under fixed guidance, 128 by
default, rejudged by both rubrics):

- alignment = AUC of the rubric's weighted score against the fixed outcome verdict (ties
  count half); gain = AUC(candidate) - AUC(current);
- "positive estimated alignment gain": gain must be > 0;
- "one-sided 90 % lower confidence bound allowed to extend to -0.02": the
  ``1 - confidence`` quantile of the paired bootstrap distribution of the gain (the same
  trajectories resampled with replacement for both rubrics, ``seed``-ed) must be
  ``>= lcb_floor``; a bound of exactly ``lcb_floor`` is allowed;
- "pass-rate change at most 0.10": the pass rate is the share of scores
  ``>= pass_threshold``; ``|rate(candidate) - rate(current)| <= max_pass_rate_change``
  (exactly 0.10 is allowed) guards against uniformly relaxed (or tightened) criteria;
- both checks must pass. Scores of a trajectory with no valid criterion are not allowed:
  the caller drops such trajectories before the gate.

Boundaries are compared with an absolute tolerance of 1e-9 so that values such as 0.05 or
0.10 written in decimal are treated as the boundary they mean.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from agentcredit.analysis.stats import auc, lower_bound, paired_auc_draws

EPS = 1e-9


@dataclass(frozen=True)
class GateDecision:
    """Whether a candidate is accepted, why (one line), and every number the decision used."""

    accepted: bool
    reason: str
    numbers: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def guidance_gate(current: Sequence[float | None], candidate: Sequence[float | None], *,
                  max_regression: float = 0.05, min_pairs: int = 4) -> GateDecision:
    """Paired-rollout gate for a guidance revision (see the module docstring).

    >>> guidance_gate([0, 1, 0, 1], [1, 1, 0, 1]).accepted
    True
    >>> guidance_gate([0, 1, 0, None], [1, 1, 0, 1]).reason
    'rejected: 3 valid pairs, need at least 4'
    """
    if len(current) != len(candidate):
        raise ValueError("current and candidate need one outcome per task each")
    pairs = [(float(a), float(b)) for a, b in zip(current, candidate, strict=True)
             if a is not None and b is not None]
    numbers: dict[str, Any] = {"pairs": len(current), "valid_pairs": len(pairs),
                               "invalid_pairs": len(current) - len(pairs),
                               "min_pairs": min_pairs, "max_regression": max_regression}
    if len(pairs) < min_pairs:
        return GateDecision(False, f"rejected: {len(pairs)} valid pairs, need at least "
                            f"{min_pairs}", numbers)
    cur = np.array([a for a, _ in pairs])
    cand = np.array([b for _, b in pairs])
    diffs = cand - cur
    worst = float(diffs.min())
    numbers.update(current_mean=float(cur.mean()), candidate_mean=float(cand.mean()),
                   mean_gain=float(diffs.mean()), worst_pair_change=worst,
                   regressions=int((diffs < -max_regression - EPS).sum()))
    if not cand.mean() > cur.mean() + EPS:
        return GateDecision(False, f"rejected: candidate mean {cand.mean():.3f} is not above "
                            f"current mean {cur.mean():.3f}", numbers)
    if worst < -max_regression - EPS:
        return GateDecision(False, f"rejected: a pair regresses by {-worst:.3f} (> "
                            f"{max_regression})", numbers)
    return GateDecision(True, f"accepted: mean {cur.mean():.3f} -> {cand.mean():.3f} over "
                        f"{len(pairs)} pairs, worst pair change {worst:+.3f}", numbers)


def pass_rate(scores: Sequence[float], threshold: float) -> float:
    """Share of scores at or above the threshold.

    >>> pass_rate([0.2, 0.5, 0.9, 0.49], 0.5)
    0.5
    """
    values = np.asarray(scores, dtype=np.float64)
    return float((values >= threshold - EPS).mean()) if values.size else 0.0


def rubric_decision(gain: float | None, lcb: float | None, rate_change: float, *,
                    lcb_floor: float = -0.02, max_pass_rate_change: float = 0.10,
                    ) -> tuple[bool, str]:
    """The rubric gate's rule on its three numbers (see the module docstring).

    >>> rubric_decision(0.05, -0.02, 0.10)
    (True, 'accepted: gain +0.050, lower bound -0.020, pass-rate change +0.100')
    >>> rubric_decision(0.05, -0.02, 0.1000001)[0]
    False
    """
    if gain is None or lcb is None:
        return False, "rejected: alignment undefined (the outcomes need both classes)"
    if not gain > EPS:
        return False, f"rejected: alignment gain {gain:+.3f} is not positive"
    if lcb < lcb_floor - EPS:
        return False, f"rejected: lower bound {lcb:+.3f} is below {lcb_floor:+.3f}"
    if abs(rate_change) > max_pass_rate_change + EPS:
        return False, (f"rejected: pass rate changes by {rate_change:+.3f} (more than "
                       f"{max_pass_rate_change})")
    return True, (f"accepted: gain {gain:+.3f}, lower bound {lcb:+.3f}, pass-rate change "
                  f"{rate_change:+.3f}")


def rubric_gate(current: Sequence[float], candidate: Sequence[float], outcomes: Sequence[bool],
                *, lcb_floor: float = -0.02, confidence: float = 0.90,
                max_pass_rate_change: float = 0.10, pass_threshold: float = 0.5,
                seed: int = 0, draws: int = 2000) -> GateDecision:
    """Offline alignment gate for a rubric revision (see the module docstring)."""
    if not len(current) == len(candidate) == len(outcomes):
        raise ValueError("current, candidate and outcomes need one value per trajectory")
    y = [bool(o) for o in outcomes]
    cur, cand = [float(c) for c in current], [float(c) for c in candidate]
    gain, diff = paired_auc_draws(cand, cur, y, [str(i) for i in range(len(y))],
                                  np.random.default_rng(seed), draws=draws)
    lcb = lower_bound(diff, level=confidence) if gain is not None else None
    rates = pass_rate(cur, pass_threshold), pass_rate(cand, pass_threshold)
    change = rates[1] - rates[0]
    accepted, reason = rubric_decision(gain, lcb, change, lcb_floor=lcb_floor,
                                       max_pass_rate_change=max_pass_rate_change)
    numbers = {"trajectories": len(y), "positives": sum(y),
               "current_alignment": auc(cur, y), "candidate_alignment": auc(cand, y),
               "gain": gain, "lower_bound": lcb, "confidence": confidence,
               "lcb_floor": lcb_floor, "current_pass_rate": rates[0],
               "candidate_pass_rate": rates[1], "pass_rate_change": change,
               "max_pass_rate_change": max_pass_rate_change, "pass_threshold": pass_threshold,
               "seed": seed, "draws": draws}
    return GateDecision(accepted, reason, numbers)
