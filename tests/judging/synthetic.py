"""Synthetic Harbor trials and a 10-check task, for resume tests and benchmarks."""

from __future__ import annotations

import json
import random
from pathlib import Path

CHECKS = [f"test_outputs.py::TestOutput::test_property_{i}" for i in range(10)]


def write_task(root: Path, name: str = "synthetic-task") -> Path:
    """A Harbor task with 10 pytest checks (so derived checklists have 10 items)."""
    folder = root / name
    (folder / "tests").mkdir(parents=True, exist_ok=True)
    sentences = [f"Property {i} of `/app/result_{i}.txt` must hold value {i * 7}."
                 for i in range(10)]
    (folder / "instruction.md").write_text("Ten result files are checked.\n" + "\n".join(sentences))
    (folder / "task.toml").write_text('version = "1.0"\n[metadata]\ndifficulty = "easy"\n')
    tests = ["class TestOutput:"]
    for i in range(10):
        tests.append(f"    def test_property_{i}(self):\n"
                     f'        """result_{i}.txt holds value {i * 7} for property {i}."""\n'
                     f"        assert open('/app/result_{i}.txt').read() == '{i * 7}'\n")
    (folder / "tests" / "test_outputs.py").write_text("\n".join(tests))
    (folder / "tests" / "test.sh").write_text("pytest /tests/test_outputs.py\n")
    return folder


def write_trials(root: Path, count: int, *, steps: int = 30, task: str = "synthetic-task",
                 seed: int = 0) -> Path:
    """``count`` trial folders in one job, each with an ATIF trajectory of ``steps`` steps."""
    rng = random.Random(seed)
    job = root / "job-noskills"
    for t in range(count):
        folder = job / f"{task}__{t:07d}"
        (folder / "agent").mkdir(parents=True, exist_ok=True)
        (folder / "verifier").mkdir(exist_ok=True)
        passed = [rng.random() < 0.7 for _ in CHECKS]
        out = [{"step_id": 1, "source": "user", "message": "Ten result files are checked."}]
        for i in range(2, steps + 2):
            k = i % 10
            out.append({
                "step_id": i, "source": "agent", "message": f"Writing result {k}.",
                "tool_calls": [{"tool_call_id": f"c{i}", "function_name": "run_shell_command",
                                "arguments": {"command": f"echo {k * 7} > /app/result_{k}.txt"
                                              f" && cat /app/result_{k}.txt"}}],
                "observation": {"results": [{"source_call_id": f"c{i}",
                                             "content": f"{k * 7}\n" + f"log line {t}.{i}\n"
                                             * 20}]}})
        (folder / "agent" / "trajectory.json").write_text(json.dumps(
            {"schema_version": "ATIF-v1.2", "session_id": str(t),
             "agent": {"name": "synthetic", "version": "1"}, "steps": out}))
        tests = [{"name": c, "status": "passed" if p else "failed"}
                 for c, p in zip(CHECKS, passed, strict=True)]
        (folder / "verifier" / "ctrf.json").write_text(json.dumps({"results": {"tests": tests}}))
        (folder / "result.json").write_text(json.dumps({
            "trial_name": folder.name, "task_name": task, "exception_info": None,
            "verifier_result": {"rewards": {"reward": float(all(passed))}}}))
    return job


def fill_store(run: Path, count: int, *, tasks: int = 100, seed: int = 0) -> None:
    """Grow the run folder ``run`` (one finished ``run`` of one synthetic trial, no model)
    to ``count`` trials over ``tasks`` tasks, straight into its store: the template trial's
    rows copied with random outcomes, checks, verifier and LLM labels and a holistic score,
    as a model run would leave them (for the analysis and report at any N, no judging)."""
    import sqlite3

    rng = random.Random(seed)
    db = sqlite3.connect(run / "run.sqlite")
    [trial] = db.execute("SELECT * FROM trials").fetchall()
    items = [r[0] for r in db.execute("SELECT DISTINCT item_id FROM judgments")]
    judged = db.execute("SELECT checklist_hash FROM judgments LIMIT 1").fetchone()[0]
    db.execute("DELETE FROM trials")
    db.execute("DELETE FROM judgments")
    db.execute("DELETE FROM done")
    db.execute("INSERT OR REPLACE INTO meta VALUES ('model', '\"openai/judge-model\"')")
    labels = ("yes", "no", "abstain")
    for start in range(0, count, 10_000):
        trials, judgments, holistic = [], [], []
        for t in range(start, min(count, start + 10_000)):
            tid = f"synthetic-{t % tasks:03d}__{t:07d}"
            passed = [rng.random() < 0.7 for _ in CHECKS]
            checks = json.dumps({c: "passed" if p else "failed"
                                 for c, p in zip(CHECKS, passed, strict=True)})
            trials.append((tid, f"synthetic-{t % tasks:03d}", "pass" if all(passed) else "fail",
                           trial[3], None, checks, *trial[6:]))  # no skill-pair condition
            for source in ("verifier", "llm"):
                judgments += [(tid, item, source, rng.choice(labels), None, "", "[]", judged,
                               "openai/judge-model" if source == "llm" else None, "j1", 0)
                              for item in items]
            holistic.append((tid, rng.random(), "", "openai/judge-model", "h1", 0))
        db.executemany(f"INSERT INTO trials VALUES ({','.join('?' * len(trial))})", trials)
        db.executemany("INSERT INTO judgments VALUES (?,?,?,?,?,?,?,?,?,?,?)", judgments)
        db.executemany("INSERT INTO done VALUES (?, 'llm', 0)", [(t[0],) for t in trials])
        db.executemany("INSERT INTO holistic VALUES (?,?,?,?,?,?)", holistic)
        db.commit()
    db.close()
