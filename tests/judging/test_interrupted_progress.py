"""Issue 57: an interrupted judging pass never reports more trials done than were judged."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agentcredit.checklists import derive_checklist, load_rules
from agentcredit.formats import load
from agentcredit.llm import ModelClient, register_script
from agentcredit.llm.providers.scripted import ScriptedProvider
from agentcredit.runs import JudgeOptions
from agentcredit.runs.in_process import judge_in_process
from agentcredit.schema import Checklist
from agentcredit.store import RunStore
from tests.judging import scripted_judge
from tests.judging.synthetic import write_task, write_trials


def test_progress_counts_only_finished_trials_when_interrupted(tmp_path: Path) -> None:
    write_task(tmp_path / "tasks")
    write_trials(tmp_path / "trials", 12, steps=4)
    (task,) = load([tmp_path / "tasks"]).tasks
    checklist = derive_checklist(task, load_rules())
    assert isinstance(checklist, Checklist)
    answered = {"n": 0}

    async def slow(messages: object, schema: object) -> str:
        answered["n"] += 1
        if answered["n"] > 2:
            await asyncio.sleep(30)  # the rest are still in flight when Ctrl-C comes
        return scripted_judge.answer(messages, schema)  # type: ignore[arg-type]

    register_script("slow-judge", slow)
    model = ModelClient(ScriptedProvider("slow-judge"), cache=None)
    done: list[str] = []

    async def interrupted() -> None:
        job = asyncio.ensure_future(judge_in_process(
            RunStore(tmp_path / "run"), load([tmp_path / "trials"]).trials,
            {task.id: checklist}, {task.id: task}, JudgeOptions(model=model, concurrency=4),
            done.append))
        await asyncio.sleep(1.0)
        job.cancel()
        with pytest.raises(asyncio.CancelledError):
            await job

    asyncio.run(interrupted())
    judged = RunStore(tmp_path / "run").done_set("llm")
    assert len(done) == len(judged) < 12
