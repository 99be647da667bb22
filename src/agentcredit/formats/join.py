"""Matching trials to their tasks and reporting what does not line up.

Mismatches are warnings, not errors: a trial whose first user message differs from its
task's instruction is still scored, but the user should know.
"""

from __future__ import annotations

import re

from agentcredit.formats.pytest_checks import strip_parameters
from agentcredit.schema import ReadError, Task, Trial
from agentcredit.text import normalize_text


def first_user_message(trial: Trial) -> str | None:
    """The task as the trial recorded it: the first user step before any agent step, else
    the instruction stored with the trial (None when the log does not show the prompt)."""
    for step in trial.steps:
        if step.source == "agent":
            break
        if step.source == "user" and step.message.strip():
            return step.message
    return trial.instruction


def join_warnings(tasks: list[Task], trials: list[Trial]) -> list[ReadError]:
    """Problems joining trials to tasks: unknown task, instruction or check-id mismatch."""
    index = task_index(tasks)
    families = {task.benchmark for task in tasks}
    warnings: list[ReadError] = []
    missing: dict[str, list[Trial]] = {}
    for trial in trials:
        if trial.task_id is None:
            continue
        task = find_task(index, trial)
        if task is None:
            family = trial_benchmark(trial)
            if family is None or family in families:
                missing.setdefault(trial.task_id, []).append(trial)
            continue
        warnings.extend(_instruction_warning(task, trial))
        warnings.extend(_check_warning(task, trial))
    if tasks:  # only worth saying when some tasks were given at all
        for task_id, orphans in missing.items():
            warnings.append(ReadError(
                path=orphans[0].source_path, fatal=False,
                reason=f"task {task_id!r} not among the tasks read ({len(orphans)} trials)"))
    return warnings


def trial_benchmark(trial: Trial) -> str | None:
    """The task layout a trial's harness implies: harbor, terminal-bench-1 or unknown."""
    if trial.format.startswith("harbor"):
        return "harbor"
    if trial.format.startswith("tb1"):
        return "terminal-bench-1"
    return None


def task_index(tasks: list[Task]) -> dict[tuple[str | None, str], Task]:
    """Tasks by (benchmark, id) and by (None, id), for :func:`find_task`."""
    index: dict[tuple[str | None, str], Task] = {}
    for task in tasks:
        index.setdefault((task.benchmark, task.id), task)
        index.setdefault((None, task.id), task)
    return index


def find_task(index: dict[tuple[str | None, str], Task], trial: Trial) -> Task | None:
    """The task a trial attempted, matched within its benchmark family when known.

    Terminal-Bench 1 and 2 share task names (fix-git, hello-world) with different
    verifiers, so a TB1 trial never joins a Harbor task of the same name.
    """
    if trial.task_id is None:
        return None
    return index.get((trial_benchmark(trial), trial.task_id))


def _instruction_warning(task: Task, trial: Trial) -> list[ReadError]:
    said = first_user_message(trial)
    if said is None:
        return []
    expected = normalize_text(task.instruction)
    # Harnesses wrap the instruction in their own prompt, and terminals wrap long lines.
    if expected in normalize_text(said) or _loose(expected) in _loose(said):
        return []
    return [ReadError(path=trial.source_path, fatal=False,
                      reason=f"first user message differs from the instruction of {task.id}")]


def _loose(text: str) -> str:
    return re.sub(r"[^0-9a-z]", "", normalize_text(text).lower())


def _check_warning(task: Task, trial: Trial) -> list[ReadError]:
    if not trial.checks or not task.checks:
        return []
    known = {strip_parameters(c) for c in task.checks}
    unknown = [c for c in trial.checks if strip_parameters(c) not in known]
    if not unknown:
        return []
    shown = ", ".join(unknown[:3]) + (" …" if len(unknown) > 3 else "")
    return [ReadError(path=trial.source_path, fatal=False,
                      reason=f"{len(unknown)} reported checks not in the verifier of {task.id}: "
                             f"{shown}")]
