"""Turn-level rewards and advantages of SkillRubric (§3.2, B.3): pure numpy, no I/O.

Shapes: ``N`` trajectories (rows; ``groups[i]`` names the task group of row ``i``), ``C``
rubric criteria, ``T`` turns (padded; ``turn_mask`` marks real turns). A turn is one agent
step of the normalised trajectory.

Evidence states map to values (B.3)::

    missing / contradicted -> 0,   hypothesis -> 0.25,   supported -> 0.6,   verified -> 1

``values[i, c, t]`` is the value of criterion ``c`` after turn ``t`` (the verifier carries a
state forward over turns that did not change it). With ``valid[i, c]`` false for criteria
that are not applicable or unverifiable (excluded, B.3), the normalised weights are
``ŵ[i, c] = w[i, c] * valid[i, c] / Σ_c w[i, c] * valid[i, c]`` (0 when nothing is valid).

1. progress (per turn):  ``P[i, t] = Σ_c ŵ[i, c] * (values[i, c, t] - values[i, c, t-1])``
   with ``values[i, c, -1] = 0``: positive for progress, negative for regression, zero for
   no change.
2. responsibility-weighted satisfaction (per turn):
   ``σ[i, t] = Σ_c ŵ[i, c] * sat[i, c] * resp[i, c, t]``; the rubric satisfaction of the
   trajectory is ``S[i] = Σ_t σ[i, t]`` (``resp`` sums to 1 over turns when satisfied).
3. satisfaction advantage (group-relative): ``A_S[i] = S[i] - mean_g(S)`` (divided by
   ``std_g(S)`` when ``normalize``). When ``std_g(S) = 0`` the group's satisfaction signal
   is *suppressed* (``A_S = 0``, reported), while its progress signal is kept.
4. process advantage (per turn): ``A_P[i, t] = A_S[i] * share[i, t] + P[i, t]`` with
   ``share[i, t] = σ[i, t] / S[i]`` (the turns responsible for what was satisfied), or
   ``1 / T_i`` over the real turns when ``S[i] = 0``.
5. outcome advantage (GRPO): ``A_O[i] = R[i] - mean_g(R)`` over the rows of the group that
   have an outcome (divided by ``std_g(R)`` when ``normalize``; 0 when ``std_g(R) = 0``);
   rows without an outcome get 0.
6. combined (per turn): ``A[i, t] = A_O[i] + λ * A_P[i, t]`` (``λ = process_weight``).
7. a group in which every ``A_O`` and every ``A_P`` is zero carries no signal and is
   *dropped* (``kept = False``, ``A = 0``, reported).

Populations statistics (``ddof = 0``); ``tolerance`` decides what counts as zero.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

STATE_VALUES: dict[str, float] = {"missing": 0.0, "contradicted": 0.0, "hypothesis": 0.25,
                                  "supported": 0.6, "verified": 1.0}
TOLERANCE = 1e-12


@dataclass(frozen=True)
class Advantages:
    """Everything the reward computation produced, row by row."""

    progress: np.ndarray          # (N, T)
    satisfaction_turn: np.ndarray  # (N, T): σ
    satisfaction: np.ndarray      # (N,): S
    satisfaction_advantage: np.ndarray  # (N,): A_S
    process: np.ndarray           # (N, T): A_P
    outcome: np.ndarray           # (N,): A_O
    combined: np.ndarray          # (N, T): A
    kept: np.ndarray              # (N,) bool
    signal: np.ndarray            # (N,) bool: the row has a non-zero A_O or A_P
    suppressed_groups: tuple[int, ...]
    dropped_groups: tuple[int, ...]


@dataclass(frozen=True)
class GroupMoments:
    """Per group (indexed by group id): mean and population std of the satisfaction ``S``
    over its rows with a rubric, and of the outcome ``R`` over its rows with an outcome.
    All that makes a row's advantage depend on other rows (besides the dropped rule), so a
    group can be computed a chunk of rows at a time once these are known."""

    mean_s: np.ndarray
    std_s: np.ndarray
    mean_r: np.ndarray
    std_r: np.ndarray

    @classmethod
    def of(cls, score: np.ndarray, has_rubric: np.ndarray, outcomes: np.ndarray,
           groups: np.ndarray, n_groups: int) -> GroupMoments:
        """The moments of rows ``score`` (``S``), ``has_rubric`` and ``outcomes`` (NaN: none)."""
        mean_s, std_s = _group_stats(score, has_rubric, groups, n_groups)
        present = ~np.isnan(outcomes)
        mean_r, std_r = _group_stats(np.nan_to_num(outcomes), present, groups, n_groups)
        return cls(mean_s, std_s, mean_r, std_r)


def _group_stats(x: np.ndarray, present: np.ndarray, groups: np.ndarray,
                 n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-group mean and population std of ``x`` over the rows where ``present``."""
    weight = present.astype(np.float64)
    counts = np.bincount(groups, weights=weight, minlength=n_groups)
    safe = np.where(counts > 0, counts, 1.0)
    sums = np.bincount(groups, weights=np.where(present, x, 0.0), minlength=n_groups)
    mean = sums / safe
    squares = np.bincount(groups, weights=np.where(present, (x - mean[groups]) ** 2, 0.0),
                          minlength=n_groups)
    return mean, np.sqrt(squares / safe)


