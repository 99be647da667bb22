"""Runs through the providers' batch APIs (a loopback fake of OpenAI Files + Batches and of
Anthropic Message Batches, driven by the real SDKs): split under the limits, submitted,
polled, collected, failures recorded with the provider's reason, expired requests sent again
alone, a client restarted between submit and collect, and a rerun that sends nothing."""

from __future__ import annotations

import csv
import gzip
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentcredit.cli.app import app
from agentcredit.llm.batch_ledger import BatchLedger
from agentcredit.llm.batch_split import BatchLimits, split_pending
from agentcredit.llm.cache import ResponseCache
from tests.cli.test_batch_pipeline import responder as openai_responder
from tests.conftest import EXAMPLES
from tests.llm.fake_batch_server import FakeBatchServer
from tests.llm.fake_server import FakeLLMServer, write_batch_results
from tests.llm.test_anthropic_batch import responder as anthropic_responder

ROOT = Path(__file__).parents[2]
runner = CliRunner()
ENV = {"OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-ant-test",
       "AGENTCREDIT_BATCH_POLL_SECONDS": "0.01"}


@pytest.fixture(autouse=True)
def _fast_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in ENV.items():
        monkeypatch.setenv(key, value)


def _scores(run: Path) -> dict[str, dict[str, str]]:
    with (run / "scores.csv").open() as handle:
        return {r["trial_id"]: r for r in csv.DictReader(handle)}


def _run(run: Path, model: str, url: str, *extra: str) -> Any:
    return runner.invoke(app, ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"),
                               "--out", str(run), "--model", model, "--base-url", url, *extra])


def test_split_streams_pending_requests_into_files_under_both_limits(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "responses.sqlite")
    for i in range(60):
        model = "anthropic/m" if i % 3 == 0 else "openai/m"
        cache.add_pending(f"k{i:03d}", model, {"messages": [{"content": "x" * (i * 13)}]})
    cache.add_pending("huge", "openai/m", {"messages": [{"content": "y" * 5000}]})
    cache.add_pending("local", "vllm/m", {"messages": []})
    limits = {"openai": BatchLimits(7, 3000), "anthropic": BatchLimits(5, 4000)}
    report = split_pending(cache.iter_pending(), tmp_path / "out", limits=limits)
    for file in report.files:
        lines = file.path.read_bytes().splitlines(keepends=True)
        assert len(lines) == len(file.keys) <= limits[file.provider].max_requests
        assert sum(map(len, lines)) == file.bytes <= limits[file.provider].max_bytes
        assert [json.loads(x)["custom_id"] for x in lines] == file.keys
    written = [k for f in report.files for k in f.keys]
    assert sorted(written) == sorted(f"k{i:03d}" for i in range(60))  # each exactly once
    assert [k for k, _, _ in report.too_large] == ["huge"]
    assert report.no_batch_api == [("local", "vllm/m")]


def test_run_batch_auto_equals_the_live_run_and_a_rerun_sends_nothing(tmp_path: Path) -> None:
    with FakeLLMServer(responder=openai_responder) as live_server:
        assert _run(tmp_path / "live", "openai/judge-model",
                    f"{live_server.url}/v1").exit_code == 0
    with FakeBatchServer(openai_responder, polls=2) as server:
        url = f"{server.url}/v1"
        out = _run(tmp_path / "auto", "openai/judge-model", url, "--batch-auto",
                   "--batch-limit", "3")
        assert out.exit_code == 0, out.output
        assert "batch rounds: 3" in out.output  # checklists, judging, nothing left
        assert sorted(server.requests_seen) == sorted(set(server.requests_seen))
        assert len(server.requests_seen) == 3 + 8 and server.chat_calls == 0
        assert all(len(b["lines"]) <= 3 for b in server.batches.values())
        again = _run(tmp_path / "auto", "openai/judge-model", url, "--batch-auto")
        assert again.exit_code == 0 and len(server.requests_seen) == 11  # nothing new
    live, auto = _scores(tmp_path / "live"), _scores(tmp_path / "auto")
    assert {t: r["partial_credit"] for t, r in live.items()} == \
        {t: r["partial_credit"] for t, r in auto.items()}
    status = runner.invoke(app, ["batch", "status", str(tmp_path / "auto")],
                           env={"COLUMNS": "200"})
    assert status.exit_code == 0 and "requests: 11 answered; still queued: 0" in status.output
    # a settled batch's input file is kept gzipped, whole, as the record of what was sent
    ledger = BatchLedger(tmp_path / "auto" / "responses.sqlite")
    jobs = ledger.jobs()
    assert sorted(p.name for p in (tmp_path / "auto" / "batches").iterdir()) == \
        sorted(Path(job.file).name for job in jobs)
    for job in jobs:
        assert job.file.endswith(".jsonl.gz")
        with gzip.open(job.file, "rt") as handle:
            sent = [json.loads(line)["custom_id"] for line in handle]
        assert sorted(sent) == sorted(ledger.keys_of(job.id))
    ledger.close()


