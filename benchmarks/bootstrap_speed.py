"""Task-clustered bootstrap of AUC: 4,455 trials in 87 tasks, 2,000 draws.

Times the pair-matrix implementation used by agentcredit and a plain loop that rebuilds
each resampled data set and recomputes its AUC; prints both times and the speed-up
(target: under 1 s).

    python benchmarks/bootstrap_speed.py [--trials 4455] [--tasks 87] [--draws 2000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from agentcredit.analysis.stats import auc, clustered_auc


def plain_loop(scores: np.ndarray, positive: np.ndarray, tasks: np.ndarray, draws: int,
               rng: np.random.Generator) -> np.ndarray:
    members = [np.flatnonzero(tasks == t) for t in range(int(tasks.max()) + 1)]
    out = np.empty(draws)
    for d in range(draws):
        picked = np.concatenate([members[t] for t in rng.integers(0, len(members),
                                                                  len(members))])
        value = auc(scores[picked], positive[picked])
        out[d] = np.nan if value is None else value
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=4455)
    parser.add_argument("--tasks", type=int, default=87)
    parser.add_argument("--draws", type=int, default=2000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    tasks = rng.integers(0, args.tasks, args.trials)
    scores = rng.integers(0, 21, args.trials) / 20.0
    positive = rng.random(args.trials) < 0.25 + 0.5 * scores
    start = time.perf_counter()
    interval, _ = clustered_auc(scores, positive, tasks.astype(str), np.random.default_rng(1),
                                draws=args.draws)
    fast = time.perf_counter() - start
    start = time.perf_counter()
    plain_loop(scores, positive, tasks, args.draws, np.random.default_rng(1))
    slow = time.perf_counter() - start
    print(f"{args.trials} trials, {args.tasks} tasks, {args.draws} draws: AUC "
          f"{interval.estimate:.3f} [{interval.ci_low:.3f}, {interval.ci_high:.3f}]")
    print(f"agentcredit: {fast:.3f} s (target < 1 s); plain loop: {slow:.3f} s; "
          f"speed-up {slow / fast:.1f}x")


if __name__ == "__main__":
    main()
