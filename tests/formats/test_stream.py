"""TrialStream: the trials of load(), read a bounded window ahead of the consumer."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentcredit.checklists import derive_checklist, load_rules
from agentcredit.errors import InputError
from agentcredit.formats import TrialStream, load
from agentcredit.runs.judging import JudgeOptions, judge_trials
from agentcredit.schema import Trial
from agentcredit.store.run_store import RunStore
from tests.judging.synthetic import write_task, write_trials

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_a_stream_yields_what_load_reads_with_the_same_errors(tmp_path: Path) -> None:
    jobs = tmp_path / "jobs"
    write_trials(jobs / "a", 5, steps=3)
    write_trials(jobs / "b", 5, steps=3)  # the same trial names in a second job
    (jobs / "broken.json").write_text("{not json")
    whole = load([jobs, EXAMPLES / "jobs"])
    stream = TrialStream([jobs, EXAMPLES / "jobs"])
    streamed = list(stream)
    assert [t.id for t in streamed] == [t.id for t in whole.trials]
    assert len({t.id for t in streamed}) == len(streamed) == stream.read == 18
    assert [(e.path, e.reason) for e in stream.result.errors] == \
        [(e.path, e.reason) for e in whole.errors]
    assert [w.reason for w in stream.result.warnings] == [w.reason for w in whole.warnings]


def test_the_reader_stays_a_window_ahead(tmp_path: Path) -> None:
    write_trials(tmp_path, 60, steps=2)
    stream = TrialStream([tmp_path], window=4)
    ahead = []
    for n, _ in enumerate(stream, start=1):
        time.sleep(0.002)  # a slow consumer: the reader must wait, not read on
        ahead.append(stream._loader.records - n)
    assert stream.read == 60
    assert max(ahead) <= 4 + 1  # the queue, and the one trial being put
    assert max(ahead) >= 1  # it did read ahead


def test_strict_errors_reach_the_consumer(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(InputError):
        list(TrialStream([tmp_path / "bad.json"], strict=True))


def test_an_abandoned_stream_stops_its_reader(tmp_path: Path) -> None:
    write_trials(tmp_path, 40, steps=2)
    stream = TrialStream([tmp_path], window=2)
    for _ in stream:
        break
    assert stream._thread is not None
    stream._thread.join(timeout=5)
    assert not stream._thread.is_alive()
    assert stream._loader.records < 40


def test_judging_a_stream_holds_a_bounded_number_of_trials(tmp_path: Path) -> None:
    """judge_trials takes trials as they come: never more than its window is in hand."""
    write_task(tmp_path / "tasks")
    write_trials(tmp_path / "trials", 120, steps=2)
    tasks = {t.id: t for t in load([tmp_path / "tasks"]).tasks}
    checklists = {tid: derive_checklist(task, load_rules()) for tid, task in tasks.items()}
    store = RunStore(tmp_path / "run")
    taken, finished = [0], [0]

    async def counted() -> AsyncIterator[Trial]:
        async for trial in TrialStream([tmp_path / "trials"]):
            taken[0] += 1
            assert taken[0] - finished[0] <= 16 + 1  # the window of concurrency 1
            yield trial

    summary = asyncio.run(judge_trials(
        store, counted(), checklists, tasks, JudgeOptions(concurrency=1),
        progress=lambda _: finished.__setitem__(0, finished[0] + 1)))
    assert summary.trials == summary.judged == 120
    assert len(store.done_set("verifier")) == 120
