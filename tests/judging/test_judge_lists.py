"""``--judges``: an empty or repeated name is a one-line usage error (exit 2), never a
pickling traceback or an SQLite IntegrityError; without ``--model`` the first judge is the
model, as the option's help says."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from agentcredit.cli.app import app
from agentcredit.errors import ConfigError
from agentcredit.llm import ModelSpec, register_script
from agentcredit.llm.spec import judge_names
from tests.conftest import EXAMPLES
from tests.judging import scripted_judge

runner = CliRunner()


@pytest.mark.parametrize("judges", [
    "scripted/jl-a,", "scripted/jl-a,scripted/jl-a", ",", "scripted/jl-a,,scripted/jl-b",
    " scripted/jl-a , scripted/jl-a"])
@pytest.mark.parametrize("command", ["run", "judge"])
def test_bad_judge_lists_are_one_usage_line(tmp_path: Path, judges: str, command: str) -> None:
    register_script("jl-a", scripted_judge.answer)
    args = ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs")] if command == "run" else \
        ["judge", str(EXAMPLES / "jobs"), "--checklists", str(tmp_path)]
    out = runner.invoke(app, [*args, "--out", str(tmp_path / "run"), "--model",
                              "scripted/jl-a", "--judges", judges])
    assert out.exit_code == 2, out.output
    lines = [line for line in out.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "--judges" in lines[0], lines


def test_judge_takes_the_first_judge_as_the_model(tmp_path: Path) -> None:
    register_script("jl-a", scripted_judge.answer)
    register_script("jl-b", scripted_judge.answer)
    built = runner.invoke(app, ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"),
                                "--out", str(tmp_path / "first"), "--model", "scripted/jl-a"])
    assert built.exit_code == 0, built.output
    out = runner.invoke(app, ["judge", str(EXAMPLES / "jobs"), "--checklists",
                              str(tmp_path / "first" / "checklists"), "--out",
                              str(tmp_path / "panel"), "--judges", "scripted/jl-a,scripted/jl-b"])
    assert out.exit_code == 0, out.output
    assert "judge scripted/jl-b: model requests sent" in " ".join(out.output.split())


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["a/x", "b/y", "", " ", "c/z "]), min_size=1, max_size=5))
def test_judge_lists_are_distinct_names_or_refused(parts: list[str]) -> None:
    text = ",".join(parts)
    try:
        names = judge_names(text)
    except ConfigError as exc:
        assert "--judges" in str(exc) and "\n" not in str(exc)
        stripped = [p.strip() for p in parts]
        assert "" in stripped or len(set(stripped)) < len(stripped)
        with pytest.raises(ConfigError):
            ModelSpec("a/x", judges=tuple(parts))
        return
    assert names and all(names) and len(set(names)) == len(names)
    assert ModelSpec("a/x", judges=tuple(parts)).judges == names
