"""The model layer over real HTTP against the loopback fake server: the Anthropic SDK, and
the OpenAI-compatible provider over both its paths (the aiohttp pool and the SDK itself)."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import pytest
from pydantic import BaseModel

from agentcredit.errors import ModelCallError
from agentcredit.llm import (
    ImagePart,
    Message,
    ModelClient,
    ModelFailure,
    ModelResponse,
    ResponseCache,
    RetryPolicy,
    TextPart,
    make_provider,
    user,
)
from agentcredit.llm.endpoint import EndpointSettings
from agentcredit.llm.types import NOT_RECORDED
from tests.llm.fake_server import FakeLLMServer

FAST = RetryPolicy(max_attempts=4, base_delay=0.01, max_delay=0.05)


@pytest.fixture(autouse=True, params=["aiohttp", "httpx"])
def http_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test here runs over both HTTP paths of the OpenAI-compatible provider."""
    monkeypatch.setenv("AGENTCREDIT_HTTP", request.param)
    return str(request.param)


class Answer(BaseModel):
    answer: str


ENDPOINT_KEYS = ("timeout", "max_tokens", "structured", "context_tokens", "concurrency")


def client(server: FakeLLMServer, tmp_path: Path | None = None, *, provider: str = "openai",
           **options: object) -> ModelClient:
    base = f"{server.url}/v1" if provider == "openai" else server.url
    prov = make_provider(f"{provider}/fake-model", base_url=base, api_key="sk-test")
    cache = ResponseCache(tmp_path / "cache.sqlite") if tmp_path is not None else None
    opts: dict[str, object] = {"retry": FAST, "timeout": 5.0, **options}
    endpoint = EndpointSettings(**{k: opts.pop(k)  # type: ignore[arg-type]
                                   for k in ENDPOINT_KEYS if k in opts})
    return ModelClient(prov, cache=cache, endpoint=endpoint, **opts)  # type: ignore[arg-type]


def ok(result: ModelResponse | ModelFailure) -> ModelResponse:
    assert isinstance(result, ModelResponse), result
    return result


def test_openai_answer_usage_and_request_id() -> None:
    with FakeLLMServer() as server:
        result = ok(client(server).generate_sync([user("hello")]))
    assert result.text == "echo: hello"
    assert result.usage.input > 0 and result.usage.cached_input == result.usage.input // 2
    assert result.request_id == "chatcmpl-fake" and result.model == "openai/fake-model"
    assert not result.cached and result.attempts == 1


@pytest.mark.parametrize("fault", ["429", "500", "drop", "malformed"])
def test_transient_faults_are_retried(fault: str) -> None:
    plan = lambda i, body: fault if i == 0 else None  # noqa: E731
    with FakeLLMServer(faults=plan) as server:
        result = ok(client(server).generate_sync([user("x")]))
        assert server.count == 2
    assert result.attempts == 2


def test_the_chosen_http_path_carries_the_requests(http_path: str) -> None:
    from agentcredit.llm.providers.pooled_http import PooledSession

    async def sender_of(model: ModelClient) -> object:
        sender = model.provider._client()  # type: ignore[attr-defined]
        await model.aclose()
        return sender

    with FakeLLMServer() as server:
        sender = asyncio.run(sender_of(client(server)))
    assert isinstance(sender, PooledSession) == (http_path == "aiohttp")


def test_the_sdk_configuration_reaches_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_ORG_ID", "org-42")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-7")
    with FakeLLMServer() as server:
        ok(client(server).generate_sync([user("hi")]))
        sent = server.headers[0]
    assert sent["authorization"] == "Bearer sk-test"
    assert (sent["openai-organization"], sent["openai-project"]) == ("org-42", "proj-7")
    assert sent["content-type"] == "application/json"


def test_a_compressed_answer_is_decoded() -> None:
    with FakeLLMServer(faults=lambda i, body: "gzip") as server:
        result = ok(client(server).generate_sync([user("zipped")], schema=Answer))
    assert result.parsed == {"answer": "zipped"}


def test_a_refused_connection_is_a_connection_failure_that_says_so() -> None:
    with FakeLLMServer() as server:
        url = server.url  # closed on exit: nothing listens there any more
    prov = make_provider("openai/fake-model", base_url=f"{url}/v1", api_key="sk-test")
    result = ModelClient(prov, retry=RetryPolicy(max_attempts=2, base_delay=0.01),
                         endpoint=EndpointSettings(timeout=5.0)).generate_sync([user("x")])
    assert isinstance(result, ModelFailure)
    assert (result.kind, result.attempts) == ("connection", 2)
    assert "connect" in result.message.lower() and "error." not in result.message.lower()


