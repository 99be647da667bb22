"""`skills reward` over many trials: read twice as a stream, verified within a bounded window,
rewarded one group at a time, and the same rewards as one computation over every trial."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentcredit.formats import load
from agentcredit.llm import register_script
from agentcredit.llm.spec import client_for
from agentcredit.rewards import jobs, run
from agentcredit.rewards.jobs import turn_rewards
from agentcredit.rewards.run import Assignment, verify_all
from agentcredit.rewards.table import Scored, outcome_value, reward_table
from agentcredit.schema import Lineage
from agentcredit.skills.bank import make_bank
from agentcredit.store.run_store import RunStore
from tests.judging.synthetic import write_trials
from tests.rewards import scripted_verifier
from tests.skills.helpers import make_skill


def _bank():  # type: ignore[no-untyped-def]
    skill = make_skill("sums", lineage=Lineage(stage="import", sources=("x",)))
    return make_bank([skill], benchmark=None, embedding="lexical-tfidf-1",
                     rules_version="r", prompt_version="p")


@pytest.fixture(scope="module", autouse=True)
def _verifier() -> None:
    register_script("stream-verifier", scripted_verifier.answer)


def _two_tasks(root: Path, each: int) -> list[Path]:
    """Two tasks' trials; every third passes (so outcome advantages differ by trial)."""
    jobs_ = [write_trials(root / name, each, steps=8, task=name, seed=n)
             for n, name in enumerate(("task-a", "task-b"))]
    for job in jobs_:
        for k, result in enumerate(sorted(job.glob("*/result.json"))):
            data = json.loads(result.read_text())
            data["verifier_result"]["rewards"]["reward"] = 1.0 if k % 3 == 0 else 0.0
            result.write_text(json.dumps(data))
    return jobs_


@pytest.mark.parametrize("chunk", [256, 5])
def test_rows_are_written_a_group_at_a_time_and_equal_one_computation_over_all(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    """Groups of 12 trials: whole (chunk 256), or read back five verdicts at a time."""
    monkeypatch.setattr(jobs, "MAX_TRIALS", 5)
    monkeypatch.setattr(run, "GROUP_CHUNK", chunk)
    roots = _two_tasks(tmp_path / "in", 12)
    result = turn_rewards(_bank(), roots, tmp_path / "run", model="scripted/stream-verifier",
                          skill="sums", process_weight=0.5)
    assert len(result.summary.verified) == 24 and not result.summary.failed
    rows = [json.loads(line) for line in
            (tmp_path / "run" / "turn_rewards.jsonl").read_text().splitlines()]
    assert result.rows == len(rows) and result.rewarded == 24
    groups = [r["group"] for r in rows]
    assert groups == sorted(groups, key=["task-a", "task-b"].index)  # one group, then the next
    # the same numbers as the reward math over every trial at once
    verdicts = RunStore(tmp_path / "run").turn_verdicts()
    skill = _bank().get("sums")
    trials = {t.id: t for t in load(roots).trials}
    whole = reward_table([Scored(verdict=v, rubric=skill.rubric, outcome=outcome_value(
        trials[t]), group=trials[t].task_id or t) for t, v in verdicts.items()],
        process_weight=0.5)
    key = ("trial_id", "turn")
    for column in ("combined", "process_advantage", "outcome_advantage", "progress", "kept"):
        expected = {tuple(r[k] for k in key): r[column] for r in whole.rows}
        assert {tuple(r[k] for k in key): r[column] for r in rows} == pytest.approx(expected)
    assert (result.table.suppressed, result.table.dropped) == (whole.suppressed, whole.dropped)
    assert len({round(r["outcome_advantage"], 6) for r in rows}) > 1  # not all zero
    page = (tmp_path / "run" / "turn_rewards.html").read_text()
    assert page.count("<details") == 5  # the page shows MAX_TRIALS trials, not the run
    pyarrow = pytest.importorskip("pyarrow.parquet")
    table = pyarrow.read_table(tmp_path / "run" / "turn_rewards.parquet")
    assert table.num_rows == len(rows)
    assert table.column("combined").to_pylist() == pytest.approx([r["combined"] for r in rows])


def test_verification_holds_a_bounded_window_of_trials(tmp_path: Path) -> None:
    """The assignments are taken as the window frees: never more than a few times the
    concurrency are taken and not yet finished, however many trials there are."""
    root = write_trials(tmp_path / "in", 60, steps=4)
    trials = load([root]).trials
    skill = _bank().get("sums")
    taken = finished = most = 0

    async def assignments() -> AsyncIterator[Assignment]:
        nonlocal taken, most
        for trial in trials:
            taken += 1
            most = max(most, taken - finished)
            yield Assignment(trial, skill, None, "Sum the numbers.")

    def progress(_: str) -> None:
        nonlocal finished
        finished += 1

    async def run() -> None:
        client = client_for("scripted/stream-verifier", default_cache=tmp_path / "c.sqlite")
        assert client is not None
        summary = await verify_all(RunStore(tmp_path / "run"), assignments(), client,
                                   concurrency=2, progress=progress)
        assert len(summary.verified) == 60
        await client.aclose()

    asyncio.run(run())
    assert finished == 60
    assert most <= 16 + 1  # the window (max(16, 4 x concurrency)) and the one being taken
