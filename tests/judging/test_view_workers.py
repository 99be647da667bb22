"""Evidence views rendered in worker processes: the same views and the same run as in one
process, and a run that goes on in this process when its workers die."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import typing
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from agentcredit.checklists import derive_checklist, load_rules
from agentcredit.evidence.view import render_evidence
from agentcredit.formats import load
from agentcredit.judging import fit
from agentcredit.judging.fit import ViewWorkers
from agentcredit.llm import ModelClient, make_provider, register_script
from agentcredit.runs.judging import JudgeOptions, judge_trials
from agentcredit.schema import (
    Checklist,
    Observation,
    Origin,
    Step,
    TokenUsage,
    ToolCall,
    Trial,
)
from agentcredit.store.run_store import RunStore
from tests.judging import scripted_judge
from tests.judging.synthetic import write_task, write_trials


@pytest.fixture
def every_view_in_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fit, "IN_PROCESS_FIRST", 0)


def _trials(root: Path, count: int, steps: int = 30) -> list[Trial]:
    write_trials(root, count, steps=steps)
    return load([root]).trials


def test_a_view_rendered_by_a_worker_is_the_one_rendered_here(
        tmp_path: Path, every_view_in_workers: None) -> None:
    trials = _trials(tmp_path, 6, steps=40)
    workers = ViewWorkers(2)

    async def both() -> list[object]:
        return await asyncio.gather(*(workers.render(t, 2_000, "Ten files.") for t in trials))

    try:
        views = asyncio.run(both())
        assert workers._pool is not None  # the workers rendered them
    finally:
        workers.close()
    for trial, view in zip(trials, views, strict=True):
        here = render_evidence(trial, budget_tokens=2_000, instruction="Ten files.")
        assert view.text == here.text and view.dropped == here.dropped  # type: ignore[attr-defined]
        assert "leaves out" in here.text  # the budget cut something: the plan was exercised
        for number, step in view.steps.items():  # type: ignore[attr-defined]
            assert "origins" in step.__dict__  # computed by the worker, sent back with it
            assert step.origins == here.steps[number].origins
            assert step.shown_output == here.steps[number].shown_output


def _judge(root: Path, trials: list[Trial], workers: int) -> list[tuple[object, ...]]:
    register_script("view-workers", lambda m, s: scripted_judge.answer(m, s))
    (task,) = load([root / "tasks"]).tasks
    checklist = derive_checklist(task, load_rules())
    assert isinstance(checklist, Checklist)
    store = RunStore(root / f"run-{workers}")
    options = JudgeOptions(model=ModelClient(make_provider("scripted/view-workers")),
                           concurrency=4, workers=workers)
    summary = asyncio.run(judge_trials(store, trials, {task.id: checklist}, {task.id: task},
                                       options))
    assert summary.judged == len(trials) and not summary.failed
    return sorted(store.db.execute(
        "SELECT trial_id, source, item_id, label, rationale, evidence FROM judgments"))


def test_a_run_with_two_workers_records_what_a_run_with_one_does(
        tmp_path: Path, every_view_in_workers: None) -> None:
    write_task(tmp_path / "tasks")
    trials = _trials(tmp_path / "trials", 24)
    one, two = _judge(tmp_path, trials, 1), _judge(tmp_path, trials, 2)
    assert len(one) == 24 * 20  # ten items each from the verifier and from the judge
    assert two == one


def test_when_the_workers_die_the_views_are_rendered_here_and_said_once(
        tmp_path: Path, every_view_in_workers: None, caplog: pytest.LogCaptureFixture) -> None:
    trials = _trials(tmp_path, 8)
    workers = ViewWorkers(2)

    async def run() -> list[object]:
        first = await workers.render(trials[0], 24_000, "x")
        assert workers._pool is not None
        for pid in list(workers._pool._processes):  # type: ignore[attr-defined]
            os.kill(pid, signal.SIGKILL)
        return [first, *await asyncio.gather(*(workers.render(t, 24_000, "x")
                                               for t in trials[1:]))]

    with caplog.at_level(logging.WARNING, logger=fit.__name__):
        try:
            views = asyncio.run(run())
        finally:
            workers.close()
    assert [v.text for v in views] == [  # type: ignore[attr-defined]
        render_evidence(t, budget_tokens=24_000, instruction="x").text for t in trials]
    assert workers.workers == 1 and workers._pool is None
    warned = [r.message for r in caplog.records if "workers stopped" in r.message]
    assert len(warned) == 1 and "rendered in this process" in warned[0]


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=3),
    max_leaves=8)


@st.composite
def _drawn_trials(draw: st.DrawFn) -> Trial:
    """Trials whose texts and tool-call arguments are any JSON values a reader can produce
    (non-finite floats and any unicode, lone surrogates included)."""
    text = st.text(alphabet=st.characters(), max_size=60)
    steps = []
    for index in range(draw(st.integers(0, 4))):
        calls = tuple(ToolCall(id=draw(st.none() | text), name=draw(text) or "bash",
                               arguments=draw(st.dictionaries(st.text(max_size=8),
                                                              _JSON_VALUES, max_size=3)))
                      for _ in range(draw(st.integers(0, 2))))
        steps.append(Step(index=index, source=draw(st.sampled_from(["agent", "user"])),
                          message=draw(text), tool_calls=calls,
                          observations=tuple(Observation(call_id=c.id, text=draw(text))
                                             for c in calls),
                          origin=Origin(path="t.json", pointer=f"/steps/{index}")))
    return Trial(id=draw(text) or "t", outcome="pass", format="drawn", source_path="t.json",
                 steps=tuple(steps), reward=draw(st.none() | st.floats()),
                 usage=TokenUsage(cost_usd=draw(st.none() | st.floats())))


@settings(max_examples=200, deadline=None)
@given(_drawn_trials())
def test_a_trial_sent_to_a_worker_arrives_as_it_left(trial: Trial) -> None:
    sent = fit.shipped(trial)
    if isinstance(sent, bytes):  # sent as JSON: it reads back as the same records
        back = Trial.model_validate_json(sent)
        assert repr(back) == repr(trial)  # repr: NaN != NaN, but its text is the same
    else:  # JSON cannot carry it: the records themselves are sent
        assert sent is trial
    here = render_evidence(trial, budget_tokens=400, instruction="x")
    there = fit.rendered_view(sent, 400, "x")
    assert there.text == here.text
    assert {n: s.origins for n, s in there.steps.items()} == \
        {n: s.origins for n, s in here.steps.items()}


def test_a_trial_json_cannot_carry_is_sent_as_records() -> None:
    trial = Trial(id="t", outcome="pass", format="drawn", source_path="t.json", steps=(
        Step(index=0, source="agent", message="half a pair \ud800", origin=Origin(path="t")),))
    assert fit.shipped(trial) is trial
    nan = Trial(id="t", outcome="pass", format="drawn", source_path="t.json", steps=(
        Step(index=0, source="agent", origin=Origin(path="t"), tool_calls=(
            ToolCall(name="f", arguments={"x": float("nan"), "y": -float("inf")}),)),))
    sent = fit.shipped(nan)
    assert isinstance(sent, bytes) and b"NaN" in sent and b"-Infinity" in sent
    assert repr(Trial.model_validate_json(sent)) == repr(nan)


def _float_fields(model: type[BaseModel], prefix: str = "") -> set[str]:
    found = set()
    for name, info in model.model_fields.items():
        for arg in (info.annotation, *typing.get_args(info.annotation)):
            if arg is float:
                found.add(prefix + name)
            elif isinstance(arg, type) and issubclass(arg, BaseModel):
                found |= _float_fields(arg, f"{prefix}{name}.")
            for inner in typing.get_args(arg):  # tuple[Step, ...]
                if isinstance(inner, type) and issubclass(inner, BaseModel):
                    found |= _float_fields(inner, f"{prefix}{name}.")
    return found


def test_every_float_field_of_a_trial_is_checked_before_it_is_sent_as_json() -> None:
    # a float field's own serializer writes NaN and Infinity as null: shipped() must
    # check each one and send a trial holding such a value as records
    assert _float_fields(Trial) == set(fit.FLOAT_FIELDS)
