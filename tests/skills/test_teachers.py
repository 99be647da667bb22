"""The teacher trials a build keeps: at most a prompt's worth per task and teacher, both
outcomes, the same choice in any read order, the rest dropped as it streams by."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agentcredit.llm import ModelClient, make_provider, register_script
from agentcredit.schema import Origin, Step, Task, Trial
from agentcredit.skills.build import BuildOptions, build_bank
from agentcredit.skills.embed import make_embedder
from agentcredit.skills.teachers import Teachers
from tests.skills import scripted_skills
from tests.skills.helpers import example_records

STEPS = (Step(index=0, source="agent", message="ran ls", origin=Origin(path="x")),)


def trial(number: int, outcome: str, task: str = "t1") -> Trial:
    return Trial(id=f"trial-{number:05d}", task_id=task, outcome=outcome, steps=STEPS,
                 format="atif", source_path="x")


outcomes = st.lists(st.sampled_from(["pass", "fail", "none"]), max_size=60)


@settings(max_examples=60, deadline=None)
@given(outcomes, st.integers(1, 12), st.randoms(use_true_random=False))
def test_the_choice_is_bounded_balanced_in_read_order_and_independent_of_it(
        labels: list[str], keep: int, rng: Any) -> None:
    trials = [trial(i, label) for i, label in enumerate(labels)]
    chosen = Teachers.gather(trials, keep=keep).groups.get("t1", {})
    kept = next(iter(chosen.values()), [])
    assert len(kept) == min(keep, len(trials))
    if len(trials) <= keep:
        assert kept == trials  # a small group is kept whole: its prompt is unchanged
    assert kept == [t for t in trials if t in kept]  # in the order they were read
    # each outcome class gets its turn: none is short while another has more than its share
    counts = {c: sum(t.outcome == c for t in kept) for c in ("pass", "fail", "none")}
    offered = {c: labels.count(c) for c in counts}
    for c in counts:
        if counts[c] < offered[c]:
            assert all(counts[c] >= counts[o] - 1 for o in counts if o != c)
    shuffled = list(trials)
    rng.shuffle(shuffled)
    again = next(iter(Teachers.gather(shuffled, keep=keep).groups.get("t1", {}).values()), [])
    assert {t.id for t in again} == {t.id for t in kept}


def test_a_stream_is_held_only_as_far_as_the_kept_trials() -> None:
    made, freed, peak = 0, [0], 0

    def stream() -> Iterator[Trial]:
        nonlocal made, peak
        for i in range(3_000):
            one = trial(i, ("pass", "fail")[i % 2], task=f"t{i % 3}")
            weakref.finalize(one, lambda: freed.__setitem__(0, freed[0] + 1))
            made += 1
            yield one
            del one
            if i % 250 == 0:
                gc.collect()
                peak = max(peak, made - freed[0])

    found = Teachers.gather(stream(), keep=8)
    # three tasks x (pass and fail heaps of at most 8), plus the trial in hand
    assert peak <= 3 * 2 * 8 + 1, peak
    assert found.read == 3_000 and found.usable == 3_000
    assert all(len(g) == 8 for teachers in found.groups.values() for g in teachers.values())
    assert sum(len(ids) for ids in found.ids.values()) == 3_000  # the gates know every id


def test_trials_of_unknown_tasks_are_skipped_and_counted() -> None:
    trials = [trial(i, "pass", task="elsewhere") for i in range(40)]
    found = Teachers.gather(trials, keep=5).for_tasks([])
    assert not found.groups and found.usable == 0
    assert len(found.skipped) == 6  # the five kept, named, and one line for the other 35
    assert found.skipped[-1][0].startswith("35 more of ")


def test_a_teacher_with_more_trials_than_a_prompt_shows_is_sampled_and_said(
        tmp_path: Path) -> None:
    tasks, examples = example_records()
    task: Task = next(t for t in tasks if any(x.task_id == t.id and x.steps for x in examples))
    template = next(x for x in examples if x.task_id == task.id and x.steps)
    many = [template.model_copy(update={"id": f"rollout-{i:03d}",
                                        "outcome": ("pass", "fail")[i % 2]})
            for i in range(80)]
    shown: list[int] = []

    def script(messages: list[dict[str, Any]], schema: dict[str, Any] | None) -> str:
        if (schema or {}).get("title") == "TeacherAnalysis":
            shown.append(messages[-1]["content"].count("<trial id="))
        return scripted_skills.answer(messages, schema)

    register_script("many-rollouts", script)
    client = ModelClient(make_provider("scripted/many-rollouts"))
    options = BuildOptions(model=client, embedder=make_embedder("lexical"), budget_tokens=60_000)
    report = asyncio.run(build_bank(iter(many), [task], tmp_path / "bank", options))
    assert shown == [32]
    assert any("80 trials, the prompt shows 32" in note for note in report.notes)
    assert report.bank is not None
    [skill] = report.bank.skills
    assert len(skill.lineage.trial_ids) == 32
    kept = [t for t in many if t.id in set(skill.lineage.trial_ids)]
    assert sum(t.outcome == "pass" for t in kept) == 16
