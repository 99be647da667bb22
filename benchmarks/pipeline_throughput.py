"""Trials scored per second by the whole GCPC judging pipeline with a zero-latency model.

4,000 synthetic trials (30-step trajectories, 10-item checklists) are read, judged by a
scripted model that answers instantly (evidence view, prompt, cache, answer validation,
quote check, run store), fused and scored. Prints trials per second (target >= 100),
with 1 and with 2 judging processes (``--workers``; target: 2 workers >= 1.6x 1 worker
on a 2-core machine). The trials are read while they are judged, as ``run`` reads them
(``--read-first``: all of them before judging starts; the reading is timed too).

The workers take ~0.6 s to start (the fork server imports agentcredit, each worker makes its
client) while this process judges alone, so a short pass measures the start more than the
judging: on the 2-core machine, 2 workers against 1 are 1.58-1.60x at 1,000 trials and
1.72x at 4,000 (the default).

    python benchmarks/pipeline_throughput.py [--trials 4000] [--workers 1,2] [--repeat 3]
                                             [--read-first]

Each worker count runs ``--repeat`` times, the counts taking turns, and the best pass of each
counts: on a shared or virtual machine a single pass can lose a third of its speed to a
neighbour, which would decide the ratio more than the code does.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.judging import scripted_judge
from tests.judging.synthetic import write_task, write_trials

from agentcredit.checklists import derive_checklist, load_rules
from agentcredit.formats import TrialStream, load
from agentcredit.llm import ModelClient, ResponseCache, make_provider, register_script
from agentcredit.runs import JudgeOptions, judge_trials, run_scores
from agentcredit.schema import Checklist
from agentcredit.store import RunStore


def one_pass(trials: int, workers: int, read_first: bool = False) -> float:
    """Trials per second end to end with ``workers`` judging processes."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_task(root / "tasks")
        write_trials(root / "trials", trials, steps=30)
        start = time.perf_counter()
        (task,) = load([root / "tasks"]).tasks
        checklist = derive_checklist(task, load_rules())
        assert isinstance(checklist, Checklist) and len(checklist.items) == 10
        store = RunStore(root / "run")
        model = ModelClient(make_provider("scripted/instant"),
                            cache=ResponseCache(root / "run" / "responses.sqlite"))
        read = load([root / "trials"]).trials if read_first else \
            TrialStream([root / "trials"])  # read while judging, as ``run`` does
        summary = asyncio.run(judge_trials(store, read, {task.id: checklist}, {task.id: task},
                                           JudgeOptions(model=model, concurrency=8,
                                                        workers=workers)))
        judged = time.perf_counter()
        rows = run_scores(store)
        end = time.perf_counter()
    assert summary.judged == trials and len(rows) == trials
    print(f"{workers} worker(s), {trials} trials: read and judged {judged - start:.2f} s, "
          f"scored {end - judged:.2f} s: {trials / (end - start):.0f} trials/s end to end")
    return trials / (end - start)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=4_000)
    parser.add_argument("--workers", default="1,2",
                        help="comma-separated worker counts to compare (default 1,2)")
    parser.add_argument("--read-first", action="store_true",
                        help="read every trial before judging (default: read while judging, "
                        "as `run` does)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="passes per worker count; the best counts (default 3)")
    args = parser.parse_args()
    register_script("instant", scripted_judge.answer)  # a function workers can import
    counts = [int(n) for n in args.workers.split(",")]
    passes: dict[int, list[float]] = {n: [] for n in counts}
    for _ in range(max(1, args.repeat)):
        for n in counts:
            passes[n].append(one_pass(args.trials, n, args.read_first))
    rates = {n: max(rate) for n, rate in passes.items()}
    print(f"throughput (best of {max(1, args.repeat)}): {rates[counts[0]]:.0f} trials/s end to "
          f"end with {counts[0]} worker(s) (target >= 100)")
    for n in counts[1:]:
        print(f"{n} workers: {rates[n] / rates[counts[0]]:.2f}x {counts[0]} worker(s) "
              f"on {os.cpu_count()} cores (target with 2 workers on 2 cores: >= 1.6x); pass "
              "by pass: " + ", ".join(f"{a / b:.2f}x" for a, b in zip(passes[n], passes[counts[0]],
                                                                   strict=True)))


if __name__ == "__main__":
    main()