def test_anthropic_refusals_expiry_and_dropped_requests(tmp_path: Path) -> None:
    fates: dict[str, str] = {}

    def plan(number: int, key: str) -> str | None:
        if number != 2:
            return None  # the checklists' batch is answered whole
        fate = fates.setdefault(key, ("refuse", "expire", "drop", None, None)[len(fates) % 5]
                                if len(fates) < 3 else "")
        return fate or None

    with FakeBatchServer(anthropic_responder, plan=plan, polls=1) as server:
        run = tmp_path / "run"
        out = _run(run, "anthropic/claude-test", server.url, "--batch-auto")
        ledger = BatchLedger(run / "responses.sqlite")
        jobs = ledger.jobs()
        refused = next(k for k, f in fates.items() if f == "refuse")
        resent = {k for k, f in fates.items() if f in ("expire", "drop")}
        assert [set(ledger.keys_of(j.id)) for j in jobs][2] == resent  # alone, once more
        assert ledger.states() == {"answered": 3 + 5 + 2, "retry": 2, "failed": 1}
        assert [(k, reason) for k, _, reason in ledger.failures()] == [
            (refused, "errored: prompt refused by a content filter")]
        assert server.requests_seen.count(refused) == 1 and server.chat_calls == 0
    assert out.exit_code == 1  # one trial not judged, said so
    assert "1 trials not judged" in " ".join(out.output.split())
    assert "refused by a content filter" in out.output
    rows = _scores(run)
    assert sum(1 for r in rows.values() if r["partial_credit"] == "") >= 1


