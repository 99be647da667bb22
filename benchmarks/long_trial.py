"""Peak memory and time of scoring one long trial of tiny steps: is the walk linear?

It writes one Harbor trial whose ATIF trajectory holds N tiny agent steps (default 287,000,
about 64 MiB: shell commands of the shapes the walk reads, variables, files written and read,
pipes, a Python one-liner, each with a line of output), then measures two processes
(``wait4``'s ``ru_maxrss``):

- ``walk``: the trial loaded, the whole-trial walk (:func:`agentcredit.evidence.dataflow.
  flow_of`) and the evidence steps (:func:`agentcredit.evidence.view.evidence_steps`) with
  every step's line provenance;
- ``run``: ``agentcredit run`` over it, scored: a checklist and a judgment from the tests'
  scripted model (``tests/judging/scripted_judge.py``, answering at once in this process),
  so that the evidence view, the judge prompt, the quote check and the store are all
  measured (without a model ``run`` reads the verifier's checks and never views the steps).

It prints peak RSS and seconds of each at N/4 and N, the ratio of seconds for 4x the steps
(linear: about 4) and whether the run at N stays under 1 GB (the target).
``python benchmarks/long_trial.py [--steps 287000]``
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.judging.synthetic import CHECKS, write_task  # noqa: E402

SHAPES = (("N{k}={k}", ""), ("echo $N{k} >> /tmp/out{j}.txt", ""), ("cat /tmp/out{j}.txt", "{k}"),
          ("ls /app | head -n {k}", "a.txt"), ("grep -c x /app/data{j}.csv", "{k}"),
          ("python3 -c 'print({k} * 2)'", "{k2}"), ("wc -l < /app/data{j}.csv", "{k}"),
          ("cd /app && git status --short", " M a.txt"))


def write_trial(root: Path, steps: int) -> Path:
    """One trial folder with ``steps`` tiny agent steps (streamed to disk)."""
    folder = root / "job" / f"synthetic-task__{steps:07d}"
    (folder / "agent").mkdir(parents=True)
    (folder / "verifier").mkdir()
    with (folder / "agent" / "trajectory.json").open("w") as out:
        out.write('{"schema_version": "ATIF-v1.2", "session_id": "long", "agent": {"name": '
                  '"synthetic", "version": "1"}, "steps": [{"step_id": 1, "source": "user", '
                  '"message": "Ten result files are checked."}')
        for i in range(2, steps + 2):
            k, j = i % 97, i % 13
            command, shown = SHAPES[i % len(SHAPES)]
            out.write(", " + json.dumps({
                "step_id": i, "source": "agent",
                "tool_calls": [{"tool_call_id": f"c{i}", "function_name": "bash",
                                "arguments": {"command": command.format(k=k, j=j)}}],
                "observation": {"results": [{"source_call_id": f"c{i}", "content":
                                             shown.format(k=k, k2=2 * k) + f"\n{i}"}]}},
                separators=(",", ":")))
        out.write("]}")
    tests = [{"name": c, "status": "passed"} for c in CHECKS]
    (folder / "verifier" / "ctrf.json").write_text(json.dumps({"results": {"tests": tests}}))
    (folder / "result.json").write_text(json.dumps({
        "trial_name": folder.name, "task_name": "synthetic-task", "exception_info": None,
        "verifier_result": {"rewards": {"reward": 1.0}}}))
    return folder.parent


WALK = """
import sys
from agentcredit.evidence.dataflow import flow_of
from agentcredit.evidence.view import evidence_steps
from agentcredit.formats import load
trial = load([sys.argv[1]]).trials[0]
steps = evidence_steps(trial, flow=flow_of(trial))
print(sum(len(s.origins) for s in steps.values()))
"""


RUN = """
from agentcredit.llm import register_script
from tests.judging import scripted_judge
register_script("instant", scripted_judge.answer)
from agentcredit.cli.app import app
app()
"""


def peak(args: list[str]) -> tuple[float, float]:
    """Peak RSS (MB) and seconds of one child process."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, *args], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env={**os.environ})
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(proc.stderr.read().decode()[-2000:] if proc.stderr else "failed")
    return usage.ru_maxrss / 1024, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=287_000)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="long-trial-"))
    try:
        write_task(work / "tasks")
        rows = {}
        for steps in (args.steps // 4, args.steps):
            trials = write_trial(work / f"trials-{steps}", steps)
            size = sum(f.stat().st_size for f in trials.rglob("*.json")) / 2**20
            walk = peak(["-c", WALK, str(trials)])
            run = peak(["-c", RUN, "run", str(work / "tasks"), str(trials), "--out",
                        str(work / f"run-{steps}"), "--model", "scripted/instant"])
            rows[steps] = (walk, run)
            print(f"{steps:>8} steps ({size:.0f} MiB): walk {walk[0]:.0f} MB in {walk[1]:.0f} s;"
                  f" run {run[0]:.0f} MB in {run[1]:.0f} s", flush=True)
            shutil.rmtree(trials)
        low, high = rows[args.steps // 4], rows[args.steps]
        print(f"time ratio for 4x the steps: walk {high[0][1] / low[0][1]:.1f}x, run "
              f"{high[1][1] / low[1][1]:.1f}x; memory ratio: walk {high[0][0] / low[0][0]:.1f}x,"
              f" run {high[1][0] / low[1][0]:.1f}x (linear: at most 4x)")
        verdict = "holds" if high[1][0] < 1024 else "MISSED"
        print(f"peak RSS at {args.steps:,} steps: walk {high[0][0]:.0f} MB, run (scored) "
              f"{high[1][0]:.0f} MB: the 1 GB target {verdict}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
