"""Rewards and advantages of a GRPO batch: 64 trajectories x 20 turns x 5 criteria.

Excludes model calls: the verifier's states, responsibilities and satisfactions are random
(seeded), then ``compute_advantages`` (the same function `skills reward` and the hooks use)
turns them into progress, process, outcome and combined advantages. Prints the median of
repeats and its ratio to the 5 ms target (below 1 meets it).

    python benchmarks/rewards_speed.py [--trajectories 64] [--turns 20] [--criteria 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from agentcredit.rewards.advantages import compute_advantages

LEVELS = np.array([0.0, 0.25, 0.6, 1.0])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trajectories", type=int, default=64)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--criteria", type=int, default=5)
    parser.add_argument("--group-size", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    n, c, t = args.trajectories, args.criteria, args.turns
    values = LEVELS[rng.integers(0, 4, size=(n, c, t))]
    resp = rng.random((n, c, t))
    resp /= resp.sum(axis=2, keepdims=True)
    satisfied = rng.random((n, c)) < 0.5
    valid = rng.random((n, c)) < 0.9
    weights = rng.uniform(0.5, 2.0, size=(n, c))
    lengths = rng.integers(t // 2, t + 1, size=n)
    mask = np.arange(t)[None, :] < lengths[:, None]
    outcomes = (rng.random(n) < 0.4).astype(float)
    groups = np.arange(n) // args.group_size
    times = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        result = compute_advantages(values, resp, satisfied, valid, weights, mask, outcomes,
                                    groups, process_weight=0.5, normalize=True)
        times.append(time.perf_counter() - start)
    assert result.combined.shape == (n, t) and np.isfinite(result.combined).all()
    median = statistics.median(times)
    print(f"{n} trajectories x {t} turns x {c} criteria: median {median * 1e3:.3f} ms over "
          f"{args.repeats} repeats (min {min(times) * 1e3:.3f} ms)")
    print(f"ratio to the 5 ms target: {median / 0.005:.3f} (below 1 meets it)")


if __name__ == "__main__":
    main()
