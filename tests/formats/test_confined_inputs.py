"""Trial folders cannot send files from outside the input to the model (issue 40): a link
to a file outside the paths given is refused with a reason, and a FIFO never blocks."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agentcredit.formats import load
from tests.conftest import EXAMPLES, ROOT

TRIAL = EXAMPLES / "jobs" / "toy-agent-skills" / "log-error-filter__Hs2nD8q"
SECRET = "OPENAI_API_KEY=sk-planted-secret-4711"


def _job(tmp_path: Path, member: str = "") -> Path:
    job = tmp_path / "input" / "job"
    shutil.copytree(TRIAL, job / TRIAL.name)
    trial = job / TRIAL.name
    if member == "verifier/reward.txt":  # read only when result.json gives no reward
        result = json.loads((trial / "result.json").read_text())
        result.pop("verifier_result", None)
        (trial / "result.json").write_text(json.dumps(result))
    return trial


def _text_of(result: object) -> str:
    return repr(result)


@pytest.mark.parametrize("member", ["agent/trajectory.json", "verifier/ctrf.json",
                                    "verifier/reward.txt"])
def test_a_link_out_of_the_input_is_refused_and_never_read(tmp_path: Path, member: str
                                                           ) -> None:
    trial = _job(tmp_path, member)
    planted = tmp_path / "planted.txt"  # beside the input, not in it
    original = (trial / member).read_text()
    planted.write_text(original.replace("}", f', "x": "{SECRET}"}}', 1)
                       if member.endswith(".json") else f"{SECRET}\n")
    (trial / member).unlink()
    (trial / member).symlink_to(planted)
    result = load([tmp_path / "input"])
    assert SECRET not in _text_of(result.trials)
    assert [e for e in result.errors
            if "links outside the input" in e.reason and str(planted) in e.reason], \
        result.errors


def test_a_link_inside_the_input_is_read(tmp_path: Path) -> None:
    trial = _job(tmp_path)
    kept = tmp_path / "input" / "shared-trajectory.json"
    shutil.move(trial / "agent" / "trajectory.json", kept)
    (trial / "agent" / "trajectory.json").symlink_to(kept)
    result = load([tmp_path / "input"])
    assert [t.id for t in result.trials] and result.trials[0].steps


def test_a_link_to_proc_environ_is_refused(tmp_path: Path) -> None:
    trial = _job(tmp_path)
    (trial / "agent" / "trajectory.json").unlink()
    (trial / "agent" / "trajectory.json").symlink_to("/proc/self/environ")
    result = load([tmp_path / "input"])
    assert any("links outside the input" in e.reason for e in result.errors)
    assert "PATH=" not in _text_of(result.trials)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("member", ["agent/trajectory.json", "verifier/ctrf.json",
                                    "verifier/reward.txt", "agent/claude-code.txt"])
def test_a_fifo_in_a_trial_is_refused_without_blocking(tmp_path: Path, member: str) -> None:
    trial = _job(tmp_path, member)
    if member == "agent/claude-code.txt":  # the log a format sniff opens first
        (trial / "agent" / "trajectory.json").unlink()
    else:
        (trial / member).unlink()
    os.mkfifo(trial / member)
    code = ("from agentcredit.formats import load; "
            f"r = load([{str(tmp_path / 'input')!r}]); "
            "print([e.reason for e in r.errors])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=30)
    assert done.returncode == 0, done.stderr
    assert "not a regular file" in done.stdout


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("name", ["trajectory.json", "session.jsonl", "log.eval"])
def test_a_fifo_given_or_found_loose_is_refused_without_blocking(tmp_path: Path,
                                                                 name: str) -> None:
    folder = tmp_path / "input"
    folder.mkdir()
    os.mkfifo(folder / name)
    for given in (folder, folder / name):
        code = ("from agentcredit.formats import load; "
                f"r = load([{str(given)!r}]); print([e.reason for e in r.errors])")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              cwd=ROOT, timeout=30)
        assert done.returncode == 0, done.stderr
        assert "regular file" in done.stdout or "no trials or tasks" in done.stdout, \
            done.stdout


def test_a_skill_folder_cannot_import_files_from_outside_it(tmp_path: Path) -> None:
    from agentcredit.skills.agent_skills import import_paths

    skills = tmp_path / "skills"
    shutil.copytree(EXAMPLES / "skills" / "log-level-filtering", skills / "filtering")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.env").write_text(SECRET)
    (outside / "SKILL.md").write_text(f"---\nname: planted\ndescription: {SECRET}\n---\nx\n")
    (skills / "filtering" / "linked").symlink_to(outside, target_is_directory=True)
    (skills / "planted").mkdir()
    (skills / "planted" / "SKILL.md").symlink_to(outside / "SKILL.md")
    result = import_paths([skills])
    assert [s.id for s in result.skills] == ["log-level-filtering"]
    assert SECRET not in repr(result.skills)
    assert not any("linked" in rel for s in result.skills for rel in s.files)
    reasons = dict(result.errors)
    assert any(path.endswith("planted/SKILL.md") and "links outside the input" in why
               for path, why in reasons.items()), reasons


def test_a_bank_file_linked_out_of_its_folder_is_refused(tmp_path: Path) -> None:
    from agentcredit.errors import InputError
    from agentcredit.skills.bank import read_bank

    bank = tmp_path / "bank"
    bank.mkdir()
    (tmp_path / "planted.json").write_text(json.dumps({"secret": SECRET}))
    (bank / "bank.json").symlink_to(tmp_path / "planted.json")
    with pytest.raises(InputError, match="links outside the input"):
        read_bank(bank)


def test_a_trajectory_image_outside_the_trial_never_reaches_the_model(tmp_path: Path) -> None:
    from agentcredit.llm.types import ImagePart, TextPart
    from agentcredit.rewards.prompts import fine_messages
    from agentcredit.schema import ImageRef, Observation, Origin, Step

    trial = tmp_path / "trial"
    trial.mkdir()
    (trial / "shot.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"inside")
    (tmp_path / "outside.png").write_bytes(b"\x89PNG\r\n\x1a\n" + SECRET.encode())
    images = (ImageRef(mime_type="image/png", path=str(trial / "shot.png")),
              ImageRef(mime_type="image/png", path=str(tmp_path / "outside.png")),
              ImageRef(mime_type="image/png", path="/proc/self/environ"))
    step = Step(index=1, source="agent", origin=Origin(path="x"),
                observations=(Observation(text="screenshot taken", images=images),))
    messages = fine_messages("do it", [], {}, [step], images_root=str(trial))
    parts = messages[1].content
    assert isinstance(parts, tuple)
    sent = [p for p in parts if isinstance(p, ImagePart)]
    notes = " ".join(p.text for p in parts if isinstance(p, TextPart))
    assert len(sent) == 1 and SECRET not in repr(parts)
    assert notes.count("links outside the input") == 2


def test_the_report_says_which_inputs_were_not_read_and_why(tmp_path: Path) -> None:
    import agentcredit

    trial = _job(tmp_path)
    (tmp_path / "planted.json").write_text(json.dumps({"secret": SECRET}))
    (trial / "agent" / "trajectory.json").unlink()
    (trial / "agent" / "trajectory.json").symlink_to(tmp_path / "planted.json")
    result = agentcredit.score(EXAMPLES / "tasks", tmp_path / "input", tmp_path / "run")
    report = (tmp_path / "run" / "report.html").read_text()
    assert SECRET not in report
    assert "inputs not read (1)" in report and "links outside the input" in report
    assert result.load_errors[0].path.endswith("trajectory.json")
