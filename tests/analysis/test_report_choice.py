"""At any number of trials the report shows in full only the trials a reader wants: per task
the lowest-scoring FAIL, the highest-scoring PASS and the largest disagreements between
partial credit and the verifier's outcome, tasks taking turns up to a fixed number."""

from __future__ import annotations

from agentcredit.analysis.studies import TrialRow
from agentcredit.report.build import chosen_trials


def _run(tasks: int, per_task: int) -> list[TrialRow]:
    return [TrialRow(f"t{t}-{n}", f"task{t}", "pass" if n % 2 else "fail", None, None, None,
                     None, "h", {"partial_credit": n / per_task}, {}, 0, 0)
            for t in range(tasks) for n in range(per_task)]


def test_per_task_the_extremes_and_the_disagreements_are_chosen() -> None:
    rows = _run(1, 10)  # fail: 0.0 0.2 0.4 0.6 0.8; pass: 0.1 0.3 0.5 0.7 0.9
    chosen = chosen_trials(rows)
    assert chosen[:2] == ["t0-0", "t0-2"]  # the lowest-scoring FAILs
    assert chosen[2:4] == ["t0-9", "t0-7"]  # the highest-scoring PASSes
    assert chosen[4:] == ["t0-1", "t0-8"]  # a PASS scored 0.1, a FAIL scored 0.8


def test_the_number_shown_does_not_grow_with_the_run() -> None:
    for tasks, per_task in ((3, 4), (200, 50), (2_000, 50)):
        chosen = chosen_trials(_run(tasks, per_task), max_trials=100)
        assert len(chosen) == min(100, tasks * min(per_task, 6))
        assert len(set(chosen)) == len(chosen)
        assert len({c.split("-")[0] for c in chosen}) == min(tasks, 100)  # tasks take turns
