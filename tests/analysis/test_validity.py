"""Validity a skeptic accepts: judge-only scores, judge-verifier agreement, evidence kinds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from agentcredit.analysis.agreement import cohen_kappa
from agentcredit.analysis.analyze import analyze_store
from agentcredit.cli.app import app
from agentcredit.evidence.quotes import citation_kind
from agentcredit.evidence.view import evidence_steps
from agentcredit.formats import load
from agentcredit.llm import register_script
from agentcredit.store import RunStore
from tests.conftest import EXAMPLES, write_json
from tests.judging import scripted_judge

runner = CliRunner()


def test_cohen_kappa_hand_worked_three_by_three() -> None:
    matrix = np.array([[10, 2, 3], [1, 8, 1], [2, 2, 6]])
    # n = 35, p_o = 24/35; margins rows 15, 10, 10, columns 13, 12, 10;
    # p_e = (15*13 + 10*12 + 10*10) / 35**2 = 415/1225
    p_o, p_e = 24 / 35, 415 / 1225
    assert cohen_kappa(matrix) == pytest.approx((p_o - p_e) / (1 - p_e))
    assert round(cohen_kappa(matrix) or 0, 6) == 0.524691
    assert cohen_kappa(np.zeros((3, 3))) is None
    assert cohen_kappa(np.array([[5, 0], [0, 0]])) is None  # p_e = 1


def _mixed(messages: list[dict[str, Any]], schema: dict[str, Any] | None) -> str:
    """Yes for every item but the first, which is No; both cite the first output shown."""
    answer = json.loads(scripted_judge.answer(messages, schema))
    if (schema or {}).get("title") == "ItemsAnswer" and answer["items"]:
        first = answer["items"][0]
        if first["label"] == "yes":
            first["label"] = "no"
    return json.dumps(answer)


@pytest.fixture
def mixed_run(tmp_path: Path) -> Path:
    register_script("mixed-judge", _mixed)
    out = runner.invoke(app, ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"), "--out",
                              str(tmp_path / "run"), "--model", "scripted/mixed-judge",
                              "--holistic"])
    assert out.exit_code == 0, out.output
    return tmp_path / "run"


def test_judge_only_equals_a_hand_computation(mixed_run: Path) -> None:
    store = RunStore(mixed_run)
    result = analyze_store(store, draws=200)
    from agentcredit.analysis.studies import trial_rows

    rows, checklists = trial_rows(store)
    llm = store.judgments("llm")
    checked = 0
    for row in rows:
        labels = [j.label for j in llm[(row.trial_id, "llm")]]
        yes, no = labels.count("yes"), labels.count("no")
        expected = yes / (yes + no) if yes + no else None
        assert row.scores["judge_only"] == expected, row.trial_id
        if expected is not None:
            n = len(checklists[row.checklist_hash].items)
            assert expected == pytest.approx((n - 1) / n)  # the one No of the script
            checked += 1
    assert checked >= 6
    judge_only = result["scorers"]["judge_only"]
    assert judge_only["uses_outcome"] is False and judge_only["auc"]["estimate"] is not None
    assert result["scorers"]["partial_credit"]["uses_outcome"] is True
    assert "holistic" in result["discrimination"]["judge_only_paired"]


def test_analyze_json_carries_the_validity_numbers(mixed_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "analysis.json"
    done = runner.invoke(app, ["analyze", str(mixed_run), "--json", str(out), "--bootstrap",
                               "200"])
    assert done.exit_code == 0, done.output
    data = json.loads(out.read_text())
    assert data["scorers"]["judge_only"]["auc"]["estimate"] is not None
    kappa = data["agreement"]["kappa"]
    assert set(kappa) >= {"estimate", "ci_low", "ci_high"}
    confusion = data["agreement"]["confusion"]
    assert set(confusion) == {"llm_yes", "llm_no", "llm_abstain"}
    total = sum(v for row in confusion.values() for v in row.values())
    assert total == data["agreement"]["items"] > 0
    assert data["evidence_kinds"]["output"] > 0
    assert "uses" in done.output and "Cohen's κ" in done.output


def _quote_kinds(trial: Any, step: int, quotes: list[str]) -> list[str | None]:
    steps = evidence_steps(trial)
    return [citation_kind(q, steps[step]) for q in quotes]


def test_evidence_kinds_on_atif_claude_code_and_tb1(tmp_path: Path) -> None:
    atif = next(t for t in load([EXAMPLES / "jobs"]).trials
                if t.id == "log-error-filter__Hs2nD8q")
    step = atif.steps[1]
    echo, shown = step.observations[0].text.splitlines()[:2]
    assert echo.startswith("Command: head -n 3")  # gemini-cli echoes the command
    assert _quote_kinds(atif, 2, [shown[:20], "head -n 3", step.message[:15], echo[:20],
                                  f"{echo}\n{shown}"]) == \
        ["output", "action", "claim", "action", "output"]
    events = [
        {"type": "system", "subtype": "init", "session_id": "s", "model": "claude-x"},
        {"type": "assistant", "message": {"id": "m1", "role": "assistant", "content": [
            {"type": "text", "text": "Listing the folder now."},
            {"type": "tool_use", "id": "tu1", "name": "Bash", "input": {"command": "ls -la"}}]}},
        {"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "tu1", "content": "report.txt"}]}}]
    path = tmp_path / "cc" / "agent" / "claude-code.txt"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    [cc] = load([path]).trials
    number = next(s.index + 1 for s in cc.steps if s.tool_calls)
    assert _quote_kinds(cc, number, ["report.txt", "ls -la", "Listing the folder"]) == \
        ["output", "action", "claim"]
    folder = tmp_path / "tb1" / "hello"
    write_json(folder / "results.json", {
        "id": "u", "trial_name": "hello.1-of-1.run", "task_id": "hello",
        "instruction": "Create hello.txt", "is_resolved": True, "failure_mode": "unset",
        "parser_results": {"test_exists": "passed"}})
    esc = "\x1b"
    log = (f"{esc}[1;32mUser{esc}[0m:\r\nPlease solve this issue: Create hello.txt\r\n"
           f"{esc}[1;31mmini-swe-agent{esc}[0m{esc}[31m (step 1, $0.01):{esc}[0m\r\n"
           "THOUGHT: write the file now.\r\n\r\n```bash\r\necho hi > hello.txt\r\n```\r\n"
           f"{esc}[1;32mUser{esc}[0m:\r\n<returncode>0</returncode>\r\n<output>\r\ndone\r\n"
           "</output>\r\n")
    (folder / "sessions").mkdir()
    (folder / "sessions" / "agent.log").write_bytes(log.encode())
    [tb1] = load([tmp_path / "tb1"]).trials
    number = next(s.index + 1 for s in tb1.steps if s.tool_calls)
    assert _quote_kinds(tb1, number, ["<returncode>0</returncode>", "echo hi > hello.txt",
                                      "write the file now"]) == ["harness", "action", "claim"]


def _action_only(messages: list[dict[str, Any]], schema: dict[str, Any] | None) -> str:
    """Yes for every item, citing only the first ACTION line (a command, not an output)."""
    if (schema or {}).get("title") != "ItemsAnswer":
        return scripted_judge.answer(messages, schema)
    text = scripted_judge._text(messages)
    step, action = None, None
    for line in text.splitlines():
        if line.startswith("[step ") and line.endswith(" agent"):
            step = int(line.split()[1].rstrip("]"))
        elif line.startswith("ACTION: ") and step is not None:
            action = line[len("ACTION: "):][:30]
            break
    answer = json.loads(scripted_judge.answer(messages, schema))
    for item in answer["items"]:
        item.update({"label": "yes", "evidence": [{"step": step, "quote": action}]})
    return json.dumps(answer)


def test_outputs_mode_turns_an_action_only_yes_into_abstain(tmp_path: Path) -> None:
    register_script("action-judge", _action_only)
    labels = {}
    for mode in ("outputs", "any"):
        run = tmp_path / mode
        out = runner.invoke(app, ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"),
                                  "--out", str(run), "--model", "scripted/action-judge",
                                  "--evidence", mode])
        assert out.exit_code == 0, out.output
        judged = RunStore(run).judgments("llm")[("log-error-filter__Hs2nD8q", "llm")]
        labels[mode] = {(j.label, j.reason) for j in judged}
        assert all(c.kind == "action" for j in judged for c in j.evidence)
        summary = json.loads((run / "summary.json").read_text())
        if mode == "outputs":
            assert summary["evidence_kinds"]["no_output_evidence"] > 0
    assert labels["outputs"] == {("abstain", "no_output_evidence")}
    assert labels["any"] == {("yes", None)}
    bad = runner.invoke(app, ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"), "--out",
                              str(tmp_path / "x"), "--evidence", "everything"])
    assert bad.exit_code == 2 and "--evidence must be one of" in bad.output


def test_agreement_counts_a_stream_and_lists_the_first_conflicts(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Pairs are counted as they come; every conflict is counted, the first ones listed."""
    from agentcredit.analysis import agreement as module
    from agentcredit.analysis.agreement import AgreementCounts, Pair

    monkeypatch.setattr(module, "MAX_CONFLICTS", 2)
    labels = [("yes", "yes"), ("yes", "no"), ("no", "no"), ("no", "yes"), ("abstain", "yes"),
              ("yes", "no"), ("no", "yes"), ("yes", "no")]

    def stream():  # type: ignore[no-untyped-def]
        for k, (llm, verifier) in enumerate(labels):
            yield Pair(f"t{k}", f"task{k % 2}", "A1", llm, verifier, (), ())

    counts = AgreementCounts()
    for pair in stream():  # counted as they come: a stream is never held
        counts.add(pair)
    found = counts.result(np.random.default_rng(0), draws=50)
    assert (found["items"], found["decided_both"], found["conflicts_total"]) == (8, 7, 5)
    assert [c["trial_id"] for c in found["conflicts"]] == ["t1", "t3"]
    assert found["confusion"]["llm_yes"] == {"verifier_yes": 1, "verifier_no": 3,
                                             "verifier_abstain": 0}
    assert found["kappa"]["estimate"] == pytest.approx(cohen_kappa(np.array([[1, 3], [2, 1]])))
    assert set(found["per_task"]) == {"task0", "task1"}
