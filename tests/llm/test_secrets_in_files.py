"""Issue 57: secrets planted anywhere a trial holds text never reach a file the product
writes (every file under the output folder, SQLite stores read as bytes) nor a request; and
a judge's citation of a line it saw redacted still counts."""

from __future__ import annotations

import json
import shutil
import string
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentcredit
from agentcredit.evidence.quotes import check_quotes
from agentcredit.evidence.view import evidence_steps
from agentcredit.llm import register_script
from agentcredit.redact import Redactor
from agentcredit.schema import Citation, ItemJudgment, Observation, Origin, Step, ToolCall, Trial
from tests.judging import scripted_judge

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ALNUM = string.ascii_letters + string.digits
ENV_VALUE = "envsecret-9f8e7d6c5b4a3210"  # the run's own key: not key-shaped


@st.composite
def secrets(draw: st.DrawFn) -> tuple[str, str]:
    """A secret and the text that holds it, in one of the forms the issue names."""
    body = draw(st.text(ALNUM, min_size=24, max_size=40))
    upper = draw(st.text(string.ascii_uppercase + string.digits, min_size=16, max_size=16))
    form = draw(st.sampled_from(["openai", "aws", "github", "env", "assignment", "export",
                                 "json", "hf"]))
    value = {"openai": f"sk-{body}", "aws": f"AKIA{upper}", "github": f"ghp_{body}{body}"[:40],
             "env": ENV_VALUE}.get(form, body)
    text = {"assignment": f"DB_PASSWORD={value}", "export": f"export ANTHROPIC_API_KEY={value}",
            "json": f'{{"OPENAI_API_KEY": "{value}"}}', "hf": f"HF_TOKEN={value}",
            "env": f"echo $OPENAI_API_KEY\n{value}"}.get(form, f"using {value} now")
    return value, text


def _plant(jobs: Path, text: str, place: str) -> None:
    path = next(jobs.rglob("trajectory.json"))
    doc = json.loads(path.read_text())
    step = next(s for s in doc["steps"] if s.get("tool_calls"))
    if place == "output":
        step["observation"]["results"][0]["content"] += f"\n{text}"
    elif place == "arguments":
        step["tool_calls"][0]["arguments"]["command"] += f" # {text}"
    elif place == "message":
        step["message"] = f"{step.get('message', '')} {text}"
    else:
        doc["steps"][0]["message"] += f"\n{text}"  # the trial's copy of the instruction
    path.write_text(json.dumps(doc))
    result = path.parent.parent / "result.json"
    info = json.loads(result.read_text())
    info["exception_info"] = {"exception_type": "AuthenticationError",
                              "exception_message": f"bad key: {text}",
                              "exception_traceback": f"Traceback\nAuthenticationError: {text}",
                              "occurred_at": "2026-03-02T10:10:00.000000Z"}
    result.write_text(json.dumps(info))


def _files_hold(root: Path, value: str) -> list[str]:
    needle = value.encode()
    return [str(p.relative_to(root)) for p in root.rglob("*")
            if p.is_file() and needle in p.read_bytes()]


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(secret=secrets(), place=st.sampled_from(["output", "arguments", "message",
                                                "instruction"]))
def test_no_planted_secret_reaches_a_file_or_a_request(
        tmp_path_factory: pytest.TempPathFactory, secret: tuple[str, str], place: str) -> None:
    value, text = secret
    root = tmp_path_factory.mktemp("secrets")
    shutil.copytree(EXAMPLES / "jobs", root / "jobs")
    _plant(root / "jobs", text, place)
    sent: list[str] = []

    def judge(messages: list[dict[str, Any]], schema: dict[str, Any] | None) -> str:
        sent.append(json.dumps(messages))
        return scripted_judge.answer(messages, schema)

    register_script("secret-judge", judge)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", ENV_VALUE)
        agentcredit.score(EXAMPLES / "tasks", root / "jobs", root / "run",
                          model="scripted/secret-judge")
    assert sent, "the judge was asked nothing"
    assert not [m for m in sent if value in m]
    assert _files_hold(root / "run", value) == []


