"""Reading throughput of Harbor/ATIF trials as a ratio to bare ``json.loads``.

Writes N synthetic trial folders (result.json, verifier/ctrf.json, agent/trajectory.json
with S steps each) into a temporary folder, then times ``agentcredit.formats.load`` over
the job folder against ``json.loads`` of the same files (read from disk both times).
Prints the ratio bare_seconds / agentcredit_seconds; the target is at least 0.5.

    python benchmarks/read_throughput.py [--trials 300] [--steps 30] [--repeat 5] [--compact]

``--compact`` writes every file as one line (no indentation), as some harnesses do.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

from agentcredit.formats import load


def write_trials(root: Path, trials: int, steps: int, rng: random.Random,
                 compact: bool = False) -> list[Path]:
    files: list[Path] = []
    for t in range(trials):
        folder = root / "job" / f"task-{t % 40}__{t:07d}"
        (folder / "agent").mkdir(parents=True)
        (folder / "verifier").mkdir()
        out = [{"step_id": 1, "source": "user", "message": "Do the task. " * 40}]
        for i in range(2, steps + 2):
            output = "\n".join(f"line {j}: {rng.random():.6f}" for j in range(rng.randint(5, 60)))
            out.append({"step_id": i, "timestamp": "2026-01-01T00:00:00Z", "source": "agent",
                        "message": "I will run a command. " * 5,
                        "reasoning_content": "Thinking about it. " * 10,
                        "tool_calls": [{"tool_call_id": f"c{i}", "function_name": "shell",
                                        "arguments": {"command": f"python3 step_{i}.py"}}],
                        "observation": {"results": [{"source_call_id": f"c{i}",
                                                     "content": output}]}})
        doc = {"schema_version": "ATIF-v1.2", "session_id": str(t),
               "agent": {"name": "a", "version": "1"}, "steps": out}
        tests = [{"name": f"test_outputs.py::TestX::test_{k}", "status": "passed"}
                 for k in range(7)]
        result = {"trial_name": folder.name, "task_name": folder.name.split("__")[0],
                  "verifier_result": {"rewards": {"reward": 1.0}}, "exception_info": None}
        for path, value in ((folder / "agent" / "trajectory.json", doc),
                            (folder / "verifier" / "ctrf.json", {"results": {"tests": tests}}),
                            (folder / "result.json", result)):
            path.write_text(json.dumps(value, indent=None if compact else 2))
            files.append(path)
    return files


def best_of(repeat: int, fn: object) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=300)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--compact", action="store_true", help="one-line JSON files")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = write_trials(root, args.trials, args.steps, random.Random(0), args.compact)
        size = sum(f.stat().st_size for f in files)
        bare = best_of(args.repeat, lambda: [json.loads(f.read_bytes()) for f in files])
        ours = best_of(args.repeat, lambda: load([root / "job"]))
        result = load([root / "job"])
        assert len(result.trials) == args.trials and not result.errors
    layout = "one-line" if args.compact else "indented"
    print(f"{args.trials} trials, {args.steps} steps each, {size / 1e6:.1f} MB of {layout} JSON")
    print(f"bare json.loads: {bare:.3f} s   agentcredit load: {ours:.3f} s")
    print(f"throughput ratio (bare / agentcredit): {bare / ours:.2f}  (target >= 0.5)")


if __name__ == "__main__":
    main()