@pytest.mark.parametrize("credentials", ["", "ann:p%40ss@"])
def test_the_environment_proxy_is_used(monkeypatch: pytest.MonkeyPatch, credentials: str) -> None:
    with FakeLLMServer() as proxy:
        named = proxy.url.replace("http://", f"http://{credentials}")
        monkeypatch.setenv("HTTP_PROXY", named)
        monkeypatch.setenv("http_proxy", named)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        prov = make_provider("openai/fake-model", base_url="http://model.invalid/v1",
                             api_key="sk-test")
        made = ModelClient(prov, retry=FAST, endpoint=EndpointSettings(timeout=5.0))
        result = ok(made.generate_sync([user("hi")]))
        assert proxy.paths == ["http://model.invalid/v1/chat/completions"]
        # the proxy URL's credentials reach the proxy as Basic auth (ann:p@ss), else none
        assert proxy.headers[0].get("proxy-authorization") == \
            ("Basic YW5uOnBAc3M=" if credentials else None)
    assert result.text == "echo: hi"


@pytest.mark.parametrize("fault", ["429", "500", "drop", "malformed", "schema"])
def test_anthropic_faults_are_retried_or_repaired(fault: str) -> None:
    plan = lambda i, body: fault if i == 0 else None  # noqa: E731
    with FakeLLMServer(faults=plan) as server:
        result = ok(client(server, provider="anthropic").generate_sync([user("q")],
                                                                       schema=Answer))
        assert server.count == 2 and server.paths[0] == "/v1/messages"
    assert result.parsed == {"answer": "q"} or fault == "schema"


def test_retry_after_is_honoured() -> None:
    plan = lambda i, body: "429" if i == 0 else None  # noqa: E731
    with FakeLLMServer(faults=plan, retry_after=0.4) as server:
        import time

        start = time.perf_counter()
        ok(client(server).generate_sync([user("x")]))
        assert time.perf_counter() - start >= 0.4


def test_slow_answers_time_out_into_a_typed_failure() -> None:
    with FakeLLMServer(faults=lambda i, body: "slow", slow_seconds=1.0) as server:
        remote = client(server, retry=RetryPolicy(max_attempts=2, base_delay=0.01),
                        timeout=0.3)
        remote.waits = False  # as a remote server: given up at the timeout and sent again
        result = remote.generate_sync([user("x")])
        assert server.count == 2
    assert isinstance(result, ModelFailure)
    assert (result.kind, result.attempts) == ("timeout", 2)
    assert (remote.ledger.calls, remote.ledger.answers, remote.ledger.abandoned) == (2, 0, 2)


def test_a_local_server_is_waited_for_not_asked_twice() -> None:
    """A local server goes on generating a request given up (llama-cpp-python does): its
    request is waited for up to local_patience x --timeout, and never sent again
    while the first may still be generating."""
    with FakeLLMServer(faults=lambda i, body: "slow", slow_seconds=1.0) as server:
        waited = client(server, timeout=0.25,
                        retry=RetryPolicy(max_attempts=3, local_patience=24))
        assert waited.waits
        assert ok(waited.generate_sync([user("x")])).attempts == 1
        assert server.count == 1
        assert (waited.ledger.calls, waited.ledger.answers, waited.ledger.abandoned) == \
            (1, 1, 0)
        given_up = client(server, timeout=0.3,
                          retry=RetryPolicy(max_attempts=3, base_delay=0.01, local_patience=2))
        failure = given_up.generate_sync([user("y")])
        assert server.count == 2  # given up at 2 x 0.3 s, and not sent again
    assert isinstance(failure, ModelFailure) and failure.kind == "timeout"
    assert "local server" in failure.message, failure.message
    assert (given_up.ledger.calls, given_up.ledger.answers, given_up.ledger.abandoned) == \
        (1, 0, 1)


def test_persistent_server_errors_end_as_a_failure_or_an_exception() -> None:
    with FakeLLMServer(faults=lambda i, body: "500") as server:
        result = client(server).generate_sync([user("x")])
        assert isinstance(result, ModelFailure) and result.kind == "server_error"
        assert result.status == 500 and server.count == FAST.max_attempts
        with pytest.raises(ModelCallError, match="server_error"):
            client(server, raise_on_failure=True).generate_sync([user("x")])


def test_schema_violation_is_repaired_with_the_error_shown() -> None:
    plan = lambda i, body: "schema" if i == 0 else None  # noqa: E731
    with FakeLLMServer(faults=plan) as server:
        result = ok(client(server).generate_sync([user("q")], schema=Answer))
        second = server.requests[1]["messages"]
    assert result.parsed == {"answer": second[-1]["content"][:200]}
    assert second[-2] == {"role": "assistant", "content": '{"unexpected": true}'}
    assert "Field required" in second[-1]["content"]


def test_schema_never_repaired_is_a_schema_failure() -> None:
    with FakeLLMServer(faults=lambda i, body: "schema") as server:
        result = client(server).generate_sync([user("q")], schema=Answer)
        assert server.count == 1 + FAST.max_repairs
    assert isinstance(result, ModelFailure) and result.kind == "schema_validation"


