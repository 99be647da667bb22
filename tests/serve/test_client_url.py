"""Issue 68: verl's client of the service takes the address as OpenRLHF writes it
(``…/get_reward``), and an answer that is not the service's is a one-line ConfigError, not a
JSONDecodeError."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from agentcredit.errors import ConfigError
from agentcredit.serve import client
from tests.rewards import scripted_verifier
from tests.serve.conftest import running, serve_with


def test_the_openrlhf_address_and_a_wrong_one(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    with running(serve_with(tmp_path, "client-url", scripted_verifier.answer)) as url:
        monkeypatch.setenv("AGENTCREDIT_REWARD_URL", url + "/get_reward")
        [result] = client.compute_score_batch(["toy"], ["<answer>3</answer>"], ["3"],
                                              [{"prompt": "Sum. "}])
        assert result["score"] == 1.0
        monkeypatch.setenv("AGENTCREDIT_REWARD_URL", url + "/not-the-service")
        with pytest.raises(ConfigError) as caught:
            client.compute_score_batch(["toy"], ["x"], ["3"])
    message = str(caught.value)
    assert "\n" not in message and "/not-the-service/get_reward" in message
    assert "404" in message


def test_a_non_json_error_page_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    def page(request: httpx.Request) -> httpx.Response:
        return httpx.Response(502, text="<html><body>\n<h1>Bad Gateway</h1>\n</body></html>")

    monkeypatch.setitem(client._CLIENTS, "http://proxy", httpx.Client(
        base_url="http://proxy", transport=httpx.MockTransport(page)))
    with pytest.raises(ConfigError, match=r"502: <html><body> <h1>Bad Gateway</h1>"):
        client.get_rewards(["q"], ["p"], url="http://proxy")
