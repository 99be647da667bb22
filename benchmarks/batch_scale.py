"""Batch judging at benchmark scale: files under the providers' limits, and an unattended
``run --batch-auto`` that survives a killed client.

For N synthetic trials (default 10,000) with ~40,000-character trajectories:

1. export: the run's queued judge requests are split into batch files for OpenAI (50,000
   requests / 200 MB) and Anthropic (100,000 / 256 MB); it prints the files written, the
   largest file in bytes and requests against each limit, the time, and the peak memory
   that splitting allocated (tracemalloc: it must stay near one request, not all of them);
2. done-when: ``agentcredit run --batch-auto`` in a subprocess against a loopback fake of
   OpenAI's Files + Batches API (its own process), killed once while it polls the judging
   batches and started again; it prints the rounds, every batch with its size, whether
   every request is accounted for in the ledger (answered, failed or sent again, none twice
   without a reason), and that a rerun creates no batch.

``python benchmarks/batch_scale.py [--trials N] [--steps S]``
"""

from __future__ import annotations

import argparse
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.cli.test_batch_pipeline import responder  # noqa: E402
from tests.judging.synthetic import write_task, write_trials  # noqa: E402
from tests.llm.fake_batch_server import batch_server_process  # noqa: E402

from agentcredit.llm.batch_split import LIMITS, MB, split_pending  # noqa: E402
from agentcredit.llm.cache import ResponseCache  # noqa: E402


def _run(args: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    code = f"from agentcredit.cli.app import app; app({args!r})"
    return subprocess.Popen([sys.executable, "-c", code], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _sql(db: Path, query: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(db, timeout=30) as conn:
        try:
            return list(conn.execute(query))
        except sqlite3.OperationalError:
            return []


def _in_open_batches(db: Path) -> int:
    rows = _sql(db, "SELECT SUM(requests) FROM batch_jobs WHERE collected = 0 AND requests > 1")
    return int(rows[0][0] or 0) if rows else 0


def export_report(cache_path: Path, folder: Path) -> None:
    cache = ResponseCache(cache_path)
    queued = cache.pending_count()
    for provider in ("openai", "anthropic"):
        rows = ((k, f"{provider}/m", b) for k, _, b in cache.iter_pending())
        tracemalloc.start()
        start = time.perf_counter()
        report = split_pending(rows, folder / provider, prefix="export")
        seconds = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        limit = LIMITS[provider]
        big = max(report.files, key=lambda f: f.bytes)
        most = max(len(f.keys) for f in report.files)
        total = sum(f.bytes for f in report.files)
        print(f"  {provider:<9} {len(report.files)} files for {queued} requests "
              f"({total / MB:.0f} MB); largest {big.bytes / MB:.1f} MB of "
              f"{limit.max_bytes / MB:.0f} MB, most requests {most} of {limit.max_requests}; "
              f"{seconds:.1f} s; peak "
              f"allocated while splitting {peak / MB:.1f} MB")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=10_000)
    parser.add_argument("--steps", type=int, default=110)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="batch-scale-"))
    write_task(work / "tasks")
    write_trials(work / "trials", args.trials, steps=args.steps)
    sample = next((work / "trials").rglob("trajectory.json")).stat().st_size
    print(f"{args.trials} synthetic trials, {args.steps} steps, ~{sample:,} bytes of "
          f"trajectory JSON each; work folder {work}")
    proc, url = batch_server_process(responder, polls=3)
    env = {**os.environ, "OPENAI_API_KEY": "sk-test", "AGENTCREDIT_BATCH_POLL_SECONDS": "0.5",
           "AGENTCREDIT_STATUS_SECONDS": "3600"}
    run = work / "run"
    base = ["run", str(work / "tasks"), str(work / "trials"), "--out", str(run), "--model",
            "openai/judge-model", "--base-url", f"{url}/v1"]
    try:
        start = time.perf_counter()
        for step in ([*base, "--batch"],  # queues the checklist's synthesis
                     ["batch", "submit", str(run), "--base-url", f"{url}/v1"],
                     ["batch", "collect", str(run), "--wait"],
                     [*base, "--batch"]):  # queues the judging round
            done = _run(step, env)
            assert done.wait() == 0, done.stderr.read() if done.stderr else ""
        print(f"export of the judging round ({time.perf_counter() - start:.0f} s so far):")
        export_report(run / "responses.sqlite", work / "export")
        client = _run([*base, "--batch-auto"], env)
        db = run / "responses.sqlite"
        queued = _sql(db, "SELECT COUNT(*) FROM pending")[0][0]
        while _in_open_batches(db) < queued:
            assert client.poll() is None, client.stderr.read() if client.stderr else ""
            time.sleep(0.2)
        time.sleep(1.0)  # every judging batch is created: the client is polling them
        client.send_signal(signal.SIGKILL)
        client.wait()
        print("client killed while polling; open batches then:",
              _sql(db, "SELECT COUNT(*) FROM batch_jobs WHERE collected = 0")[0][0])
        again = _run([*base, "--batch-auto"], env)
        code = again.wait()
        err = again.stderr.read().decode() if again.stderr else ""
        print(f"restarted client exit {code} after {time.perf_counter() - start:.0f} s in all"
              + (f": {err[-300:]}" if code else ""))
        jobs = _sql(db, "SELECT id, requests, bytes FROM batch_jobs ORDER BY submitted_at")
        for job_id, requests, size in jobs:
            print(f"  {job_id}: {requests} requests, {int(size) / MB:.1f} MB")
        states = dict(_sql(db, "SELECT state, COUNT(*) FROM batch_requests GROUP BY state"))
        twice = _sql(db, "SELECT COUNT(*) FROM (SELECT key FROM batch_requests GROUP BY key "
                         "HAVING COUNT(*) > 1)")[0][0]
        pending = _sql(db, "SELECT COUNT(*) FROM pending")[0][0]
        print(f"requests by state: {states}; sent in two batches: {twice}; still queued: "
              f"{pending}")
        scored = _sql(run / "run.sqlite", "SELECT COUNT(DISTINCT trial_id) FROM judgments "
                      "WHERE source = 'llm'")
        print(f"trials with LLM judgments: {scored[0][0] if scored else '?'} of {args.trials}")
        rerun = _run([*base, "--batch-auto"], env)
        rerun.wait()
        after = _sql(db, "SELECT COUNT(*) FROM batch_jobs")[0][0]
        print(f"rerun: exit {rerun.returncode}, batches before {len(jobs)}, after {after}")
    finally:
        proc.terminate()


if __name__ == "__main__":
    main()