def test_servers_without_json_schema_fall_back_to_json_mode() -> None:
    with FakeLLMServer(faults=lambda i, body: "reject_format") as server:
        result = ok(client(server).generate_sync([user("q")], schema=Answer))
        formats = [r.get("response_format", {}).get("type") for r in server.requests]
    assert result.parsed == {"answer": "q"}
    assert formats == ["json_schema", "json_object"]


def test_anthropic_text_structured_and_rate_limited() -> None:
    plan = lambda i, body: "429" if i == 1 else None  # noqa: E731
    with FakeLLMServer(faults=plan) as server:
        c = client(server, provider="anthropic")
        text = ok(c.generate_sync([Message(role="system", content="be brief"), user("hi")]))
        structured = ok(c.generate_sync([user("q")], schema=Answer))
        first = server.requests[0]
        assert server.paths[0] == "/v1/messages"
    assert text.text == "echo: hi" and first["system"] == "be brief"
    assert structured.parsed == {"answer": "q"} and structured.attempts == 2


def test_images_reach_both_providers_in_their_own_format() -> None:
    image = ImagePart.from_bytes(b"\x89PNG fake", "image/png")
    message = Message(role="user", content=(TextPart(text="what is this?"), image))
    with FakeLLMServer() as server:
        ok(client(server).generate_sync([message]))
        ok(client(server, provider="anthropic").generate_sync([message]))
        openai_part = server.requests[0]["messages"][0]["content"][1]
        anthropic_part = server.requests[1]["messages"][0]["content"][1]
    assert openai_part["image_url"]["url"].startswith("data:image/png;base64,")
    assert anthropic_part["source"] == {"type": "base64", "media_type": "image/png",
                                        "data": image.data}


def test_cache_makes_reruns_free_and_no_cache_does_not(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        first = ok(client(server, tmp_path).generate_sync([user("a")], schema=Answer))
        again = ok(client(server, tmp_path).generate_sync([user("a")], schema=Answer))
        assert server.count == 1
        ok(client(server).generate_sync([user("a")], schema=Answer))
        assert server.count == 2
    assert again.cached and again.parsed == first.parsed and again.attempts == 0


def test_two_hundred_requests_with_thirty_percent_faults(tmp_path: Path) -> None:
    rng = random.Random(7)
    kinds = ["429", "500", "drop", "malformed", "schema", "slow"]
    plan_table = {}

    def plan(i: int, body: dict[str, object]) -> str | None:
        if i not in plan_table:
            plan_table[i] = rng.choice(kinds) if rng.random() < 0.3 else None
        return plan_table[i]

    prompts = [[user(f"question {n}")] for n in range(200)]

    async def run(c: ModelClient) -> list[ModelResponse | ModelFailure]:
        try:
            return list(await asyncio.gather(*(c.generate(p, schema=Answer) for p in prompts)))
        finally:
            await c.aclose()

    with FakeLLMServer(faults=plan, slow_seconds=600) as server:  # (slow: never, within the test)
        c = client(server, tmp_path, concurrency=16, timeout=3,
                   retry=RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=0.02))
        c.waits = False  # a slow answer times out as at a remote server
        results = asyncio.run(run(c))
        sent = server.count
        rerun = asyncio.run(run(client(server, tmp_path)))
        asked_again = server.count - sent
    answered = [r for r in results if isinstance(r, ModelResponse)]
    failed = [r for r in results if isinstance(r, ModelFailure)]
    assert len(answered) + len(failed) == 200 and len(answered) > 150
    assert all(r.kind in {"timeout", "server_error", "rate_limit", "connection",
                          "malformed_response", "schema_validation"} for r in failed)
    assert all(r.parsed is not None for r in answered)
    assert sum(isinstance(r, ModelResponse) and r.cached for r in rerun) == len(answered)
    # Definitive failures are replayed from the cache; passing ones (network, server, rate
    # limit) are never recorded, so the rerun asks those again, and only those.
    transient = [n for n, r in enumerate(results) if isinstance(r, ModelFailure)
                 and r.kind in NOT_RECORDED]
    assert transient and asked_again >= len(transient)
    for n, (first, again) in enumerate(zip(results, rerun, strict=True)):
        if isinstance(first, ModelFailure) and first.kind not in NOT_RECORDED:
            assert isinstance(again, ModelFailure) and again.kind == first.kind, n
    assert c.ledger.summary()["failures"] == {k: sum(1 for f in failed if f.kind == k)
                                              for k in {f.kind for f in failed}}


def test_unknown_provider_suggests_the_right_name() -> None:
    from agentcredit.errors import ConfigError

    with pytest.raises(ConfigError, match="did you mean 'anthropic'"):
        make_provider("antropic/claude")


def test_request_bodies_are_json_serialisable() -> None:
    provider = make_provider("openai/m", base_url="http://127.0.0.1:9/v1")
    from agentcredit.llm import GenerationConfig

    body = provider.body([user("x")], Answer.model_json_schema(), GenerationConfig(seed=3))
    assert json.loads(json.dumps(body))["seed"] == 3
