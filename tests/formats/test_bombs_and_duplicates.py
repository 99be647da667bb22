"""Held-out hostile inputs, one named test per class: resource bombs that must stay small,
and duplicate trial ids that must stay apart (never one replacing the other)."""

from __future__ import annotations

import json
import resource
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcredit.cli.app import app
from agentcredit.formats import load
from tests.conftest import EXAMPLES, ROOT, write_json

runner = CliRunner()


def _zstd_bomb(path: Path, inflated: int, declared: int) -> None:
    """An .eval archive whose sample member inflates to ``inflated`` bytes of JSON-ish zeros
    while declaring ``declared`` (written by hand: zipfile cannot write method 93)."""
    zstandard = pytest.importorskip("zstandard")
    compressor = zstandard.ZstdCompressor(level=19).compressobj()
    chunk = b"0" * (1 << 20)
    data = b"".join(compressor.compress(chunk) for _ in range(inflated >> 20)) + \
        compressor.flush()
    header = json.dumps({"version": 2, "eval": {"task": "t", "model": "m"}}).encode()
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("header.json", header)
        archive.writestr("samples/s1_epoch_1.json", data)  # stored: patched below
    raw = bytearray(path.read_bytes())
    name = b"samples/s1_epoch_1.json"
    local = raw.find(b"PK\x03\x04" + raw[4:6], raw.find(b"PK\x03\x04", 1))
    central = raw.find(b"PK\x01\x02" + raw[raw.find(b"PK\x01\x02") + 4:raw.find(
        b"PK\x01\x02") + 6], raw.rfind(b"PK\x01\x02") - 1)
    assert raw[local + 30:local + 30 + len(name)] == name
    struct.pack_into("<H", raw, local + 8, 93)
    struct.pack_into("<I", raw, local + 22, declared)
    assert raw[central + 46:central + 46 + len(name)] == name
    struct.pack_into("<H", raw, central + 10, 93)
    struct.pack_into("<I", raw, central + 24, declared)
    path.write_bytes(bytes(raw))


def test_an_eval_member_inflating_past_its_declared_size_is_cut_off(tmp_path: Path) -> None:
    path = tmp_path / "bomb.eval"
    _zstd_bomb(path, inflated=256 << 20, declared=1000)
    assert path.stat().st_size < 1 << 20
    # the peak is measured after the imports, so only what load() itself holds is counted
    code = ("import resource, sys; from agentcredit.formats import load; "
            "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss; "
            f"r = load([{str(path)!r}]); "
            "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024); "
            "print(r.errors[0].reason)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    peak_mb, reason = done.stdout.splitlines()[:2]
    assert "inflates past the 1000 bytes it declares" in reason
    assert int(peak_mb) < 128  # the 256 MB it inflates to would be held otherwise


def test_an_eval_member_declaring_more_than_the_limit_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "huge.eval"
    _zstd_bomb(path, inflated=1 << 20, declared=3 << 30)
    result = load([path])
    assert any("over the" in e.reason and "MB limit" in e.reason for e in result.errors)


def _tb1_task(folder: Path, yaml_text: str) -> None:
    folder.mkdir(parents=True)
    (folder / "task.yaml").write_text(yaml_text)
    (folder / "run-tests.sh").write_text("pytest tests/test_outputs.py\n")


LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
    f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
    for i in range(9)) + "instruction: *j\n"


def test_yaml_billion_laughs_and_recursive_aliases_are_one_line_errors(tmp_path: Path) -> None:
    _tb1_task(tmp_path / "laughs", LAUGHS)
    _tb1_task(tmp_path / "loop", "instruction: &x [*x]\n")
    _tb1_task(tmp_path / "good", "instruction: Write hello.txt\nparser_name: pytest\n")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = load([tmp_path])
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200 * 1024
    assert [t.id for t in result.tasks] == ["good"]
    reasons = sorted(e.reason for e in result.errors)
    assert len(reasons) == 2 and all("aliases (*name) are not accepted" in r for r in reasons)