def test_a_citation_of_a_redacted_line_still_counts() -> None:
    key = "sk-" + "a1b2c3d4" * 4
    trial = Trial(id="t", task_id="x", outcome="fail", format="test", source_path="x", steps=(
        Step(index=0, source="user", message="Rotate the key.", origin=Origin(path="x")),
        Step(index=1, source="agent", origin=Origin(path="x"),
             tool_calls=(ToolCall(id="c", name="bash",
                                  arguments={"command": "python3 rotate.py"}),),
             observations=(Observation(call_id="c", text=f"new key written: {key}"),))))
    seen = Redactor()(f"new key written: {key}")
    assert key not in seen
    judged = check_quotes(ItemJudgment(item_id="C1", label="yes", source="llm",
                                       evidence=(Citation(step=2, quote=seen),)),
                          evidence_steps(trial))
    assert (judged.label, judged.evidence[0].kind) == ("yes", "output")


def test_assignments_and_environment_values_are_redacted(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", "plain-value-123456")
    redact = Redactor()
    for text in ("OPENAI_API_KEY=abcdef123456", "export ANTHROPIC_API_KEY=xyzxyz987654",
                 "DB_PASSWORD=hunter22x", '"OPENAI_API_KEY": "zzzzzzzzzz"',
                 "curl -H x plain-value-123456"):
        assert "[REDACTED:" in redact(text), text
    for text in ("max_tokens=4096", "the token count is 5", "tokenizer=gpt2abcdef"):
        assert redact(text) == text


@pytest.mark.parametrize("form", ["openai", "env", "assignment"])
def test_no_secret_in_batch_files_exports_or_turn_rewards(tmp_path: Path, form: str) -> None:
    from typer.testing import CliRunner

    from agentcredit.cli.app import app
    from tests.rewards import scripted_verifier
    from tests.rewards.test_turn_verifier import _bank

    value = {"openai": "sk-" + "Qw3" * 9, "env": ENV_VALUE, "assignment": "Zx8" * 9}[form]
    text = {"assignment": f"DB_PASSWORD={value}", "env": f"echo $OPENAI_API_KEY\n{value}",
            "openai": f"using {value} now"}[form]
    shutil.copytree(EXAMPLES / "jobs", tmp_path / "jobs")
    _plant(tmp_path / "jobs", text, "output")
    register_script("secret-judge", scripted_judge.answer)
    register_script("secret-verifier", scripted_verifier.answer)
    runner = CliRunner()
    run, jobs, tasks = tmp_path / "run", str(tmp_path / "jobs"), str(EXAMPLES / "tasks")
    commands = [
        ["run", tasks, jobs, "--out", str(run), "--model", "scripted/secret-judge", "--batch"],
        ["batch", "export", "--cache", str(run / "responses.sqlite"), "--out",
         str(tmp_path / "requests.jsonl")],
        ["run", tasks, jobs, "--out", str(run), "--model", "scripted/secret-judge"],
        ["judge", jobs, "--checklists", str(run / "checklists"), "--out",
         str(tmp_path / "judged"), "--model", "openai/batch-test", "--batch"],  # queued only
        ["batch", "export", "--cache", str(tmp_path / "judged" / "responses.sqlite"), "--out",
         str(tmp_path / "judged-requests.jsonl")],
        ["score", str(run), "--format", "jsonl", "--out", str(tmp_path / "jsonl")],
        ["score", str(run), "--format", "parquet", "--out", str(tmp_path / "parquet")],
        ["report", str(run), "--out", str(tmp_path / "report.html")],
        ["skills", "reward", str(_bank(tmp_path)), jobs, "--tasks", tasks, "--out",
         str(tmp_path / "rewards"), "--model", "scripted/secret-verifier"]]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", ENV_VALUE)
        for args in commands:
            result = runner.invoke(app, args)
            assert result.exit_code == 0, (args, result.output)
    assert (tmp_path / "requests.jsonl").exists() and (tmp_path / "rewards").exists()
    assert (tmp_path / "judged-requests.jsonl").read_text().count("\n") == 8  # one per trial
    assert _files_hold(tmp_path, value) == ["jobs/" + p for p in _planted(tmp_path / "jobs",
                                                                            value)]


def _planted(jobs: Path, value: str) -> list[str]:
    """The input files that hold the secret (the only files allowed to)."""
    return [str(p.relative_to(jobs)) for p in jobs.rglob("*")
            if p.is_file() and value.encode() in p.read_bytes()]
