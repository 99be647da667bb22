"""Writes the tiny example benchmark in ``examples/`` (Harbor layout).

Three tasks and two jobs (no-skills and skills) of a made-up agent, ``toy-agent``, whose
trials cover a pass, fails with some and with no tests passed, and a harness error. The
files are committed; rerun this script only to change them:

    python examples/build_examples.py
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).parent

TASKS: dict[str, dict[str, Any]] = {
    "csv-sales-summary": {
        "instruction": (
            "The file `/app/sales.csv` lists orders with the columns `region`, `product` and "
            "`amount`.\n\nWrite `/app/summary.json` containing one object that maps each region "
            "to the total `amount` of its orders, rounded to 2 decimals.\nRegions must appear "
            "in alphabetical order.\nDo not modify `/app/sales.csv`.\n"
        ),
        "meta": ("easy", "data-processing", ["csv", "json", "aggregation"]),
        "tests": '''"""Checks for csv-sales-summary."""
import csv
import hashlib
import json
import uuid
from pathlib import Path

import pytest

SUMMARY = Path("/app/summary.json")
SALES = Path("/app/sales.csv")
SALES_SHA256 = "5f1c1b0fd1a1c0b86e0f6b6b8a4f0a3f2d36f0c9e1f5c0a7a2b8e4c3d1f0a9b8"


@pytest.fixture
def summary():
    return json.loads(SUMMARY.read_text())


def test_summary_file_exists():
    """summary.json must exist."""
    assert SUMMARY.exists(), "summary.json was not written"


class TestSummaryContent:
    def test_totals_per_region(self, summary):
        """Each region maps to the rounded total of its orders."""
        totals = {}
        with SALES.open() as handle:
            for row in csv.DictReader(handle):
                totals[row["region"]] = totals.get(row["region"], 0.0) + float(row["amount"])
        expected = {k: round(v, 2) for k, v in totals.items()}
        assert summary == expected, "region totals are wrong"

    def test_regions_sorted(self, summary):
        """Regions appear in alphabetical order."""
        assert list(summary) == sorted(summary), "regions are not in alphabetical order"


def test_sales_unchanged():
    """The input file is left as it was."""
    digest = hashlib.sha256(SALES.read_bytes()).hexdigest()
    assert digest == SALES_SHA256, "sales.csv was modified"
''',
        "solution": "python3 - <<'EOF'\nimport csv, json\nt = {}\nfor r in csv.DictReader(open('/app/sales.csv')):\n    t[r['region']] = t.get(r['region'], 0) + float(r['amount'])\njson.dump({k: round(t[k], 2) for k in sorted(t)}, open('/app/summary.json', 'w'))\nEOF\n",
    },
    "log-error-filter": {
        "instruction": (
            "A web server writes its log to `/var/log/app/server.log`.\n\n"
            "Create the executable script `/app/errors.sh` that prints every line of the log "
            "whose level is `ERROR`, in the original order.\nThen run it and save its output to "
            "`/app/errors.txt`.\n"
        ),
        "meta": ("easy", "system-administration", ["bash", "logs"]),
        "tests": '''"""Checks for log-error-filter."""
import os
import subprocess
from pathlib import Path

SCRIPT = Path("/app/errors.sh")
OUTPUT = Path("/app/errors.txt")
LOG = Path("/var/log/app/server.log")


def _expected():
    return [line for line in LOG.read_text().splitlines() if " ERROR " in line]


def test_script_is_executable():
    """errors.sh exists and is executable."""
    assert SCRIPT.exists() and os.access(SCRIPT, os.X_OK), "errors.sh missing or not executable"


def test_script_prints_error_lines():
    """Running errors.sh prints exactly the ERROR lines, in order."""
    out = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == _expected(), "errors.sh output differs"


def test_errors_file_saved():
    """errors.txt holds the script's output."""
    assert OUTPUT.read_text().splitlines() == _expected(), "errors.txt content differs"
