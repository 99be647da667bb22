"""A slow local server without --max-tokens gets its answers capped at what it writes
within --timeout: measured from its own answers, floored, said once, kept with the
endpoint's info and named in a run's provenance. A remote endpoint, or a set --max-tokens,
keeps today's behaviour. Rates are injected (``_cap``) or bounded by a fake server's sleep:
no assertion depends on how fast this machine is."""

from __future__ import annotations

from pathlib import Path

from agentcredit.llm import (
    ModelClient,
    ModelResponse,
    ResponseCache,
    RetryPolicy,
    make_provider,
    user,
)
from agentcredit.llm.endpoint import EndpointSettings
from agentcredit.runs.pipeline import client_provenance
from tests.llm.fake_server import FakeLLMServer


def local(url: str, said: list[str], cache: Path | None = None, **settings: object
          ) -> ModelClient:
    provider = make_provider("openai/fake-model", base_url=f"{url}/v1", api_key="sk-test")
    return ModelClient(provider, endpoint=EndpointSettings(**settings),  # type: ignore[arg-type]
                       cache=ResponseCache(cache) if cache else None, notify=said.append)


def test_the_cap_scales_with_the_rate_and_is_floored() -> None:
    """``_cap(tokens, seconds)``: what an answer of ``tokens`` in ``seconds`` tells."""
    expected = {(640, 100.0): 512,     # 6.4 tokens/s x 120 s = 768: a power of two below
                (2000, 100.0): 2048,   # 20 tokens/s: 2400
                (50, 100.0): 256,      # 0.5 tokens/s: 60, floored at 256
                (0, 600.0): 256,       # no answer within the wait: the floor
                (9000, 100.0): None,   # 90 tokens/s: 10,800, above the default 4096
                (10, 29.0): None}      # under a quarter of --timeout: tells nothing
    for (tokens, seconds), cap in expected.items():
        said: list[str] = []
        client = local("http://127.0.0.1:9", said, timeout=120)
        client._cap(tokens, seconds)
        assert client.info.answer_cap == cap, (tokens, seconds)
        assert said == ([] if cap is None else [
            f"openai/fake-model: the local server writes ~{tokens / seconds:.1f} tokens/s: "
            f"answers capped at {cap} tokens; --max-tokens to change"])


def test_only_a_local_server_without_max_tokens_is_capped() -> None:
    said: list[str] = []
    remote = ModelClient(make_provider("openai/m", base_url="https://api.example.com/v1",
                                       api_key="sk-test"), notify=said.append)
    chosen = local("http://127.0.0.1:9", said, max_tokens=1024)
    for client in (remote, chosen):
        client._cap(50, 100.0)
        assert client.info.answer_cap is None
    assert not remote.waits and said == []


def test_a_slow_answer_caps_the_next_requests_and_a_resumed_client_keeps_it(
        tmp_path: Path) -> None:
    """The first answer takes at least 1 s of a 2 s --timeout (the fake sleeps) for a few
    tokens: at most ~20 tokens/s x 2 s, so the floor of 256, whatever this machine does."""
    said: list[str] = []
    cache = tmp_path / "cache.sqlite"
    with FakeLLMServer(faults=lambda i, body: "slow" if i == 0 else None,
                       slow_seconds=1.0) as server:
        client = local(server.url, said, cache, timeout=2.0)
        before = client.endpoint_fingerprint()
        for text in ("first", "second"):
            assert isinstance(client.generate_sync([user(text)]), ModelResponse)
        assert [b["max_tokens"] for b in server.requests] == [4096, 256]
        assert client.info.answer_cap == 256 and client.endpoint_fingerprint() != before
        assert [s for s in said if "capped" in s] == [
            s for s in said if s.endswith("answers capped at 256 tokens; --max-tokens to "
                                          "change")] != []
        assert client_provenance(client)["endpoint"]["answer_cap"] == 256
        assert client_provenance(client)["endpoint"]["max_tokens"] is None
        again = local(server.url, said, cache, timeout=2.0)  # a resumed run: the same cap
        assert isinstance(again.generate_sync([user("third")]), ModelResponse)
        chosen = local(server.url, said, cache, timeout=2.0, max_tokens=4000)
        assert isinstance(chosen.generate_sync([user("fourth")]), ModelResponse)
        assert [b["max_tokens"] for b in server.requests[2:]] == [256, 4000]


def test_a_local_request_given_up_caps_the_next_ones() -> None:
    said: list[str] = []
    with FakeLLMServer(faults=lambda i, body: "slow" if i == 0 else None,
                       slow_seconds=600) as server:  # (the slow one: never, here)
        client = local(server.url, said, timeout=2.0)
        client.retry = RetryPolicy(local_patience=1.5)  # given up after 3 s
        assert not isinstance(client.generate_sync([user("slow")]), ModelResponse)
        assert isinstance(client.generate_sync([user("next")]), ModelResponse)
        assert [b["max_tokens"] for b in server.requests] == [4096, 256]


def test_the_provenance_names_a_cap_a_judging_worker_learned(tmp_path: Path) -> None:
    """Judging workers share the run's cache: the run's provenance reads the endpoint's
    info there, so a cap only a worker saw is still named."""
    said: list[str] = []
    cache = tmp_path / "cache.sqlite"
    main = local("http://127.0.0.1:9", said, cache, timeout=120, context_tokens=2048)
    assert client_provenance(main)["endpoint"]["answer_cap"] is None
    assert client_provenance(main)["endpoint"]["window"] == 2048  # nothing stored yet
    worker = local("http://127.0.0.1:9", said, cache, timeout=120)
    worker._cap(50, 100.0)
    assert main.info.answer_cap is None
    assert client_provenance(main)["endpoint"]["answer_cap"] == 256
