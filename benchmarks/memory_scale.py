"""Peak memory against the number of trials: does a run hold every trial?

For each N (default 1,000, 8,000 and 32,000) it writes N synthetic Harbor trials (60 steps,
~40 KB of ATIF trajectory each) and measures the peak RSS of a whole ``agentcredit``
process (``wait4``'s ``ru_maxrss``: its largest process) and, in brackets, the peak of its
processes' RSS added up (sampled from ``/proc`` every 0.2 s: with a model, judging workers
run beside the first process) for:

- ``run``: no model (checklists derived from the verifier, items judged from the per-check
  results);
- ``run --batch``: the judging round queued for a batch (the checklist was synthesized
  through the loopback Batches fake beforehand, in its own process);
- ``run --batch-auto``: from nothing to the end against the loopback Batches fake (synthesis
  round, judging round, scores, report);
- ``skills reward`` (mode ``rewards``, not in the default modes): one skill with a rubric
  verifies every trial turn by turn, the scripted verifier answering from a loopback
  OpenAI-compatible server (coarse and fine calls), then the per-turn rows and page;
- ``skills build`` (mode ``build``, not in the default modes): a bank from every trial as
  teacher trials, the scripted synthesizer answering from a loopback server (one task and
  teacher: the stage-1 prompt shows 32 of the N trials).

It prints a table of peak RSS per N and mode, and the slope in MB per 1,000 trials between
the smallest and the largest N (target: at most 5 MB per 1,000 trials, and the largest N
within 150 MB of the smallest).

``python benchmarks/memory_scale.py [--trials 1000 8000 32000]
[--modes run batch auto rewards build]``
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.cli.test_batch_pipeline import responder  # noqa: E402
from tests.judging.synthetic import fill_store, write_task, write_trials  # noqa: E402
from tests.llm.fake_batch_server import batch_server_process  # noqa: E402
from tests.llm.fake_server import server_process  # noqa: E402
from tests.rewards import scripted_verifier  # noqa: E402
from tests.skills import scripted_skills  # noqa: E402
from tests.skills.helpers import make_skill  # noqa: E402

from agentcredit.schema import Lineage  # noqa: E402
from agentcredit.skills.bank import freeze_bank, make_bank  # noqa: E402

MODES = ("run", "batch", "auto", "rewards", "build", "analyze", "report")
MODEL = "openai/judge-model"


class Peak(NamedTuple):
    """One command's peak RSS in MB (its largest process), wall time in seconds, and the
    peak of its processes' RSS added up (MB; judging workers are processes of their own)."""

    rss: float
    seconds: float
    tree: float


def peak_rss(args: list[str], env: dict[str, str]) -> Peak:
    """Run one ``agentcredit`` command and measure it (see :class:`Peak`)."""
    code = f"from agentcredit.cli.app import app; app({args!r})"
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    tree = [0.0]
    sampler = threading.Thread(target=_sample_tree, args=(proc.pid, tree), daemon=True)
    sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    sampler.join()
    if os.waitstatus_to_exitcode(status) != 0:
        err = proc.stderr.read().decode() if proc.stderr else ""
        raise SystemExit(f"agentcredit {' '.join(args[:2])} failed: {err[-2000:]}")
    proc.stderr.close() if proc.stderr else None
    return Peak(usage.ru_maxrss / 1024, seconds, tree[0])


def _sample_tree(root: int, peak: list[float]) -> None:
    """Every 0.2 s until ``root`` ends: the RSS of ``root`` and its descendants added up
    (Linux ``/proc``; elsewhere it stays 0)."""
    while Path(f"/proc/{root}/status").exists():
        parents: dict[int, int] = {}
        for stat in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                parents[int(stat.parent.name)] = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        family, grew = {root}, True
        while grew:
            more = {pid for pid, parent in parents.items() if parent in family} - family
            family, grew = family | more, bool(more)
        total = 0
        for pid in family:
            with contextlib.suppress(OSError, ValueError, IndexError):
                text = Path(f"/proc/{pid}/status").read_text()
                total += int(text.split("VmRSS:", 1)[1].split()[0])
        peak[0] = max(peak[0], total / 1024)
        time.sleep(0.2)


def verifier_answer(body: dict[str, Any]) -> str:
    """The scripted turn verifier behind the loopback server (``rewards`` mode)."""
    return scripted_verifier.answer(body["messages"],
                                    body["response_format"]["json_schema"]["schema"])


def rewards_rss(work: Path, trials: Path, count: int, env: dict[str, str]) -> Peak:
    """``skills reward`` over ``trials`` with one rubric skill (see the module docstring)."""
    bank = work / "bank"
    if not bank.exists():
        skill = make_skill("sums", lineage=Lineage(stage="import", sources=("x",)))
        freeze_bank(make_bank([skill], benchmark=None, embedding="lexical-tfidf-1",
                              rules_version="r", prompt_version="p"), bank)
    with server_process(responder=verifier_answer) as url:
        return peak_rss(["skills", "reward", str(bank), str(trials), "--out",
                         str(work / f"rewards-{count}"), "--model", "openai/verifier",
                         "--base-url", f"{url}/v1", "--skill", "sums"], env)