''',
        "solution": "printf '#!/bin/bash\\ngrep \" ERROR \" /var/log/app/server.log\\n' > /app/errors.sh\nchmod +x /app/errors.sh\n/app/errors.sh > /app/errors.txt\n",
    },
    "json-config-migrate": {
        "instruction": (
            "The service configuration `/app/config.v1.json` uses the old schema.\n\n"
            "Write `/app/config.v2.json` in the new schema: rename the key `host` to "
            "`hostname`, convert `timeout` from seconds to milliseconds under the key "
            "`timeout_ms`, and add `\"version\": 2`.\nKeep every other key unchanged.\n"
            "The file must be valid JSON indented with 2 spaces.\n"
        ),
        "meta": ("medium", "software-engineering", ["json", "migration"]),
        "tests": '''"""Checks for json-config-migrate."""
import json
import uuid
from pathlib import Path

OLD = Path("/app/config.v1.json")
NEW = Path("/app/config.v2.json")


def _load():
    return json.loads(OLD.read_text()), json.loads(NEW.read_text())


class TestMigration:
    def test_hostname_renamed(self):
        """host is renamed to hostname."""
        old, new = _load()
        assert "host" not in new and new["hostname"] == old["host"], "host was not renamed"

    def test_timeout_in_ms(self):
        """timeout seconds become timeout_ms milliseconds."""
        old, new = _load()
        assert new["timeout_ms"] == old["timeout"] * 1000, "timeout_ms is wrong"

    def test_version_added(self):
        """version 2 is recorded."""
        assert _load()[1]["version"] == 2, "version is not 2"

    def test_other_keys_kept(self):
        """Every other key keeps its value."""
        old, new = _load()
        rest = {k: v for k, v in old.items() if k not in ("host", "timeout")}
        assert all(new.get(k) == v for k, v in rest.items()), "other keys changed"


def test_two_space_indent():
    """The file is indented with 2 spaces."""
    text = NEW.read_text()
    assert text == json.dumps(json.loads(text), indent=2) + "\\n" or \\
        text == json.dumps(json.loads(text), indent=2), "not indented with 2 spaces"
