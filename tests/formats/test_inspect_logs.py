"""Inspect AI logs written by the real inspect-ai package (offline, mockllm), read back."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcredit.cli.app import app
from agentcredit.formats import load
from agentcredit.formats.inspect_log import _member

runner = CliRunner()


def _write_logs(root: Path) -> tuple[Path, Path]:
    inspect_ai = pytest.importorskip("inspect_ai")
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate, use_tools
    from inspect_ai.tool import tool

    @tool
    def add():  # type: ignore[no-untyped-def]
        async def execute(x: int, y: int) -> str:
            """Add two numbers.

            Args:
                x: the first number
                y: the second number
            """
            return str(x + y)
        return execute

    usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)

    def outputs() -> list[ModelOutput]:
        # Each output gets a usage, so mockllm never counts tokens (tiktoken would download).
        made = []
        for x, y, answer in ((1, 2, "3"), (2, 2, "5")):
            call = ModelOutput.for_tool_call(model="mockllm/model", tool_name="add",
                                             tool_arguments={"x": x, "y": y})
            text = ModelOutput.from_content(model="mockllm/model",
                                            content=f"The answer is {answer}")
            call.usage = text.usage = usage
            made += [call, text]
        return made * 2

    task = inspect_ai.Task(
        dataset=[Sample(input="What is 1+2?", target="3", id="s1"),
                 Sample(input="What is 2+2?", target="4", id="s2")],
        solver=[use_tools(add()), generate()], scorer=includes(), name="adder")
    [log] = inspect_ai.eval(task, model=get_model("mockllm/model", custom_outputs=outputs()),
                            log_dir=str(root / "eval"), log_format="eval", epochs=2,
                            display="none", max_samples=1)
    [doc] = inspect_ai.eval(task, model=get_model("mockllm/model", custom_outputs=outputs()),
                            log_dir=str(root / "json"), log_format="json", display="none",
                            max_samples=1)
    return Path(log.location), Path(doc.location)


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return _write_logs(tmp_path_factory.mktemp("inspect"))


def test_eval_and_json_logs_read_every_sample_and_epoch(logs: tuple[Path, Path]) -> None:
    eval_log, json_log = logs
    with zipfile.ZipFile(eval_log) as archive:  # current Inspect compresses with Zstandard
        assert {i.compress_type for i in archive.infolist()} == {93}
    result = load([eval_log, json_log])
    assert result.errors == []
    assert len(result.trials) == 6  # 2 samples x 2 epochs (.eval) + 2 samples (.json)
    eval_trials = [t for t in result.trials if t.format == "inspect-eval"]
    assert sorted(t.id for t in eval_trials) == ["adder/s1/1", "adder/s1/2", "adder/s2/1",
                                                 "adder/s2/2"]
    for trial in result.trials:
        assert [s.source for s in trial.steps] == ["user", "agent", "agent"]
        call = trial.steps[1].tool_calls[0]
        assert call.name == "add" and call.arguments in ({"x": 1, "y": 2}, {"x": 2, "y": 2})
        obs = trial.steps[1].observations[0]
        assert obs.call_id == call.id and obs.text in ("3", "4")
        assert trial.model == "mockllm/model" and trial.agent is not None
        assert trial.usage.input == 20 and trial.usage.output == 10
    s1 = next(t for t in eval_trials if t.id == "adder/s1/1")
    s2 = next(t for t in eval_trials if t.id == "adder/s2/1")
    assert (s1.outcome, s1.reward, s2.outcome, s2.reward) == ("pass", 1.0, "fail", 0.0)
    tasks = {t.id: t for t in result.tasks}
    assert tasks["adder/s1"].instruction == "What is 1+2?"
    assert tasks["adder/s1"].benchmark == "inspect"
    assert "3" not in json.dumps(tasks["adder/s1"].verifier_files)  # the target stays out


def test_scorer_choice_and_missing_scorer(logs: tuple[Path, Path]) -> None:
    eval_log, _ = logs
    other = load([eval_log], inspect_scorer="nope")
    assert {t.outcome for t in other.trials} == {"none"}
    assert all("no score from scorer 'nope'" in (t.outcome_reason or "") for t in other.trials)
    out = runner.invoke(app, ["inspect", str(eval_log), "--inspect-scorer", "includes",
                              "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert sorted(t["outcome"] for t in data["trials"]) == ["fail", "fail", "pass", "pass"]


def test_a_corrupted_eval_is_reported_member_by_member(logs: tuple[Path, Path],
                                                       tmp_path: Path) -> None:
    eval_log, _ = logs
    broken = tmp_path / "broken.eval"
    with zipfile.ZipFile(eval_log) as source, zipfile.ZipFile(broken, "w") as target, \
            eval_log.open("rb") as raw:
        for info in source.infolist():
            data = _member(source, info, raw)
            if info.filename == "samples/s2_epoch_1.json":
                data = b"{ this is not json"
            target.writestr(info.filename, data)  # stored, not Zstandard: both are read
    result = load([broken])
    assert len(result.trials) == 3
    [error] = result.errors
    assert error.path == f"{broken}#samples/s2_epoch_1.json" and "JSON" in error.reason
    truncated = tmp_path / "truncated.eval"
    truncated.write_bytes(eval_log.read_bytes()[:2000])
    cut = load([truncated, eval_log])
    assert len(cut.trials) == 4  # the good log is still read
    assert any(e.path == str(truncated) for e in cut.errors)


def test_errors_unscored_partial_and_event_only_samples(logs: tuple[Path, Path],
                                                        tmp_path: Path) -> None:
    _, json_log = logs
    doc = json.loads(json_log.read_text())
    first, second = doc["samples"]
    first["error"] = {"message": "sandbox died\nTraceback ...", "traceback": "..."}
    second["scores"] = {}
    third = json.loads(json.dumps(second))
    third.update({"id": "s3", "messages": [],
                  "scores": {"includes": {"value": 0.4, "answer": "x"}}})
    fourth = json.loads(json.dumps(third))
    fourth.update({"id": "s4", "scores": {"includes": {"value": "P"}}})
    doc["samples"] = [first, second, third, fourth]
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(doc))
    trials = {t.id.split("/")[1]: t for t in load([path]).trials}
    assert (trials["s1"].outcome, trials["s1"].outcome_reason) == \
        ("none", "sample error: sandbox died")
    assert trials["s1"].steps  # kept, with its trajectory
    assert (trials["s2"].outcome, trials["s2"].outcome_reason) == ("none", "unscored sample")
    assert (trials["s3"].outcome, trials["s3"].reward) == ("fail", 0.4)
    assert (trials["s4"].outcome, trials["s4"].reward) == ("fail", 0.5)
    # s3 has no messages: its steps come from the model and tool events
    steps = trials["s3"].steps
    assert [s.source for s in steps] == ["user", "agent", "agent"]
    assert steps[1].tool_calls[0].name == "add" and steps[1].observations[0].text == "4"


def test_a_run_that_scores_nothing_exits_non_zero_and_names_the_option(
        logs: tuple[Path, Path], tmp_path: Path) -> None:
    eval_log, _ = logs
    out = runner.invoke(app, ["run", str(eval_log), str(eval_log), "--out",
                              str(tmp_path / "run")])
    assert out.exit_code == 2, out.output
    last = " ".join(out.output.split())
    assert "no trial scored (4 read)" in last and "add --model" in last