def skills_answer(body: dict[str, Any]) -> str:
    """The scripted SkillBank synthesizer behind the loopback server (``build`` mode)."""
    return scripted_skills.answer(body["messages"],
                                  body["response_format"]["json_schema"]["schema"])


def build_rss(work: Path, trials: Path, count: int, env: dict[str, str]) -> Peak:
    """``skills build`` over ``trials`` (see the module docstring)."""
    with server_process(responder=skills_answer) as url:
        return peak_rss(["skills", "build", str(trials), "--tasks", str(work / "tasks"),
                         "--out", str(work / f"bank-{count}"), "--model", "openai/synth",
                         "--base-url", f"{url}/v1"], env)


def analysis_rss(work: Path, count: int, modes: list[str], env: dict[str, str]
                 ) -> dict[str, Peak]:
    """``analyze`` and ``report`` of a run store of ``count`` trials over 100 tasks, made
    straight in the store (:func:`tests.judging.synthetic.fill_store`: verifier and LLM
    labels, a holistic score), no trial read or judged."""
    run, one = work / f"store-{count}", work / "one-trial"
    write_trials(one, 1)
    peak_rss(["run", str(work / "tasks"), str(one), "--out", str(run)], env)
    shutil.rmtree(one)
    fill_store(run, count)
    found = {mode: peak_rss([mode, str(run)], env) for mode in ("analyze", "report")
             if mode in modes}
    shutil.rmtree(run)
    return found


def measure(work: Path, count: int, modes: list[str], url: str,
            env: dict[str, str]) -> dict[str, Peak]:
    """Peak RSS and seconds of each mode over ``count`` fresh trials."""
    if set(modes) <= {"analyze", "report"}:  # no trial folders needed
        return analysis_rss(work, count, modes, env)
    tasks, trials = work / "tasks", work / f"trials-{count}"
    write_trials(trials, count, steps=60)
    model = ["--model", MODEL, "--base-url", f"{url}/v1"]
    found: dict[str, Peak] = {}
    if "run" in modes:
        found["run"] = peak_rss(["run", str(tasks), str(trials), "--out",
                                 str(work / f"run-{count}")], env)
    if "batch" in modes:
        out = work / f"batch-{count}"
        empty = work / "no-trials"
        write_trials(empty, 1)  # one trial: the checklist's synthesis round, not measured
        peak_rss(["run", str(tasks), str(empty), "--out", str(out), *model, "--batch-auto"],
                 env)
        found["batch"] = peak_rss(["run", str(tasks), str(trials), "--out", str(out), *model,
                                   "--batch"], env)
        shutil.rmtree(empty)
    if "auto" in modes:
        found["auto"] = peak_rss(["run", str(tasks), str(trials), "--out",
                                  str(work / f"auto-{count}"), *model, "--batch-auto"], env)
    if "rewards" in modes:
        found["rewards"] = rewards_rss(work, trials, count, env)
    if "build" in modes:
        found["build"] = build_rss(work, trials, count, env)
    shutil.rmtree(trials)
    if {"analyze", "report"} & set(modes):
        found.update(analysis_rss(work, count, modes, env))
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, nargs="+", default=[1_000, 8_000, 32_000])
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES[:3]))
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="memory-scale-"))
    write_task(work / "tasks")
    proc, url = batch_server_process(responder, polls=1)
    env = {**os.environ, "OPENAI_API_KEY": "sk-test", "AGENTCREDIT_BATCH_POLL_SECONDS": "0.2",
           "AGENTCREDIT_STATUS_SECONDS": "3600"}
    rows: dict[int, dict[str, Peak]] = {}
    try:
        for count in sorted(args.trials):
            rows[count] = measure(work, count, args.modes, url, env)
            print(f"{count:>7} trials: " + ", ".join(
                f"{mode} {peak.rss:.0f} MB ({peak.tree:.0f} MB all processes) in "
                f"{peak.seconds:.0f} s" for mode, peak in rows[count].items()), flush=True)
    finally:
        proc.terminate()
        shutil.rmtree(work, ignore_errors=True)
    print("\n| trials | " + " | ".join(f"`{m}` peak RSS (all processes)" for m in args.modes)
          + " |")
    print("|---|" + "---|" * len(args.modes))
    for count, found in rows.items():
        print(f"| {count:,} | " + " | ".join(f"{found[m].rss:.0f} MB ({found[m].tree:.0f} MB)"
                                              for m in args.modes) + " |")
    low, high = min(rows), max(rows)
    if high > low:
        for mode in args.modes:
            grew = rows[high][mode].rss - rows[low][mode].rss
            slope = grew / ((high - low) / 1000)
            print(f"{mode}: {grew:+.0f} MB from {low:,} to {high:,} trials, "
                  f"{slope:.2f} MB per 1,000 trials "
                  f"({'within' if slope <= 5 and grew <= 150 else 'OVER'} the target)")


if __name__ == "__main__":
    main()