def test_skill_front_matter_with_aliases_is_refused_and_the_import_goes_on(
        tmp_path: Path) -> None:
    from agentcredit.errors import InputError
    from agentcredit.skills.agent_skills import parse_skill_md

    text = "---\nname: bomb\ndescription: &d [a, a]\nother: [*d, *d]\n---\nbody\n"
    with pytest.raises(InputError, match="aliases"):
        parse_skill_md(text, "SKILL.md", "bomb")


@pytest.mark.parametrize("toml", ["[task]\nn = " + "9" * 100_000 + "\n",
                                  "x = " + "[" * 5000 + "]" * 5000 + "\n",
                                  "x = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n"])
def test_toml_giant_integers_and_deep_nesting_are_one_line_errors(tmp_path: Path,
                                                                   toml: str) -> None:
    task = tmp_path / "t"
    task.mkdir()
    (task / "instruction.md").write_text("Do it.\n")
    (task / "task.toml").write_text(toml)
    result = load([tmp_path])
    (error,) = result.errors
    assert error.reason.startswith("malformed TOML: ") and "\n" not in error.reason


def test_inspect_log_with_many_samples_reads_every_sample(tmp_path: Path) -> None:
    # Its speed (quadratic before: 22.5 s for 20,000 samples) is benchmarks/read_throughput's
    # to measure; a wall-clock bound here would fail on a busy machine.
    samples = [{"id": f"s{n}", "epoch": 1, "input": "q", "target": "a",
                "messages": [{"role": "user", "content": "q"}],
                "scores": {"match": {"value": "C"}}} for n in range(20_000)]
    write_json(tmp_path / "log.json", {"version": 2, "eval": {"task": "t", "model": "m"},
                                       "samples": samples})
    result = load([tmp_path / "log.json"])
    assert len(result.trials) == 20_000 and len(result.tasks) == 20_000
    assert len({t.id for t in result.trials}) == 20_000  # every sample its own trial


def _harbor_trial(job: Path, reward: float) -> None:
    trial = job / "hello__AAAA111"
    write_json(trial / "result.json", {"trial_name": "hello__AAAA111", "task_name": "hello",
                                       "verifier_result": {"rewards": {"reward": reward}}})


def test_the_same_trial_name_in_two_jobs_is_kept_twice_never_replaced(tmp_path: Path) -> None:
    _harbor_trial(tmp_path / "job-a", 1.0)
    _harbor_trial(tmp_path / "job-b", 0.0)
    result = load([tmp_path])
    assert sorted(t.id for t in result.trials) == ["hello__AAAA111", "hello__AAAA111@job-b"]
    assert {t.id: t.outcome for t in result.trials}["hello__AAAA111"] == "pass"
    assert any("kept as 'hello__AAAA111@job-b'" in w.reason for w in result.warnings)
    again = load([tmp_path / "job-a", tmp_path / "job-a" / "hello__AAAA111"])
    assert len(again.trials) == 1 and any("read once" in w.reason for w in again.warnings)
    assert again.errors == []


def test_two_examples_jobs_with_one_trial_name_both_get_scores(tmp_path: Path) -> None:
    import shutil

    jobs = tmp_path / "jobs"
    shutil.copytree(EXAMPLES / "jobs" / "toy-agent-noskills", jobs / "a")
    shutil.copytree(EXAMPLES / "jobs" / "toy-agent-noskills", jobs / "b")
    out = runner.invoke(app, ["run", str(EXAMPLES / "tasks"), str(jobs), "--out",
                              str(tmp_path / "run")])
    assert out.exit_code == 0, out.output
    rows = (tmp_path / "run" / "scores.csv").read_text().splitlines()
    assert len(rows) == 1 + 8  # 4 trials per copy, none replaced


