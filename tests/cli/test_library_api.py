"""The public API does what the commands do, and the commands' errors are one line."""

from __future__ import annotations

import socket
from pathlib import Path

from typer.testing import CliRunner

import agentcredit
from agentcredit.cli.app import app
from agentcredit.errors import ConfigError
from agentcredit.llm import register_script
from tests.conftest import EXAMPLES

runner = CliRunner()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # closed again when the block ends


def test_score_from_python_writes_what_run_writes(tmp_path: Path) -> None:
    result = agentcredit.score(EXAMPLES / "tasks", EXAMPLES / "jobs", tmp_path / "api")
    cli = runner.invoke(app, ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"),
                              "--out", str(tmp_path / "cli")])
    assert cli.exit_code == 0, cli.output
    for name in ("scores.csv", "judgments.jsonl", "summary.json"):
        assert (tmp_path / "api" / name).read_text() == (tmp_path / "cli" / name).read_text()
    assert result.scores_path == tmp_path / "api" / "scores.csv"
    assert result.report_path is not None and result.report_path.exists()
    assert result.trials == 8 and not result.failures and not result.queued


def test_score_refuses_a_judging_mode_without_a_model(tmp_path: Path) -> None:
    try:
        agentcredit.score(EXAMPLES / "tasks", EXAMPLES / "jobs", tmp_path, holistic=True)
    except ConfigError as exc:
        assert "--holistic needs --model" in str(exc)
    else:
        raise AssertionError("no error")
    assert not (tmp_path / "run.sqlite").exists()


def test_a_dead_embedding_server_is_a_one_line_error(tmp_path: Path) -> None:
    bank = tmp_path / "bank"
    assert runner.invoke(app, ["skills", "import", str(EXAMPLES / "skills"), "--out",
                               str(bank)]).exit_code == 0
    register_script("never-asked", [])  # the embedding fails before any verifier call
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    for command in (["skills", "retrieve", str(bank), str(EXAMPLES / "tasks")],
                    ["skills", "reward", str(bank), str(EXAMPLES / "jobs"), "--out",
                     str(tmp_path / "run"), "--model", "scripted/never-asked"]):
        out = runner.invoke(app, [*command, "--embed", "openai/emb", "--base-url", url,
                                  "--cache", str(tmp_path / "c.sqlite")],
                            env={"OPENAI_API_KEY": "k"})
        assert out.exit_code == 2, out.output
        assert "Traceback" not in out.output and isinstance(out.exception, SystemExit)
        [line] = [x for x in out.output.splitlines() if x.startswith("error")]
        assert "openai/emb" in line and "connection" in line


def test_the_public_jobs_are_functions_not_shadowing_modules() -> None:
    """A submodule named like a job would replace it once imported (the package attribute)."""
    import importlib
    import inspect

    for package, names in (("agentcredit", ("score", "score_async", "judge_run")),
                           ("agentcredit.skills", ("build_bank", "import_skills", "retrieve")),
                           ("agentcredit.rewards", ("turn_rewards", "turn_rewards_async")),
                           ("agentcredit.evolve", ("evolve", "evolve_async"))):
        module = importlib.import_module(package)
        for name in names:
            importlib.import_module(getattr(module, name).__module__)  # loads the siblings
            assert inspect.isfunction(getattr(module, name)), f"{package}.{name}"
            assert name in module.__all__
