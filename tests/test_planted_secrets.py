"""Issue 66: secrets planted in a skill folder (SKILL.md and its scripts) and in an endpoint
address (``http://user:password@host``) reach no file written (bank.json, BANK/files/, both
export formats, the run folder and its caches, read as bytes), no line printed and no answer
the reward service serves; the address's credential is sent as the API key instead, and the
run does not crash."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcredit.cli.app import app
from tests.cli.test_batch_pipeline import responder
from tests.conftest import EXAMPLES
from tests.llm.fake_batch_server import FakeBatchServer
from tests.llm.fake_server import FakeLLMServer

runner = CliRunner()
KEY = "sk-proj-" + "PlAnTeD0key" * 3
TOKEN = "ghp_" + "Zq9" * 13
PASSWORD = "hunter2-planted-pw-77"  # not key-shaped: found only as an assignment's value
URL_PASSWORD = "url-planted-Pw-5521"


def _holding(root: Path, *values: str) -> list[str]:
    return [f"{p}: {v}" for p in root.rglob("*") if p.is_file()
            for v in values if v.encode() in p.read_bytes()]


def test_a_skill_folders_secrets_reach_no_bank_file_or_export(tmp_path: Path) -> None:
    folder = tmp_path / "skills" / "deploy-service"
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: deploy-service\ndescription: Deploy the service to staging.\n---\n"
        f"# Deploy\n\n1. Export OPENAI_API_KEY={KEY} before running.\n"
        f"2. Log in with the token {TOKEN}.\n3. Run scripts/deploy.sh.\n")
    (folder / "scripts" / "deploy.sh").write_text(
        f"#!/bin/sh\nexport DB_PASSWORD={PASSWORD}\ncurl -H 'Authorization: Bearer {TOKEN}'"
        " https://staging.example\n")
    (folder / "scripts" / "deploy.sh").chmod(0o755)
    bank = tmp_path / "bank"
    out = runner.invoke(app, ["skills", "import", str(tmp_path / "skills"), "--out", str(bank)])
    assert out.exit_code == 0, out.output
    for fmt, target in (("skill-md", tmp_path / "md"), ("skillrl", tmp_path / "rl.json")):
        done = runner.invoke(app, ["skills", "export", str(bank), "--out", str(target),
                                   "--format", fmt])
        assert done.exit_code == 0, done.output
        assert KEY not in done.output and TOKEN not in done.output
    assert _holding(tmp_path / "bank", KEY, TOKEN, PASSWORD) == []
    assert _holding(tmp_path / "md", KEY, TOKEN, PASSWORD) == []
    assert KEY not in (tmp_path / "rl.json").read_text()
    script = tmp_path / "md" / "deploy-service" / "scripts" / "deploy.sh"
    assert "[REDACTED:" in script.read_text() and script.stat().st_mode & 0o111  # still a script
    again = runner.invoke(app, ["skills", "import", str(tmp_path / "skills"), "--out", str(bank)])
    assert again.exit_code == 0, again.output  # the same folder is the same skill: no conflict


def _run(tmp_path: Path, url: str, *extra: str) -> tuple[int, str]:
    out = runner.invoke(app, ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"), "--out",
                              str(tmp_path / "run"), "--model", "openai/judge-model",
                              "--base-url", url, *extra], env={"COLUMNS": "300"})
    return out.exit_code, out.output


def test_an_address_with_a_password_is_sent_as_the_key(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeLLMServer(responder=responder) as server:
        url = server.url.replace("://", f"://me:{URL_PASSWORD}@") + "/v1"
        code, output = _run(tmp_path, url)
        assert code == 0, output
        assert {h.get("authorization") for h in server.headers} == {f"Bearer {URL_PASSWORD}"}
    assert URL_PASSWORD not in output
    assert _holding(tmp_path / "run", URL_PASSWORD) == []


def test_batch_runs_neither_store_nor_print_the_password(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCREDIT_BATCH_POLL_SECONDS", "0.01")
    with FakeBatchServer(responder, polls=1) as server:
        url = server.url.replace("://", f"://me:{URL_PASSWORD}@")
        code, output = _run(tmp_path, url, "--batch-auto")
        assert code == 0, output
        status = runner.invoke(app, ["batch", "status", str(tmp_path / "run")])
    assert URL_PASSWORD not in output + status.output
    assert _holding(tmp_path / "run", URL_PASSWORD) == []


def _verifier(body: dict) -> str:
    """Writes the imported skill's rubric, then verifies turns against it."""
    from tests.rewards import scripted_verifier
    from tests.skills import scripted_skills
    schema = body["response_format"]["json_schema"]["schema"]
    script = scripted_skills if schema.get("title") == "RubricDraft" else scripted_verifier
    return script.answer(body["messages"], schema)


def test_the_reward_service_serves_no_planted_secret(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The service over a bank imported from the planted folder, its verifier reached through
    an address with a password: no secret in any answer, the start-up line or the bank."""
    pytest.importorskip("starlette")
    import httpx

    from agentcredit.cli.serve_cmd import build_app
    from agentcredit.llm import ModelSpec
    from agentcredit.llm.endpoint import EndpointSettings
    from tests.serve.conftest import running

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    folder = tmp_path / "skills" / "sum-numbers"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: sum-numbers\ndescription: Add the numbers in a question and give the "
        f"total.\n---\n# Sums\n\nUse the key {KEY} and the token {TOKEN}; the database "
        f"password: {PASSWORD}.\n\n1. Add the numbers.\n2. Answer in <answer> tags.\n")
    bank = tmp_path / "bank"
    with FakeLLMServer(responder=_verifier) as server:
        url = server.url.replace("://", f"://me:{URL_PASSWORD}@") + "/v1"
        imported = runner.invoke(app, ["skills", "import", str(tmp_path / "skills"), "--out",
                                       str(bank), "--model", "openai/writer", "--base-url", url])
        assert imported.exit_code == 0, imported.output
        assert URL_PASSWORD not in imported.output
        spec = ModelSpec("openai/verifier", base_url=url, cache=tmp_path / "cache.sqlite",
                         endpoint=EndpointSettings(concurrency=4))
        service = build_app(bank, spec, skill="sum-numbers")
        with running(service) as address:
            answers = [
                httpx.post(f"{address}/get_reward", json={
                    "query": ["Sum 1 and 1. <answer>2</answer>"], "prompts": ["Sum 1 and 1. "],
                    "labels": ["2"]}, timeout=60).text,
                httpx.post(f"{address}/turn_rewards", json={"trajectories": [
                    {"prompt": "Sum 1 and 1. ", "completion": "<answer>2</answer>"}]},
                    timeout=60).text,
                httpx.get(f"{address}/health").text,
                httpx.get(f"{address}/openapi.json").text]
        prompts = "".join(str(body) for body in server.requests)
        asked = sum("<rubric>" in str(body) for body in server.requests)
        assert asked > 0  # the verifier was really asked, with the skill's rubric
        assert "[REDACTED:" in prompts  # the skill's text was sent, redacted
    served = "\n".join(answers)
    for secret in (KEY, TOKEN, PASSWORD, URL_PASSWORD):
        assert secret not in served
        assert secret not in prompts  # the skill's text reached the verifier redacted
    assert _holding(tmp_path, URL_PASSWORD) == []
    assert _holding(bank, KEY, TOKEN, PASSWORD) == []
