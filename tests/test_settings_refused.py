"""Every number or address read from the environment or a serve flag is checked by one
helper: a value that is not a finite number (or an http(s) URL) is one ConfigError naming the
variable, raised when the setting is used, never at import and never a NaN reward."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from agentcredit.cli.app import app
from agentcredit.errors import ConfigError, env_value
from agentcredit.llm import register_script
from agentcredit.rewards import hooks
from agentcredit.rewards.hooks import SkillRubricReward
from agentcredit.serve import client
from tests.conftest import EXAMPLES
from tests.rewards import scripted_verifier
from tests.serve.conftest import make_bank_dir

ROOT = Path(__file__).resolve().parents[1]
BAD_NUMBERS = ("abc", "nan", "NaN", "inf", "-inf", "1e999", "0x10", "")


@pytest.mark.parametrize("variable", ["AGENTCREDIT_PROCESS_WEIGHT",
                                      "AGENTCREDIT_RIGGING_PENALTY", "AGENTCREDIT_BASE_URL"])
@pytest.mark.parametrize("value", ["abc", "nan", "inf", "-1"])
def test_the_verl_hook_names_the_variable(monkeypatch: pytest.MonkeyPatch, variable: str,
                                          value: str) -> None:
    monkeypatch.setenv(variable, value)
    if variable == "AGENTCREDIT_PROCESS_WEIGHT" and value == "-1":
        return  # a negative weight is a choice (penalise the process), not a mistake
    with pytest.raises(ConfigError, match=variable):
        hooks.verl_reward()


@pytest.mark.parametrize("value", ["abc", "-1", "0", "nan", "inf"])
def test_the_reward_client_names_its_timeout(monkeypatch: pytest.MonkeyPatch,
                                             value: str) -> None:
    monkeypatch.setenv("AGENTCREDIT_REWARD_TIMEOUT", value)
    with pytest.raises(ConfigError, match="AGENTCREDIT_REWARD_TIMEOUT"):
        client._client(f"http://127.0.0.1:1/{value}")


@pytest.mark.parametrize("value", ["not-a-url", "ftp://x", "http://", "http://h:99999"])
def test_the_reward_client_names_its_url(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("AGENTCREDIT_REWARD_URL", value)
    with pytest.raises(ConfigError, match="AGENTCREDIT_REWARD_URL"):
        client._url()


def _cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentcredit", *args], capture_output=True,
                          text=True, timeout=120, cwd=ROOT, env={
                              **os.environ, "PYTHONPATH": str(ROOT / "src"), **env})


def test_a_bad_file_size_limit_breaks_no_import_and_is_named_when_used(tmp_path: Path) -> None:
    assert _cli("--version", AGENTCREDIT_MAX_FILE_MB="abc").returncode == 0
    done = _cli("run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"), "--out",
                str(tmp_path / "run"), AGENTCREDIT_MAX_FILE_MB="abc")
    assert done.returncode == 2, done.stderr
    lines = (done.stdout + done.stderr).strip().splitlines()
    assert "Traceback" not in done.stderr and any(
        "AGENTCREDIT_MAX_FILE_MB" in line for line in lines), lines[-5:]


@pytest.mark.parametrize("flags", [["--rigging-penalty", "inf"], ["--process-weight", "nan"],
                                   ["--process-weight", "inf"], ["--process-weight", "-inf"]])
def test_serve_refuses_non_finite_flags_at_start(tmp_path: Path, flags: list[str]) -> None:
    pytest.importorskip("starlette")
    bank = make_bank_dir(tmp_path)
    register_script("settings-verifier", scripted_verifier.answer)
    out = CliRunner().invoke(app, ["serve", "--bank", str(bank), "--model",
                                   "scripted/settings-verifier",
                                   "--port", "1", *flags])
    assert out.exit_code == 2, out.output
    assert "finite" in out.output and "Traceback" not in out.output


@pytest.mark.parametrize("weight,penalty", [(float("nan"), 0.0), (float("inf"), 0.0),
                                            (0.5, float("inf")), (0.5, float("nan")),
                                            (0.5, -1.0)])
def test_the_reward_refuses_non_finite_weights(weight: float, penalty: float) -> None:
    with pytest.raises(ConfigError, match="finite"):
        SkillRubricReward(process_weight=weight, rigging_penalty=penalty)


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=30), kind=st.sampled_from(["number", "positive", "count", "url"]))
def test_env_values_are_finite_or_refused_by_name(text: str, kind: str) -> None:
    """Whatever the variable holds: a value of its kind, the default, or a ConfigError that
    names the variable on one line."""
    name = "AGENTCREDIT_PROPERTY_TEST"
    if "\x00" in text:
        return  # the environment cannot hold it
    os.environ[name] = text
    try:
        value = env_value(name, "default", kind)  # type: ignore[arg-type]
    except ConfigError as exc:
        assert str(exc).startswith(name) and "\n" not in str(exc)
        return
    finally:
        del os.environ[name]
    if not text.strip():
        assert value == "default"
    elif kind == "url":
        assert value.startswith(("http://", "https://"))
    else:
        assert isinstance(value, (int, float)) and abs(value) < float("inf")
        assert kind == "number" or value > 0


@pytest.mark.parametrize("value", BAD_NUMBERS)
def test_every_bad_number_is_refused_or_the_default(value: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCREDIT_TIMEOUT", value)
    if not value:
        assert env_value("AGENTCREDIT_TIMEOUT", 5.0, "positive") == 5.0
        return
    with pytest.raises(ConfigError, match="AGENTCREDIT_TIMEOUT"):
        env_value("AGENTCREDIT_TIMEOUT", 5.0, "positive")
