"""Issue 61 (4): a base URL from the environment behaves like --base-url; --model none means
no model where the model is optional."""

from __future__ import annotations

import pytest

from agentcredit.cli.options import model_spec


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
