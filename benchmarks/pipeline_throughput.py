"""Trials scored per second by the whole GCPC judging pipeline with a zero-latency model.

500 synthetic trials (30-step trajectories, 10-item checklists) are read, judged by a
scripted model that answers instantly (evidence view, prompt, cache, answer validation,
quote check, run store), fused and scored. Prints trials per second (target >= 100).

    python benchmarks/pipeline_throughput.py [--trials 500]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.judging import scripted_judge
from tests.judging.synthetic import write_task, write_trials

from agentcredit.checklists import derive_checklist, load_rules
from agentcredit.formats import load
from agentcredit.llm import ModelClient, ResponseCache, make_provider, register_script
from agentcredit.runs import JudgeOptions, judge_trials, run_scores
from agentcredit.schema import Checklist
from agentcredit.store import RunStore


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=500)
    args = parser.parse_args()
    register_script("instant", lambda m, s: scripted_judge.answer(m, s))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_task(root / "tasks")
        write_trials(root / "trials", args.trials, steps=30)
        start = time.perf_counter()
        (task,) = load([root / "tasks"]).tasks
        trials = load([root / "trials"]).trials
        checklist = derive_checklist(task, load_rules())
        assert isinstance(checklist, Checklist) and len(checklist.items) == 10
        store = RunStore(root / "run")
        model = ModelClient(make_provider("scripted/instant"),
                            cache=ResponseCache(root / "run" / "responses.sqlite"))
        loaded = time.perf_counter()
        summary = asyncio.run(judge_trials(store, trials, {task.id: checklist}, {task.id: task},
                                           JudgeOptions(model=model, concurrency=8)))
        rows = run_scores(store)
        end = time.perf_counter()
    assert summary.judged == args.trials and len(rows) == args.trials
    print(f"{args.trials} trials: read {loaded - start:.2f} s, judged and scored "
          f"{end - loaded:.2f} s")
    print(f"throughput: {args.trials / (end - start):.0f} trials/s end to end "
          f"({args.trials / (end - loaded):.0f} judging+scoring)  (target >= 100)")


if __name__ == "__main__":
    main()