''',
        "solution": "python3 - <<'EOF'\nimport json\nc = json.load(open('/app/config.v1.json'))\nc['hostname'] = c.pop('host')\nc['timeout_ms'] = c.pop('timeout') * 1000\nc['version'] = 2\nopen('/app/config.v2.json', 'w').write(json.dumps(c, indent=2) + '\\n')\nEOF\n",
    },
}

TEST_SH = """#!/bin/bash
mkdir -p /logs/verifier
pip install --no-cache-dir pytest==8.3.4 pytest-json-ctrf==0.3.6 >/dev/null
pytest --ctrf /logs/verifier/ctrf.json /tests/test_outputs.py -rA -v
if [ $? -eq 0 ]; then
    echo 1 > /logs/verifier/reward.txt
else
    echo 0 > /logs/verifier/reward.txt
fi
exit 0
"""


def write_task(name: str, spec: dict[str, Any]) -> None:
    folder = ROOT / "tasks" / name
    (folder / "tests").mkdir(parents=True, exist_ok=True)
    (folder / "solution").mkdir(exist_ok=True)
    (folder / "environment").mkdir(exist_ok=True)
    (folder / "instruction.md").write_text(spec["instruction"])
    difficulty, category, tags = spec["meta"]
    tag_list = ", ".join(f'"{t}"' for t in tags)
    (folder / "task.toml").write_text(
        f'version = "1.0"\n\n[metadata]\nauthor_name = "agentcredit examples"\n'
        f'difficulty = "{difficulty}"\ncategory = "{category}"\ntags = [{tag_list}]\n\n'
        "[verifier]\ntimeout_sec = 300.0\n\n[agent]\ntimeout_sec = 900.0\n\n"
        "[environment]\ncpus = 1\nmemory_mb = 2048\n"
    )
    (folder / "tests" / "test.sh").write_text(TEST_SH)
    (folder / "tests" / "test_outputs.py").write_text(spec["tests"])
    (folder / "solution" / "solve.sh").write_text("#!/bin/bash\n" + spec["solution"])
    (folder / "environment" / "Dockerfile").write_text(
        "FROM python:3.11-slim\nWORKDIR /app\n"
    )


# Each trial: (job, task, trial suffix, steps, per-test results or None, exception or None)
Step = tuple[str, str, dict[str, Any] | None, str | None]


def atif(task: str, steps: list[Step], model: str) -> dict[str, Any]:
    out: list[dict[str, Any]] = [{
        "step_id": 1, "timestamp": "2026-03-02T10:00:00.000Z", "source": "user",
        "message": TASKS[task]["instruction"],
    }]
    for i, (message, tool, args, result) in enumerate(steps, start=2):
        step: dict[str, Any] = {
            "step_id": i, "timestamp": f"2026-03-02T10:00:{i * 7:02d}.000Z", "source": "agent",
            "model_name": model, "message": message,
        }
        if tool is not None and args is not None:
            call_id = f"{tool}-{i}"
            step["tool_calls"] = [{"tool_call_id": call_id, "function_name": tool,
                                   "arguments": args}]
            step["observation"] = {"results": [{"source_call_id": call_id,
                                                "content": result or ""}]}
        out.append(step)
    return {
        "schema_version": "ATIF-v1.2", "session_id": f"session-{task}",
        "agent": {"name": "toy-agent", "version": "0.3.1", "model_name": model},
        "steps": out,
        "final_metrics": {"total_prompt_tokens": 1200 * len(out),
                          "total_completion_tokens": 90 * len(out),
                          "total_cached_tokens": 400 * len(out), "total_steps": len(out)},
    }


def shell(cmd: str, output: str, code: int = 0) -> tuple[str, dict[str, Any], str]:
    return ("run_shell_command", {"command": cmd},
            f"Command: {cmd}\nOutput: {output}\nExit Code: {code}")


def s(message: str, call: tuple[str, dict[str, Any], str] | None = None) -> Step:
    if call is None:
        return (message, "", None, None)
    return (message, call[0], call[1], call[2])


SALES_HEAD = "region,product,amount\nnorth,widget,12.50\nsouth,gadget,7.25\neast,widget,3.10"

TRIALS: list[dict[str, Any]] = [
    {  # PASS
        "job": "toy-agent-noskills", "task": "csv-sales-summary", "id": "Qm4tR2a",
        "steps": [
            s("I will look at the CSV first.", shell("head -n 4 /app/sales.csv", SALES_HEAD)),
            s("I will compute totals per region and write them sorted.", shell(
                "python3 -c \"import csv,json;t={};[t.__setitem__(r['region'],"
                "t.get(r['region'],0)+float(r['amount'])) for r in csv.DictReader("
                "open('/app/sales.csv'))];json.dump({k:round(t[k],2) for k in sorted(t)},"
                "open('/app/summary.json','w'))\"", "")),
            s("Checking the result.", shell(
                "cat /app/summary.json", '{"east": 3.1, "north": 12.5, "south": 7.25}')),
            s("summary.json holds the sorted regional totals."),
        ],
        "tests": {"test_outputs.py::test_summary_file_exists": "passed",
                  "test_outputs.py::TestSummaryContent::test_totals_per_region": "passed",
                  "test_outputs.py::TestSummaryContent::test_regions_sorted": "passed",
                  "test_outputs.py::test_sales_unchanged": "passed"},
    },
    {  # FAIL with some tests passed: unsorted regions
        "job": "toy-agent-skills", "task": "csv-sales-summary", "id": "Lx9pV3c",
        "steps": [
            s("Reading the data.", shell("head -n 4 /app/sales.csv", SALES_HEAD)),
            s("Writing totals.", shell(
                "python3 /tmp/sum.py && cat /app/summary.json",
                '{"north": 12.5, "south": 7.25, "east": 3.1}')),
            s("Done: totals written to /app/summary.json."),
        ],
        "tests": {"test_outputs.py::test_summary_file_exists": "passed",
                  "test_outputs.py::TestSummaryContent::test_totals_per_region": "passed",
                  "test_outputs.py::TestSummaryContent::test_regions_sorted": "failed",
                  "test_outputs.py::test_sales_unchanged": "passed"},
    },
    {  # FAIL with none passed: never wrote the file
        "job": "toy-agent-noskills", "task": "log-error-filter", "id": "Bf7kW1e",
        "steps": [
            s("Let me look at the log.", shell(
                "tail -n 3 /var/log/app/server.log",
                "cat: /var/log/app/server.log: No such file or directory", 1)),
            s("The log is missing, so there is nothing to filter. I created the script and "
              "everything works."),
        ],
        "tests": {"test_outputs.py::test_script_is_executable": "failed",
                  "test_outputs.py::test_script_prints_error_lines": "failed",
                  "test_outputs.py::test_errors_file_saved": "failed"},
    },
    {  # PASS
        "job": "toy-agent-skills", "task": "log-error-filter", "id": "Hs2nD8q",
        "steps": [
            s("Inspecting the log format.", shell(
                "head -n 3 /var/log/app/server.log",
                "2026-03-01 09:00:01 INFO started\n2026-03-01 09:00:02 ERROR db timeout\n"
                "2026-03-01 09:00:03 WARN slow request")),
            s("Writing the script.", (
                "write_file", {"file_path": "/app/errors.sh",
                               "content": "#!/bin/bash\ngrep ' ERROR ' /var/log/app/server.log\n"},
                "Successfully created and wrote to new file: /app/errors.sh")),
            s("Making it executable and saving the output.", shell(
                "chmod +x /app/errors.sh && /app/errors.sh > /app/errors.txt && cat /app/errors.txt",
                "2026-03-01 09:00:02 ERROR db timeout")),
            s("errors.sh prints the ERROR lines and errors.txt holds them."),
        ],
        "tests": {"test_outputs.py::test_script_is_executable": "passed",
                  "test_outputs.py::test_script_prints_error_lines": "passed",
                  "test_outputs.py::test_errors_file_saved": "passed"},
    },
    {  # FAIL with some passed: script not executable
        "job": "toy-agent-noskills", "task": "log-error-filter", "id": "Zc5mY0t",
        "steps": [
            s("Writing the filter script.", (
                "write_file", {"file_path": "/app/errors.sh",
                               "content": "grep ERROR /var/log/app/server.log\n"},
                "Successfully created and wrote to new file: /app/errors.sh")),
            s("Saving output.", shell("bash /app/errors.sh > /app/errors.txt; ls -l /app",
                                      "-rw-r--r-- 1 root root 39 errors.sh\n"
                                      "-rw-r--r-- 1 root root 37 errors.txt")),
            s("The task is complete."),
        ],
        "tests": {"test_outputs.py::test_script_is_executable": "failed",
                  "test_outputs.py::test_script_prints_error_lines": "passed",
                  "test_outputs.py::test_errors_file_saved": "passed"},
    },
    {  # PASS
        "job": "toy-agent-skills", "task": "json-config-migrate", "id": "Pa3eK7u",
        "steps": [
            s("Reading the old config.", shell(
                "cat /app/config.v1.json",
                '{"host": "db.internal", "port": 5432, "timeout": 30, "retries": 3}')),
            s("Migrating.", shell(
                "python3 /tmp/migrate.py && cat /app/config.v2.json",
                '{\n  "port": 5432,\n  "retries": 3,\n  "hostname": "db.internal",\n'
                '  "timeout_ms": 30000,\n  "version": 2\n}')),
            s("config.v2.json is written in the new schema."),
        ],
        "tests": {"test_outputs.py::TestMigration::test_hostname_renamed": "passed",
                  "test_outputs.py::TestMigration::test_timeout_in_ms": "passed",
                  "test_outputs.py::TestMigration::test_version_added": "passed",
                  "test_outputs.py::TestMigration::test_other_keys_kept": "passed",
                  "test_outputs.py::test_two_space_indent": "passed"},
    },
    {  # FAIL with some passed: timeout left in seconds, 4-space indent
        "job": "toy-agent-noskills", "task": "json-config-migrate", "id": "Rw8jN4s",
        "steps": [
            s("Reading the config.", shell(
                "cat /app/config.v1.json",
                '{"host": "db.internal", "port": 5432, "timeout": 30, "retries": 3}')),
            s("Writing the new file.", shell(
                "python3 /tmp/m.py && cat /app/config.v2.json",
                '{\n    "hostname": "db.internal",\n    "port": 5432,\n    "timeout_ms": 30,\n'
                '    "retries": 3,\n    "version": 2\n}')),
            s("Migration finished; all keys converted."),
        ],
        "tests": {"test_outputs.py::TestMigration::test_hostname_renamed": "passed",
                  "test_outputs.py::TestMigration::test_timeout_in_ms": "failed",
                  "test_outputs.py::TestMigration::test_version_added": "passed",
                  "test_outputs.py::TestMigration::test_other_keys_kept": "passed",
                  "test_outputs.py::test_two_space_indent": "failed"},
    },
    {  # harness error: the environment never started the verifier
        "job": "toy-agent-skills", "task": "csv-sales-summary", "id": "Ue1gT6b",
        "steps": [s("Reading the data.", shell("head -n 4 /app/sales.csv", SALES_HEAD))],
        "tests": None,
        "exception": ("EnvironmentStartTimeoutError",
                      "Docker container did not become healthy within 600 seconds"),
    },
]


def ctrf(tests: dict[str, str]) -> dict[str, Any]:
    counts = {k: sum(1 for v in tests.values() if v == k) for k in ("passed", "failed",
                                                                      "skipped")}
    return {"results": {
        "tool": {"name": "pytest", "version": "8.3.4"},
        "summary": {"tests": len(tests), **counts, "pending": 0, "other": 0,
                    "start": 1772445600.0, "stop": 1772445601.2},
        "tests": [{"name": name, "status": status,
                   "raw_status": "call_" + ("passed" if status == "passed" else "failed"),
                   "duration": 0.01, "retries": 0, "file_path": "test_outputs.py",
                   **({"message": "The test failed in the call phase",
                       "trace": "AssertionError"} if status == "failed" else {})}
                  for name, status in tests.items()],
    }}


def write_trial(spec: dict[str, Any]) -> None:
    job, task = spec["job"], spec["task"]
    name = f"{task}__{spec['id']}"
    folder = ROOT / "jobs" / job / name
    (folder / "agent").mkdir(parents=True, exist_ok=True)
    model = "toy-provider/toy-model-1"
    tests = spec.get("tests")
    exc = spec.get("exception")
    reward = None if tests is None else float(all(v == "passed" for v in tests.values()))
    result = {
        "id": str(uuid.uuid5(uuid.NAMESPACE_URL, name)),
        "task_name": task, "trial_name": name,
        "trial_uri": f"file:///runs/jobs/{job}/{name}",
        "task_id": {"path": f"examples/tasks/{task}"}, "source": None,
        "task_checksum": "0" * 64,
        "config": {"task": {"path": f"examples/tasks/{task}"}, "trial_name": name,
                   "trials_dir": f"jobs/{job}", "timeout_multiplier": 1.0,
                   "agent": {"name": "toy-agent", "model_name": model, "kwargs": {}},
                   "job_id": f"job-{job}"},
        "agent_info": {"name": "toy-agent", "version": "0.3.1",
                       "model_info": {"name": "toy-model-1", "provider": "toy-provider"}},
        "agent_result": {"n_input_tokens": 5000, "n_cache_tokens": 1800,
                         "n_output_tokens": 420, "cost_usd": None},
        "verifier_result": None if reward is None else {"rewards": {"reward": reward}},
        "exception_info": None if exc is None else {
            "exception_type": exc[0], "exception_message": exc[1],
            "exception_traceback": f"Traceback (most recent call last):\n  ...\n{exc[0]}: {exc[1]}",
            "occurred_at": "2026-03-02T10:10:00.000000Z"},
        "started_at": "2026-03-02T09:58:00.000000Z",
        "finished_at": "2026-03-02T10:02:00.000000Z",
    }
    (folder / "result.json").write_text(json.dumps(result, indent=4) + "\n")
    (folder / "agent" / "trajectory.json").write_text(
        json.dumps(atif(task, spec["steps"], "toy-model-1"), indent=2) + "\n")
    if tests is not None:
        (folder / "verifier").mkdir(exist_ok=True)
        (folder / "verifier" / "ctrf.json").write_text(json.dumps(ctrf(tests), indent=2) + "\n")
        (folder / "verifier" / "reward.txt").write_text(f"{int(reward or 0)}\n")
    if exc is not None:
        (folder / "exception.txt").write_text(f"{exc[0]}: {exc[1]}\n")


def main() -> None:
    for name, spec in TASKS.items():
        write_task(name, spec)
    for spec in TRIALS:
        write_trial(spec)
    for job in {t["job"] for t in TRIALS}:
        (ROOT / "jobs" / job / "config.json").write_text(json.dumps(
            {"job_name": job, "agents": [{"name": "toy-agent"}], "n_attempts": 1}, indent=2)
            + "\n")


if __name__ == "__main__":
    main()
