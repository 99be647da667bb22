"""Issue 61 (4): a base URL from the environment behaves like --base-url; --model none means
no model where the model is optional."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcredit.cli.options import model_spec
from agentcredit.errors import ConfigError


@pytest.mark.parametrize(("variable", "model"), [("OPENAI_BASE_URL", "openai/local"),
                                                 ("ANTHROPIC_BASE_URL", "anthropic/local")])
def test_a_local_server_from_the_environment_gets_auto_concurrency(
        monkeypatch: pytest.MonkeyPatch, variable: str, model: str) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    remote = model_spec(model)
    monkeypatch.setenv(variable, "http://127.0.0.1:8080/v1")
    local = model_spec(model)
    flag = model_spec(model, base_url="http://127.0.0.1:8080/v1")
    assert remote is not None and local is not None and flag is not None
    assert remote.endpoint.concurrency == 8
    assert local.endpoint.concurrency is None and flag.endpoint.concurrency is None  # auto


def test_the_verl_hook_takes_every_endpoint_setting_from_the_environment(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from agentcredit.rewards import hooks
    from tests.serve.conftest import make_bank_dir

    hooks.reset_shared()
    monkeypatch.setenv("AGENTCREDIT_BANK", str(make_bank_dir(tmp_path)))
    monkeypatch.setenv("AGENTCREDIT_VERIFIER_MODEL", "openai/local")
    monkeypatch.setenv("AGENTCREDIT_CACHE", str(tmp_path / "cache.sqlite"))
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")
    for name, value in {"TIMEOUT": "600", "MAX_TOKENS": "4096", "STRUCTURED": "json_object",
                        "CONTEXT_TOKENS": "8192"}.items():
        monkeypatch.setenv(f"AGENTCREDIT_{name}", value)
    verifier = hooks.verl_reward().verifier
    assert verifier is not None
    assert verifier.settings.record() == {"timeout": 600.0, "max_tokens": 4096,
                                          "structured": "json_object", "context_tokens": 8192,
                                          "concurrency": "auto"}
    monkeypatch.setenv("AGENTCREDIT_CONCURRENCY", "3")
    monkeypatch.setenv("AGENTCREDIT_TIMEOUT", "soon")
    with pytest.raises(ConfigError, match="AGENTCREDIT_TIMEOUT"):
        hooks.verl_reward()
    hooks.reset_shared()
