"""``agentcredit batch export`` / ``import`` end to end."""

from __future__ import annotations

import asyncio
from pathlib import Path

from typer.testing import CliRunner

from agentcredit.cli.app import app
from agentcredit.llm import ModelClient, ModelResponse, ResponseCache, make_provider, user
from tests.llm.fake_server import FakeLLMServer, write_batch_results

runner = CliRunner()


def _ask(server: FakeLLMServer, cache: Path, *, defer: bool) -> list[object]:
    provider = make_provider("openai/m", base_url=f"{server.url}/v1", api_key="sk-x")
    client = ModelClient(provider, cache=ResponseCache(cache), defer=defer)

    async def run() -> list[object]:
        try:
            return list(await asyncio.gather(*(client.generate([user(f"q{i}")])
                                               for i in range(3))))
        finally:
            await client.aclose()

    return asyncio.run(run())


def test_export_import_rerun(tmp_path: Path) -> None:
    cache = tmp_path / "run" / "cache.sqlite"
    with FakeLLMServer() as server:
        _ask(server, cache, defer=True)
        out = runner.invoke(app, ["batch", "export", "--cache", str(cache), "--out",
                                  str(tmp_path / "req.jsonl")])
        assert out.exit_code == 0 and "wrote 3 requests" in out.output
        write_batch_results(tmp_path / "req.jsonl", tmp_path / "res.jsonl")
        done = runner.invoke(app, ["batch", "import", str(tmp_path / "res.jsonl"),
                                   "--cache", str(cache)])
        assert done.exit_code == 0 and "imported 3 answers" in done.output
        results = _ask(server, cache, defer=False)
        assert server.count == 0
    assert all(isinstance(r, ModelResponse) and r.cached for r in results)


def test_import_of_a_partial_file_exits_two(tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    with FakeLLMServer() as server:
        _ask(server, cache, defer=True)
    runner.invoke(app, ["batch", "export", "--cache", str(cache), "--out",
                        str(tmp_path / "req.jsonl")])
    first = (tmp_path / "req.jsonl").read_text().splitlines()[0]
    cid = first.split('"custom_id": "')[1][:64]
    write_batch_results(tmp_path / "req.jsonl", tmp_path / "res.jsonl", drop_ids={cid})
    done = runner.invoke(app, ["batch", "import", str(tmp_path / "res.jsonl"),
                               "--cache", str(cache)])
    assert done.exit_code == 2 and "1 pending requests have no answer" in done.output
    missing = runner.invoke(app, ["batch", "import", str(tmp_path / "nope.jsonl"),
                                  "--cache", str(cache)])
    assert missing.exit_code == 2 and "no such results file" in missing.output
