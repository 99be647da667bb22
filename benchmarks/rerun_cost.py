"""What a rerun of a finished run costs against its first pass (target: at most 10%).

N synthetic trials (default 10,000; 60 steps, ~40 KB of ATIF each) go through
``run --batch-auto`` against the loopback Batches fake (synthesis round, judging round,
scores, analysis, report); then the same command runs again on the finished run. A trial
folder the run finished with and that is unchanged is not read again, so the rerun reads
only the store (scores, analysis, report). It prints both wall times and their ratio, and
the same for ``run`` with no model.

``python benchmarks/rerun_cost.py [--trials N]``
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.memory_scale import MODEL, peak_rss  # noqa: E402
from tests.cli.test_batch_pipeline import responder  # noqa: E402
from tests.judging.synthetic import write_task, write_trials  # noqa: E402
from tests.llm.fake_batch_server import batch_server_process  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=10_000)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="rerun-cost-"))
    write_task(work / "tasks")
    write_trials(work / "trials", args.trials, steps=60)
    proc, url = batch_server_process(responder, polls=1)
    env = {**os.environ, "OPENAI_API_KEY": "sk-test", "AGENTCREDIT_BATCH_POLL_SECONDS": "0.2",
           "AGENTCREDIT_STATUS_SECONDS": "3600"}
    print(f"{args.trials:,} synthetic trials of 60 steps")
    try:
        for name, extra in (("run", []), ("run --batch-auto", [
                "--model", MODEL, "--base-url", f"{url}/v1", "--batch-auto"])):
            command = ["run", str(work / "tasks"), str(work / "trials"), "--out",
                       str(work / name.replace(" ", "")), *extra]
            _, first = peak_rss(command, env)
            _, again = peak_rss(command, env)
            print(f"{name}: first pass {first:.1f} s, rerun of the finished run {again:.1f} s "
                  f"({again / first:.1%} of the first pass; target <= 10%)", flush=True)
    finally:
        proc.terminate()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
