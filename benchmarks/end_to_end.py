"""N synthetic trials end to end: ``run --batch-auto`` against the loopback Batches fake, then
``analyze`` and ``report``; the time and peak RSS of each command and the sizes of what they
wrote.

The trials are ``tests/judging/synthetic.py``'s (60 steps, ~40 KB of ATIF trajectory each,
one task); the fake answers every judging request in its own process. Each command runs in a
subprocess of its own (``wait4``'s ``ru_maxrss``, as ``benchmarks/memory_scale.py``).

``python benchmarks/end_to_end.py [--trials 100000] [--keep]``
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from memory_scale import MODEL, peak_rss  # noqa: E402
from tests.cli.test_batch_pipeline import responder  # noqa: E402
from tests.judging.synthetic import write_task, write_trials  # noqa: E402
from tests.llm.fake_batch_server import batch_server_process  # noqa: E402


def size_mb(path: Path) -> float:
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=100_000)
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="end-to-end-"))
    write_task(work / "tasks")
    start = time.perf_counter()
    write_trials(work / "trials", args.trials, steps=60)
    print(f"{args.trials:,} trials written ({size_mb(work / 'trials'):,.0f} MB) in "
          f"{time.perf_counter() - start:.0f} s; work folder {work}", flush=True)
    proc, url = batch_server_process(responder, polls=1)
    env = {**os.environ, "OPENAI_API_KEY": "sk-test", "AGENTCREDIT_BATCH_POLL_SECONDS": "0.2",
           "AGENTCREDIT_STATUS_SECONDS": "3600"}
    out = work / "run"
    commands = {
        "run --batch-auto": ["run", str(work / "tasks"), str(work / "trials"), "--out", str(out),
                             "--model", MODEL, "--base-url", f"{url}/v1", "--batch-auto"],
        "analyze": ["analyze", str(out)],
        "report": ["report", str(out)],
    }
    try:
        for name, command in commands.items():
            rss, seconds, tree = peak_rss(command, env)
            print(f"{name}: {seconds:,.0f} s ({args.trials / seconds:,.1f} trials/s), "
                  f"peak RSS {rss:,.0f} MB (its processes together: {tree:,.0f} MB)",
                  flush=True)
    finally:
        proc.terminate()
    for name in ("report.html", "run.sqlite", "responses.sqlite", "scores.csv",
                 "judgments.jsonl", "batches"):
        if (out / name).exists():
            print(f"{name}: {size_mb(out / name):,.1f} MB")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
