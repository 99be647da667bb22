"""Issue 68: every request on the reward-service page, sent to the service, gets the answer
the page shows (the scripted verifier stands in for the model)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import ROOT
from tests.rewards import scripted_verifier
from tests.serve.conftest import running, serve_with

PAGE = ROOT / "docs" / "reference" / "service.md"
PAIR = re.compile(r"<!-- (POST|GET) (\S+) -->\n```json\n(.*?)```\n\n<!-- answer (\d+) -->\n"
                  r"```json\n(.*?)```", re.S)


def exchanges() -> list[tuple[str, str, object, int, object]]:
    return [(m[1], m[2], json.loads(m[3]), int(m[4]), json.loads(m[5]))
            for m in PAIR.finditer(PAGE.read_text(encoding="utf-8"))]


@pytest.fixture
def service(tmp_path: Path) -> Iterator[str]:
    with running(serve_with(tmp_path, "docs-service-verifier", scripted_verifier.answer)) as url:
        yield url


def test_every_request_on_the_page_gets_the_answer_shown(service: str) -> None:
    pairs = exchanges()
    assert {(m, p) for m, p, *_ in pairs} >= {("POST", "/get_reward"), ("POST", "/turn_rewards")}
    with httpx.Client(base_url=service, timeout=60) as client:
        for method, path, body, status, expected in pairs:
            answer = client.request(method, path, json=body)
            assert (answer.status_code, answer.json()) == (status, expected), (path, body)
