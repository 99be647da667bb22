"""Batch round trip, the scripted model, usage accounting and cache safety."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import random
from pathlib import Path

import pytest
from pydantic import BaseModel

from agentcredit.errors import ConfigError, ProviderError
from agentcredit.llm import (
    ModelClient,
    ModelFailure,
    ModelResponse,
    ResponseCache,
    UsageLedger,
    load_prices,
    make_provider,
    register_script,
    user,
)
from agentcredit.llm.batch import export_batch, import_batch
from tests.llm.fake_server import FakeLLMServer, write_batch_results


class Answer(BaseModel):
    answer: str


def _client(server: FakeLLMServer, cache: ResponseCache, **options: object) -> ModelClient:
    provider = make_provider("openai/m", base_url=f"{server.url}/v1", api_key="sk-x")
    return ModelClient(provider, cache=cache, **options)  # type: ignore[arg-type]


def _ask(client: ModelClient, n: int) -> list[ModelResponse | ModelFailure]:
    async def run() -> list[ModelResponse | ModelFailure]:
        try:
            return list(await asyncio.gather(*(client.generate([user(f"q{i}")], schema=Answer)
                                               for i in range(n))))
        finally:
            await client.aclose()
    return asyncio.run(run())


def test_batch_round_trip_makes_zero_live_calls(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        live = _ask(_client(server, ResponseCache(tmp_path / "live.sqlite")), 6)
        live_calls = server.count
        cache = ResponseCache(tmp_path / "batch.sqlite")
        deferred = _ask(_client(server, cache, defer=True), 6)
        assert all(isinstance(r, ModelFailure) and r.kind == "deferred" for r in deferred)
        assert server.count == live_calls
        report = export_batch(cache, tmp_path / "requests.jsonl")
        assert report.written == 6
        write_batch_results(tmp_path / "requests.jsonl", tmp_path / "results.jsonl")
        imported = import_batch(cache, tmp_path / "results.jsonl")
        assert (imported.imported, imported.errors, imported.missing) == (6, [], [])
        rerun = _ask(_client(server, cache), 6)
        assert server.count == live_calls
    assert [r.parsed for r in rerun] == [r.parsed for r in live]  # type: ignore[union-attr]
    assert all(isinstance(r, ModelResponse) and r.cached for r in rerun)


def test_batch_import_reports_error_and_missing_lines(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    with FakeLLMServer() as server:
        _ask(_client(server, cache, defer=True), 4)
    export_batch(cache, tmp_path / "req.jsonl")
    ids = [line.split('"custom_id": "')[1][:64]
           for line in (tmp_path / "req.jsonl").read_text().splitlines()]
    write_batch_results(tmp_path / "req.jsonl", tmp_path / "res.jsonl",
                        error_ids={ids[0]}, drop_ids={ids[1]})
    with (tmp_path / "res.jsonl").open("a") as handle:
        handle.write("{not json\n")
    report = import_batch(cache, tmp_path / "res.jsonl")
    assert report.imported == 2
    assert report.missing == [ids[1]] or set(report.missing) == {ids[0], ids[1]}
    assert any(cid == ids[0] and "failed" in why for cid, why in report.errors)
    assert any(where.startswith("line ") for where, _ in report.errors)


def test_scripted_model_answers_in_order_and_can_fail() -> None:
    register_script("two-then-error", ['{"answer": "a"}', ProviderError("server_error", "x"),
                                       '{"answer": "b"}'])
    client = ModelClient(make_provider("scripted/two-then-error"))
    first = client.generate_sync([user("1")], schema=Answer)
    second = client.generate_sync([user("2")], schema=Answer)
    assert isinstance(first, ModelResponse) and first.parsed == {"answer": "a"}
    assert isinstance(second, ModelResponse) and second.attempts == 2
    assert second.parsed == {"answer": "b"}


def test_scripted_model_is_only_used_by_name() -> None:
    with pytest.raises(ConfigError, match="no script named"):
        make_provider("scripted/never-registered")


def test_usage_ledger_counts_tokens_hits_and_cost(tmp_path: Path) -> None:
    register_script("ledger", lambda messages, schema: '{"answer": "ok"}')
    ledger = UsageLedger(prices=load_prices({"scripted/ledger": {"input": 1.0, "output": 2.0}}))
    cache = ResponseCache(tmp_path / "c.sqlite")
    client = ModelClient(make_provider("scripted/ledger"), cache=cache, ledger=ledger)
    client.generate_sync([user("hello")], schema=Answer)
    client.generate_sync([user("hello")], schema=Answer)
    summary = ledger.summary()
    assert summary["calls"] == 1 and summary["cache_hits"] == 1
    expected = (summary["input_tokens"] * 1.0 + summary["output_tokens"] * 2.0) / 1e6
    assert summary["cost_usd"] == pytest.approx(expected)


def _writer(path: str, start: int) -> None:
    cache = ResponseCache(path)
    for i in range(start, start + 200):
        cache.put(f"k{i % 300}", "m", {"text": str(i)})


def test_cache_is_safe_under_concurrent_writers(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.sqlite")
    ResponseCache(path)
    procs = [multiprocessing.get_context("spawn").Process(target=_writer, args=(path, s))
             for s in (0, 100, 200)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert all(p.exitcode == 0 for p in procs)
    assert len(ResponseCache(path)) == 300


def _file_bytes(cache: ResponseCache) -> int:
    cache._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return cache.path.stat().st_size


def test_queued_prompts_are_stored_small_and_their_pages_go_back_once_answered(
        tmp_path: Path) -> None:
    rng = random.Random(7)
    prompts = [" ".join(rng.choice(["ls -la", "cat log", "error: 3", "ok", str(rng.random())])
                        for _ in range(3_000)) for _ in range(40)]
    cache = ResponseCache(tmp_path / "c.sqlite")
    with FakeLLMServer() as server:
        client = _client(server, cache, defer=True)

        async def queue() -> None:
            try:
                await asyncio.gather(*(client.generate([user(p)], schema=Answer)
                                       for p in prompts))
            finally:
                await client.aclose()
        asyncio.run(queue())
    raw = sum(len(p) for p in prompts)
    queued = _file_bytes(cache)
    assert cache.pending_count() == 40 and queued < raw * 0.6  # kept compressed
    assert cache.reclaim() == 0  # still waiting: nothing given back
    export_batch(cache, tmp_path / "req.jsonl")
    assert all(p in (tmp_path / "req.jsonl").read_text() for p in prompts)  # read back whole
    write_batch_results(tmp_path / "req.jsonl", tmp_path / "res.jsonl")
    assert import_batch(cache, tmp_path / "res.jsonl").imported == 40
    assert cache.pending_count() == 0 and len(cache) == 40
    assert _file_bytes(cache) < queued / 5  # the answered prompts' pages went back


def test_a_request_queued_by_an_older_version_is_read_back(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    body = {"model": "m", "messages": [{"role": "user", "content": "q"}]}
    cache._db.execute("INSERT INTO pending (key, model, body, created_at) VALUES "
                      "('k', 'openai/m', ?, 0)", (json.dumps(body),))  # plain JSON text
    cache.add_pending("k2", "openai/m", body)
    assert [b for _, _, b in cache.pending()] == [body, body]
    assert [b for _, _, b in cache.iter_pending()] == [body, body]
