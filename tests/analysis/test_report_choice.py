"""At any number of trials the report shows in full only the trials a reader wants: per task
the lowest-scoring FAIL, the highest-scoring PASS and the largest disagreements between
partial credit and the verifier's outcome, tasks taking turns up to a fixed number."""

from __future__ import annotations

from dataclasses import dataclass

from agentcredit.report.build import chosen_trials


@dataclass
class _Row:
    trial_id: str
    task_id: str
    outcome: str


@dataclass
class _Score:
    partial_credit: float | None


def _run(tasks: int, per_task: int) -> tuple[list[_Row], dict[str, _Score]]:
    rows, scores = [], {}
    for t in range(tasks):
        for n in range(per_task):
            trial = f"t{t}-{n}"
            rows.append(_Row(trial, f"task{t}", "pass" if n % 2 else "fail"))
            scores[trial] = _Score(n / per_task)
    return rows, scores


def test_per_task_the_extremes_and_the_disagreements_are_chosen() -> None:
    rows, scores = _run(1, 10)  # fail: 0.0 0.2 0.4 0.6 0.8; pass: 0.1 0.3 0.5 0.7 0.9
    chosen = chosen_trials(rows, scores)
    assert chosen[:2] == ["t0-0", "t0-2"]  # the lowest-scoring FAILs
    assert chosen[2:4] == ["t0-9", "t0-7"]  # the highest-scoring PASSes
    assert chosen[4:] == ["t0-1", "t0-8"]  # a PASS scored 0.1, a FAIL scored 0.8


def test_the_number_shown_does_not_grow_with_the_run() -> None:
    for tasks, per_task in ((3, 4), (200, 50), (2_000, 50)):
        rows, scores = _run(tasks, per_task)
        chosen = chosen_trials(rows, scores, max_trials=100)
        assert len(chosen) == min(100, tasks * min(per_task, 6))
        assert len(set(chosen)) == len(chosen)
        assert len({c.split("-")[0] for c in chosen}) == min(tasks, 100)  # tasks take turns
