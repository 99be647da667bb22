"""A trial handed to a judging worker arrives as it left; a model no worker can make again
is asked in this process."""

from __future__ import annotations

import asyncio
import typing
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from agentcredit.checklists import derive_checklist, load_rules
from agentcredit.evidence.view import render_evidence
from agentcredit.formats import load
from agentcredit.llm import ModelClient, make_provider, register_script
from agentcredit.llm.spec import recipe_of
from agentcredit.runs import shards
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


def _trials(root: Path, count: int, steps: int = 30) -> list[Trial]:
    write_trials(root, count, steps=steps)
    return load([root]).trials


def _judge(root: Path, trials: list[Trial], workers: int) -> list[tuple[object, ...]]:
    register_script("unpicklable", lambda m, s: scripted_judge.answer(m, s))
    (task,) = load([root / "tasks"]).tasks
    checklist = derive_checklist(task, load_rules())
    assert isinstance(checklist, Checklist)
    store = RunStore(root / f"run-{workers}")
    model = ModelClient(make_provider("scripted/unpicklable"))
    assert recipe_of(model) is None  # a lambda: no worker could make this model again
    options = JudgeOptions(model=model, concurrency=4, workers=workers)
    summary = asyncio.run(judge_trials(store, trials, {task.id: checklist}, {task.id: task},
                                       options))
    assert summary.judged == len(trials) and not summary.failed
    assert model.provider.calls == len(trials)  # type: ignore[attr-defined]  # all here
    return sorted(store.db.execute(
        "SELECT trial_id, source, item_id, label, rationale, evidence FROM judgments"))


def test_a_model_the_workers_cannot_make_is_asked_in_this_process(tmp_path: Path) -> None:
    write_task(tmp_path / "tasks")
    trials = _trials(tmp_path / "trials", 12)
    one, two = _judge(tmp_path, trials, 1), _judge(tmp_path, trials, 2)
    assert len(one) == 12 * 20  # ten items each from the verifier and from the judge
    assert two == one


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
    sent = shards.shipped(trial)
    if isinstance(sent, bytes):  # sent as JSON: it reads back as the same records
        back = Trial.model_validate_json(sent)
        assert repr(back) == repr(trial)  # repr: NaN != NaN, but its text is the same
    else:  # JSON cannot carry it: the records themselves are sent
        assert sent is trial
    here = render_evidence(trial, budget_tokens=400, instruction="x")
    there = render_evidence(shards.received(sent), budget_tokens=400, instruction="x")
    assert there.text == here.text
    assert {n: s.origins for n, s in there.steps.items()} == \
        {n: s.origins for n, s in here.steps.items()}


def test_a_trial_json_cannot_carry_is_sent_as_records() -> None:
    trial = Trial(id="t", outcome="pass", format="drawn", source_path="t.json", steps=(
        Step(index=0, source="agent", message="half a pair \ud800", origin=Origin(path="t")),))
    assert shards.shipped(trial) is trial
    nan = Trial(id="t", outcome="pass", format="drawn", source_path="t.json", steps=(
        Step(index=0, source="agent", origin=Origin(path="t"), tool_calls=(
            ToolCall(name="f", arguments={"x": float("nan"), "y": -float("inf")}),)),))
    sent = shards.shipped(nan)
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
    assert _float_fields(Trial) == set(shards.FLOAT_FIELDS)
