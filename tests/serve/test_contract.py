"""The reward service under its own contract: schemathesis sends what the OpenAPI document
allows (and what it forbids) to a live ``agentcredit serve`` whose verifier answers with
whatever the verifier's answer schemas allow. No 5xx, no traceback in a body, every answer as
documented, a reward per sample for every well-formed request, a 4xx for every other."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

schemathesis = pytest.importorskip("schemathesis")
pytest.importorskip("hypothesis_jsonschema")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from schemathesis import GenerationMode, checks  # noqa: E402

from tests.properties.drawn import drawn_script  # noqa: E402
from tests.rewards.test_acting_hooks import TOOL_COMPLETION  # noqa: E402
from tests.serve.conftest import running, serve_with  # noqa: E402

OPERATIONS = [("/health", "GET"), ("/get_reward", "POST"), ("/turn_rewards", "POST")]
EXAMPLES = {GenerationMode.POSITIVE: 50, GenerationMode.NEGATIVE: 40}
TIMEOUT = 120  # seconds per request: a loaded CI runner draws the first answers slowly


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, str]]:
    """The document the live service publishes, and the service's URL."""
    root: Path = tmp_path_factory.mktemp("contract")
    with running(serve_with(root, "serve-drawn", drawn_script(seed=7))) as url:
        warm_up(url)
        yield schemathesis.openapi.from_url(f"{url}/openapi.json"), url


def warm_up(url: str) -> None:
    """One request per operation before the contract runs: the scripted verifier's first
    draw for a schema builds its strategy (seconds on a loaded machine), and hypothesis counts
    a slow first call that later passes as a flaky failure, not as the service's fault."""
    prompt: Any = [{"role": "user", "content": "Sum it."}]
    for path, body in [
            ("/get_reward", {"query": ["Sum it. <answer>3</answer>"], "prompts": ["Sum it. "],
                             "labels": ["3"]}),
            ("/turn_rewards", {"trajectories": [{"prompt": prompt, "completion": TOOL_COMPLETION,
                                                 "ground_truth": "3"}]})]:
        assert httpx.post(f"{url}{path}", json=body, timeout=TIMEOUT).status_code == 200


def one_reward_per_sample(ctx: Any, response: Any, case: Any) -> bool | None:
    """A request the service served has one reward per sample, each a number or null."""
    if response.status_code != 200 or not isinstance(case.body, dict):
        return None
    body = response.json()
    if "query" in case.body:
        assert len(body["rewards"]) == len(body["scores"]) == len(case.body["query"])
        assert all(s is None or 0.0 <= s <= 1.0 for s in body["scores"])
    if "trajectories" in case.body:
        assert len(body["trajectories"]) == len(case.body["trajectories"])
    assert "Traceback" not in response.text
    return None


def no_traceback(ctx: Any, response: Any, case: Any) -> bool | None:
    assert "Traceback" not in response.text and response.status_code < 500
    if response.status_code >= 400:
        error = response.json()["error"]
        assert error and "\n" not in error
    return None


@pytest.mark.parametrize("mode", list(EXAMPLES), ids=str)
@pytest.mark.parametrize(("path", "method"), OPERATIONS, ids=lambda v: v.strip("/"))
def test_the_service_keeps_its_contract(api: tuple[Any, str], path: str, method: str,
                                        mode: GenerationMode) -> None:
    if path == "/health" and mode is GenerationMode.NEGATIVE:
        pytest.skip("GET /health takes no input: there is nothing to break")
    document, url = api
    operation = document[path][method]

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(max_examples=EXAMPLES[mode], deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    def keeps(case: Any) -> None:
        case.call_and_validate(base_url=url, timeout=TIMEOUT, checks=[
            checks.not_a_server_error, checks.status_code_conformance,
            checks.content_type_conformance, checks.response_schema_conformance,
            checks.negative_data_rejection, one_reward_per_sample, no_traceback])

    keeps()
