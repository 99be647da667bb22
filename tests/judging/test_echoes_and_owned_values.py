"""Echoed commands are not output evidence, and a task's own planted values are not secrets."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from agentcredit.cli.app import app
from agentcredit.llm import register_script
from agentcredit.store import RunStore
from tests.conftest import EXAMPLES
from tests.judging import scripted_judge
from tests.owned_values import FOREIGN, OWNED, capturing, planted_examples

runner = CliRunner()


def test_a_judge_citing_only_echoed_commands_gets_no_output_evidence(tmp_path: Path) -> None:
    # Every first output line in examples/ is gemini-cli's "Command: ..." echo.
    register_script("echo-quoter", lambda m, s: scripted_judge.answer(m, s, echoes=True))
    out = runner.invoke(app, ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"), "--out",
                              str(tmp_path), "--model", "scripted/echo-quoter",
                              "--evidence", "outputs"], env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    llm = [j for (_, source), js in RunStore(tmp_path).judgments("llm").items()
           if source == "llm" for j in js]
    echoes = [j for j in llm if j.evidence and j.evidence[0].quote.startswith("Command:")]
    assert len(echoes) >= 25  # 28 of the 31 citations quote an echo
    assert all(c.kind == "action" for j in echoes for c in j.evidence)
    assert all(j.label == "abstain" and j.reason == "no_output_evidence" for j in echoes)
    # The rest quote a write tool's own report ("Successfully created ..."): real output.
    others = [c for j in llm for c in j.evidence if not c.quote.startswith("Command:")]
    assert all(c.kind == "output" for c in others)
    kinds = json.loads((tmp_path / "summary.json").read_text())["evidence_kinds"]
    assert kinds["output"] == len(others) and kinds["action"] == len(echoes)


def test_values_the_task_owns_are_not_redacted_and_others_still_are(tmp_path: Path) -> None:
    tasks, jobs = planted_examples(tmp_path)
    instruction = tasks / "log-error-filter" / "instruction.md"
    instruction.write_text(instruction.read_text() + f"\nThe log also holds the key {OWNED}; "
                           "it must not appear in `/app/errors.txt`.\n")
    seen: list[str] = []
    register_script("owned", capturing(seen, scripted_judge.answer))
    out = runner.invoke(app, ["run", str(tasks), str(jobs), "--out", str(tmp_path / "run"),
                              "--model", "scripted/owned"], env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    synthesis = [p for p in seen if "REQUIREMENT UNITS" in p and OWNED in p]
    assert synthesis, "the checklist writer sees the task's own value"
    judged = [p for p in seen if "<trajectory>" in p and "other_key=" in p]
    assert judged and all(f"key={OWNED}" in p for p in judged)
    assert all(FOREIGN not in p and "other_key=[REDACTED:aws_access_key_id]" in p
               for p in judged)
    assert "values kept: the task's own" in out.output
    assert "secrets redacted" in out.output