def _claude_events(first_pad: int) -> list[dict[str, object]]:
    return [
        {"type": "system", "subtype": "init", "session_id": "s", "model": "claude-x",
         "pad": "x" * first_pad},
        {"type": "assistant", "message": {"id": "m1", "role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}]}},
        {"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "a.txt"}]}}]


def test_a_json_lines_log_whose_first_line_is_over_1_mib_is_still_json_lines(
        tmp_path: Path) -> None:
    path = tmp_path / "big-first.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in _claude_events(2 << 20)) + "\n")
    result = load([path])
    assert result.errors == []
    (trial,) = result.trials
    assert trial.format == "claude-code" and trial.steps[0].tool_calls[0].name == "Bash"


def test_a_line_over_the_line_limit_is_an_error_not_a_silent_drop(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import agentcredit.safe_io as io_module

    monkeypatch.setattr(io_module, "MAX_LINE_BYTES", 1 << 20)
    events = _claude_events(0)
    lines = [json.dumps(e) for e in events]
    lines.insert(2, json.dumps({"type": "assistant", "message": {
        "id": "m2", "role": "assistant", "content": [{"type": "text", "text": "y" * (3 << 20)}]}}))
    path = tmp_path / "long-line.jsonl"
    path.write_text("\n".join(lines) + "\n")
    result = load([path])
    (trial,) = result.trials
    assert trial.steps  # the other lines were read
    (error,) = result.errors
    assert not error.fatal and "line 3" in error.reason
    assert "over the 1 MB limit for one JSON Lines line" in error.reason
    out = runner.invoke(app, ["inspect", str(path)])
    assert out.exit_code == 2  # something was not read: never exit 0


def test_a_non_utf8_folder_name_and_a_300_character_id_do_not_stop_the_run(
        tmp_path: Path) -> None:
    import os
    import shutil

    jobs = tmp_path / "jobs"
    shutil.copytree(EXAMPLES / "jobs" / "toy-agent-noskills", jobs / "job")
    odd = os.fsdecode(b"csv-sales-summary__Qm4\xff\xfe")
    (jobs / "job" / "csv-sales-summary__Qm4tR2a").rename(jobs / "job" / odd)
    doc = json.loads((jobs / "job" / odd / "result.json").read_text())
    doc["trial_name"] = odd
    (jobs / "job" / odd / "result.json").write_text(json.dumps(doc))
    samples = [{"id": "s" * 300, "epoch": 1, "input": "What is 1+2?", "target": "3",
                "messages": [{"role": "user", "content": "What is 1+2?"},
                             {"role": "assistant", "content": "3"}],
                "scores": {"match": {"value": "C"}}}]
    write_json(jobs / "inspect.json", {"version": 2, "eval": {"task": "t", "model": "m"},
                                       "samples": samples})
    tasks = tmp_path / "tasks"
    shutil.copytree(EXAMPLES / "tasks", tasks)
    shutil.copy(jobs / "inspect.json", tasks / "inspect.json")
    out = runner.invoke(app, ["run", str(tasks), str(jobs), "--out", str(tmp_path / "run")],
                        env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    rows = (tmp_path / "run" / "scores.csv").read_text().splitlines()
    assert any("csv-sales-summary__Qm4\ufffd\ufffd" in row for row in rows)
    assert "8 trials" in out.output.replace("\n", " ") or len(rows) == 1 + 4


def test_a_300_character_task_id_gets_a_checklist_file_it_can_write(tmp_path: Path) -> None:
    from agentcredit.checklists.freeze import freeze, load_checklists, make_checklist
    from agentcredit.checklists.rules import load_rules
    from agentcredit.schema import ChecklistItem

    rules = load_rules(None)
    ids = ["t/" + "s" * 300, "t/" + "s" * 299 + "x"]
    for task_id in ids:
        item = ChecklistItem(id="C1", text="The file exists.", route="assertion",
                             checks=("test_a",))
        freeze(make_checklist(task_id, [item], [], rules, synthesizer="derived",
                              prompt_version="none"), tmp_path)
    assert all(len(p.name.encode()) <= 200 for p in tmp_path.iterdir())
    assert sorted(load_checklists(tmp_path)) == sorted(ids)  # distinct files, ids intact