def test_submit_then_collect_in_another_process_days_later(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with FakeBatchServer(openai_responder, polls=3) as server:
        url = f"{server.url}/v1"
        for expected in (3, 8):  # checklists, then judging
            assert _run(run, "openai/judge-model", url, "--batch").exit_code == 0
            sent = runner.invoke(app, ["batch", "submit", str(run), "--base-url", url])
            assert sent.exit_code == 0 and f"{expected} openai requests" in sent.output
            status = runner.invoke(app, ["batch", "status", str(run)], env={"COLUMNS": "200"})
            assert "(open)" in status.output and f"{expected} submitted" in status.output
            code = ("import sys; from agentcredit.cli.app import app; "
                    f"app(['batch', 'collect', {str(run)!r}, '--wait'])")
            done = subprocess.run([sys.executable, "-c", code], capture_output=True,
                                  text=True, env={**os.environ, **ENV}, cwd=ROOT, check=False)
            assert done.returncode == 0, done.stderr
            assert "0 batches open" in " ".join(done.stdout.split())
        final = _run(run, "openai/judge-model", url)
        assert final.exit_code == 0, final.output
        assert server.chat_calls == 0 and len(server.requests_seen) == 11


def test_split_files_for_vllm_and_a_folder_of_results(tmp_path: Path) -> None:
    run, folder = tmp_path / "run", tmp_path / "files"
    with FakeLLMServer(responder=openai_responder) as server:
        url = f"{server.url}/v1"
        for expected in (3, 8):
            assert _run(run, "openai/judge-model", url, "--batch").exit_code == 0
            out = runner.invoke(app, ["batch", "export", "--split", "--out", str(folder),
                                      "--batch-limit", "2", "--cache",
                                      str(run / "responses.sqlite")])
            assert out.exit_code == 0, out.output
            files = sorted(folder.glob("requests-openai-*.jsonl"))
            assert len(files) == (expected + 1) // 2
            for file in files:
                assert len(file.read_text().splitlines()) <= 2
                write_batch_results(file, folder / file.name.replace("requests", "results"),
                                    openai_responder)
            imported = runner.invoke(app, ["batch", "import", str(folder), "--cache",
                                           str(run / "responses.sqlite")])
            assert imported.exit_code == 0, imported.output
            assert f"imported {expected} answers" in imported.output
            for file in folder.iterdir():
                file.unlink()
        assert _run(run, "openai/judge-model", url).exit_code == 0
        assert server.count == 0


def test_a_client_killed_while_polling_resumes_without_sending_twice(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with FakeBatchServer(openai_responder, polls=10_000) as server:
        url = f"{server.url}/v1"
        code = ("import sys; from agentcredit.cli.app import app; "
                f"app(['run', {str(EXAMPLES / 'tasks')!r}, {str(EXAMPLES / 'jobs')!r}, "
                f"'--out', {str(run)!r}, '--model', 'openai/judge-model', '--base-url', "
                f"{url!r}, '--batch-auto'])")
        proc = subprocess.Popen([sys.executable, "-c", code], env={**os.environ, **ENV},
                                cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while not any(b["polls"] >= 3 for b in server.batches.values()):
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert len(server.batches) == 1  # killed while polling the checklists' batch
        server.polls = 1
        out = _run(run, "openai/judge-model", url, "--batch-auto")
        assert out.exit_code == 0, out.output
        assert sorted(server.requests_seen) == sorted(set(server.requests_seen))
        assert len(server.requests_seen) == 11 and server.chat_calls == 0


def test_a_client_killed_between_creation_and_the_ledger_write_adopts_its_batch(
        tmp_path: Path) -> None:
    run = tmp_path / "run"
    with FakeBatchServer(openai_responder, polls=1) as server:
        url = f"{server.url}/v1"
        assert _run(run, "openai/judge-model", url, "--batch").exit_code == 0  # 3 queued
        code = ("import sys; from agentcredit.cli.app import app; "
                f"app(['batch', 'submit', {str(run)!r}, '--base-url', {url!r}])")
        proc = subprocess.Popen([sys.executable, "-c", code], env={**os.environ, **ENV},
                                cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        server.kill_after_create = proc.pid  # dies once the provider created the batch
        assert proc.wait(timeout=120) == -signal.SIGKILL
        assert len(server.batches) == 1
        ledger = BatchLedger(run / "responses.sqlite")
        assert ledger.jobs() == [] and len(ledger.intents()) == 1  # the client never knew
        ledger.close()
        again = runner.invoke(app, ["batch", "submit", str(run), "--base-url", url])
        assert again.exit_code == 0, again.output
        assert len(server.batches) == 1  # adopted by its token, not created a second time
        ledger = BatchLedger(run / "responses.sqlite")
        assert [j.id for j in ledger.jobs()] == ["batch_00001"] and ledger.intents() == []
        ledger.close()
        out = _run(run, "openai/judge-model", url, "--batch-auto")
        assert out.exit_code == 0, out.output
        assert sorted(server.requests_seen) == sorted(set(server.requests_seen))  # once each
        assert len(server.requests_seen) == 11 and server.chat_calls == 0


def test_an_intent_the_provider_never_created_is_sent_again(tmp_path: Path) -> None:
    from agentcredit.llm.batch_api import adopt, submit

    class Refusing:
        provider, base_url = "openai", None

        def create(self, file: Any, token: str) -> tuple[str, str | None]:
            raise ConnectionError("the connection dropped before the provider answered")

        def find(self, token: str, since: float) -> tuple[str, str | None] | None:
            return None

    cache = ResponseCache(tmp_path / "responses.sqlite")
    ledger = BatchLedger(tmp_path / "responses.sqlite")
    cache.add_pending("k1", "openai/m", {"messages": [{"role": "user", "content": "x"}]})
    with pytest.raises(ConnectionError):
        submit(cache, ledger, {"openai": Refusing()}, tmp_path / "files")  # type: ignore[dict-item]
    assert ledger.in_flight() == {"k1"} and len(ledger.intents()) == 1
    assert adopt(ledger, {"openai": Refusing()}) == []  # type: ignore[dict-item]
    assert ledger.intents() == [] and ledger.in_flight() == set()  # pending again
