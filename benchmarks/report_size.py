"""The size of ``report.html`` as a run grows (target: under 5 MB at any N).

Synthetic trials (``tests/judging/synthetic.py``, 60 steps, ~40 KB of trajectory each) spread
over tasks are scored without a model (checklists derived from the verifiers), then the
report is written; it prints trials, tasks, the report's size and the trials it shows.

    python benchmarks/report_size.py [--trials 400 2000] [--tasks 1 20]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.judging.synthetic import write_task, write_trials

import agentcredit


def measure(trials: int, tasks: int) -> None:
    root = Path(tempfile.mkdtemp())
    for n in range(tasks):
        name = f"synthetic-task-{n}"
        write_task(root / "tasks", name)
        write_trials(root / "jobs" / name, trials // tasks, steps=60, task=name, seed=n)
    start = time.perf_counter()
    result = agentcredit.score(root / "tasks", root / "jobs", root / "run")
    elapsed = time.perf_counter() - start
    assert result.report_path is not None
    html = result.report_path.read_text(encoding="utf-8")
    shown = html.count('<details class="trial"')
    print(f"{result.trials:>6} trials, {tasks:>3} tasks: report {len(html.encode()) / 1e6:6.2f} "
          f"MB, {shown} trials shown in full, run {elapsed:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, nargs="+", default=[400, 2000])
    parser.add_argument("--tasks", type=int, nargs="+", default=[1, 20])
    args = parser.parse_args()
    if len(args.trials) != len(args.tasks):
        parser.error("--trials and --tasks take one value per run each "
                     f"(here {len(args.trials)} and {len(args.tasks)})")
    for trials, tasks in zip(args.trials, args.tasks, strict=True):
        measure(trials, tasks)


if __name__ == "__main__":
    main()