def _relative(x: np.ndarray, present: np.ndarray, mean: np.ndarray, std: np.ndarray,
              normalize: bool, tolerance: float) -> tuple[np.ndarray, np.ndarray]:
    """``x`` relative to its row's group ``mean`` (÷ ``std`` when ``normalize``); 0 where
    the group has no variance (``flat``, also returned)."""
    flat = std <= tolerance
    centred = np.where(present, x - mean, 0.0)
    if normalize:
        centred = np.where(flat, 0.0, centred / np.where(flat, 1.0, std))
    return np.where(flat, 0.0, centred), flat


def row_terms(values: np.ndarray, responsibility: np.ndarray, satisfied: np.ndarray,
              valid: np.ndarray, weights: np.ndarray, turn_mask: np.ndarray,
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """What a row's rewards need of that row only: progress ``P`` (N, T), ``σ`` (N, T),
    ``S`` (N,) and whether it has a valid weighted criterion (N,)."""
    values = np.asarray(values, dtype=np.float64)
    mask = np.asarray(turn_mask, dtype=bool)
    w = np.where(valid, weights, 0.0).astype(np.float64)
    total = w.sum(axis=1, keepdims=True)
    w_hat = np.divide(w, total, out=np.zeros_like(w), where=total > 0)
    previous = np.concatenate([np.zeros((*values.shape[:2], 1)), values[:, :, :-1]], axis=2)
    progress = np.einsum("nc,nct->nt", w_hat, values - previous) * mask
    credit = w_hat * np.asarray(satisfied, dtype=np.float64)
    sat_turn = np.einsum("nc,nct->nt", credit, responsibility) * mask
    return progress, sat_turn, sat_turn.sum(axis=1), total[:, 0] > 0


def compute_advantages(
    values: np.ndarray, responsibility: np.ndarray, satisfied: np.ndarray,
    valid: np.ndarray, weights: np.ndarray, turn_mask: np.ndarray, outcomes: np.ndarray,
    groups: np.ndarray, *, process_weight: float = 1.0, normalize: bool = False,
    tolerance: float = TOLERANCE, moments: GroupMoments | None = None,
    group_signal: np.ndarray | None = None,
) -> Advantages:
    """Rewards and advantages of a batch (see the module docstring for every formula).

    ``outcomes`` holds NaN where a row has no outcome; ``groups`` holds small integer ids.
    ``moments`` and ``group_signal`` (per group: whether any of its rows carries a signal)
    are those of the whole groups when the rows given are only some of them (a group
    computed a chunk at a time); by default both come from the rows given.
    """
    mask = np.asarray(turn_mask, dtype=bool)
    groups = np.asarray(groups, dtype=np.int64)
    n_groups = int(groups.max()) + 1 if groups.size else 0
    progress, sat_turn, score, has_rubric = row_terms(values, responsibility, satisfied,
                                                      valid, weights, mask)
    if moments is None:
        moments = GroupMoments.of(score, has_rubric, np.asarray(outcomes, dtype=np.float64),
                                  groups, n_groups)
    adv_s, flat_s = _relative(score, has_rubric, moments.mean_s[groups],
                              moments.std_s[groups], normalize, tolerance)
    turns = mask.sum(axis=1, keepdims=True)
    uniform = np.divide(mask.astype(np.float64), turns, out=np.zeros(mask.shape),
                        where=turns > 0)
    share = np.where(score[:, None] > tolerance,
                     sat_turn / np.where(score[:, None] > tolerance, score[:, None], 1.0),
                     uniform)
    process = adv_s[:, None] * share + progress
    present = ~np.isnan(outcomes)
    adv_o, _ = _relative(np.nan_to_num(outcomes), present, moments.mean_r[groups],
                         moments.std_r[groups], normalize, tolerance)
    combined = (adv_o[:, None] + process_weight * process) * mask
    signal = (np.abs(adv_o) > tolerance) | (np.abs(process) > tolerance).any(axis=1)
    if group_signal is None:
        group_signal = np.bincount(groups, weights=signal.astype(np.float64),
                                   minlength=n_groups) > 0
    kept = group_signal[groups]
    combined = np.where(kept[:, None], combined, 0.0)
    suppressed = sorted({int(g) for g, f, r in zip(groups, flat_s, has_rubric, strict=True)
                         if f and r})
    dropped = sorted({int(g) for g in groups if not group_signal[g]})
    return Advantages(progress=progress, satisfaction_turn=sat_turn, satisfaction=score,
                      satisfaction_advantage=adv_s, process=process * mask,
                      outcome=adv_o, combined=combined, kept=kept, signal=signal,
                      suppressed_groups=tuple(suppressed), dropped_groups=tuple(dropped))
