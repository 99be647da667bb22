"""`inspect score LOG --scorer agentcredit/gcpc` in a subprocess equals `agentcredit judge`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentcredit.cli.app import app
from agentcredit.store import RunStore
from tests.formats.test_inspect_logs import _write_logs
from tests.judging import scripted_judge
from tests.llm.fake_server import FakeLLMServer

runner = CliRunner()
INSTRUCTION = re.compile(r"<instruction>\n(.*?)\n</instruction>", re.DOTALL)


def responder(body: dict[str, Any]) -> str:
    schema = body["response_format"]["json_schema"]["schema"]
    if schema.get("title") == "DraftChecklist":
        text = "\n".join(str(m["content"]) for m in body["messages"])
        question = INSTRUCTION.search(text).group(1).strip()  # type: ignore[union-attr]
        return json.dumps({"items": [
            {"id": "C1", "text": "The agent computes the sum with the tool.", "route": "judge",
             "quotes": [question], "checks": []},
            {"id": "C2", "text": "The final answer states the sum.", "route": "judge",
             "quotes": [question], "checks": []}], "waivers": []})
    return scripted_judge.answer(body["messages"], schema)


def test_inspect_score_with_gcpc_equals_agentcredit_judge(tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai")
    eval_log, _ = _write_logs(tmp_path / "logs")
    checklists, cache, scored = tmp_path / "checklists", tmp_path / "cache.sqlite", \
        tmp_path / "scored.eval"
    with FakeLLMServer(responder=responder) as server:
        env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
        command = [sys.executable, "-m", "inspect_ai", "score", str(eval_log),
                   "--scorer", "agentcredit/gcpc", "-S", f"checklists={checklists}",
                   "-S", "model=openai/judge", "-S", f"base_url={server.url}/v1",
                   "-S", "task=adder", "-S", f"cache={cache}", "--action", "append",
                   "--output-file", str(scored), "--display", "none"]
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        assert sorted(p.name for p in checklists.glob("*.json")) == [
            "adder__s1.json", "adder__s2.json"]
        assert (checklists / "checklists.lock").exists()
        check = runner.invoke(app, ["checklists", "check", str(checklists)])
        assert check.exit_code == 0, check.output
        run = tmp_path / "run"
        judged = runner.invoke(app, ["judge", str(eval_log), "--checklists", str(checklists),
                                     "--tasks", str(eval_log), "--out", str(run), "--model",
                                     "openai/judge", "--base-url", f"{server.url}/v1",
                                     "--cache", str(cache)], env={"OPENAI_API_KEY": "sk-test"})
        assert judged.exit_code == 0, judged.output
    log = _read_log(scored)
    from agentcredit.analysis.studies import trial_rows

    rows = {r.trial_id: r for r in trial_rows(RunStore(run))[0]}
    assert len(log) == 4
    for sample in log:
        value = sample["scores"]["gcpc"]["value"]
        trial_id = f"adder/{sample['id']}/{sample['epoch']}"
        expected = rows[trial_id].scores["judge_only"]
        assert value == pytest.approx(expected), trial_id
        metadata = sample["scores"]["gcpc"]["metadata"]
        assert {i["item_id"] for i in metadata["items"]} == {"C1", "C2"}
        assert metadata["checklist_hash"] == rows[trial_id].checklist_hash
        assert "includes" in sample["scores"]  # appended, the original score kept


def _read_log(path: Path) -> list[dict[str, Any]]:
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(path))
    return [json.loads(s.model_dump_json()) for s in log.samples or []]
