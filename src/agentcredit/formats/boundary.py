"""Where an agent's episode ends, and the guard that keeps verifier output out of a trajectory.

A judge that must not see the official outcome must not see the official tests run either.
Harnesses make that easy to get wrong: Terminal-Bench 1 runs the tests in the agent's own
terminal when a task says ``run_tests_in_same_shell: true``, so the agent's log ends with the
pytest session; every harness keeps logging after the agent's last turn. Each reader cuts
its log at the end of the agent's episode; :func:`guard_trial` then refuses, in every format,
any step that still shows the verifier's test session, and drops it with everything after
it (once the verifier has run, the episode is over). What is dropped is recorded on the
trial as :class:`~agentcredit.schema.DroppedText`.

The markers are those of a harness-run test session: pytest rooted at ``/tests`` (where
Harbor and Terminal-Bench mount a task's tests after the agent has finished) and pytest's
result lines for files under ``/tests/``. An agent running its own project's tests
(``/testbed/tests/...``, ``tests/test_x.py``) matches none of them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from pathlib import PurePosixPath

from agentcredit.schema import DroppedText, Step, Task, Trial

_STATUS = r"(?:PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)"
_TESTS_FILE = r"(?<![\w./-])(?:\.\./|/)tests/[\w./-]+\.py"
VERIFIER_OUTPUT = re.compile(
    r"^[ \t]*rootdir: /tests/?[ \t]*$"  # pytest's header for the mounted verifier tests
    rf"|^[ \t]*{_STATUS} {_TESTS_FILE}::"  # -rA summary: PASSED ../tests/test_outputs.py::t
    rf"|{_TESTS_FILE}::\S+ {_STATUS}\b"  # -v lines: ../tests/test_outputs.py::t PASSED
    rf"|^[ \t]*{_TESTS_FILE} [.FEsxX]+\s*\[\s*\d+%\]",  # progress: ../tests/t.py ..F [100%]
    re.MULTILINE,
)


def verifier_output_marker(text: str) -> str | None:
    """The first line of ``text`` that belongs to a harness-run test session, else None.

    >>> verifier_output_marker("collected 2 items\\nPASSED ../tests/test_outputs.py::test_a")
    'PASSED ../tests/test_outputs.py::test_a'
    >>> verifier_output_marker("rootdir: /tests")
    'rootdir: /tests'
    >>> verifier_output_marker("PASSED tests/test_views.py::test_a\\nrootdir: /testbed") is None
    True
    """
    if "tests" not in text:
        return None
    match = VERIFIER_OUTPUT.search(text)
    return None if match is None else _line_of(text, match)


def _line_of(text: str, match: re.Match[str]) -> str:
    start = text.rfind("\n", 0, match.start()) + 1
    end = text.find("\n", match.end())
    return text[start:end if end >= 0 else len(text)].strip()[:120]


def step_texts(step: Step) -> Iterable[str]:
    """What the step shows besides the agent's own command: its message and its outputs."""
    if step.message:
        yield step.message
    for obs in step.observations:
        if obs.text:
            yield obs.text


def step_chars(step: Step) -> int:
    """Characters of text in a step (message, reasoning, actions' arguments, outputs)."""
    total = len(step.message) + len(step.reasoning or "")
    total += sum(len(str(call.arguments)) for call in step.tool_calls)
    return total + sum(len(obs.text) for obs in step.observations)


def guard_trial(trial: Trial) -> Trial:
    """The trial without its first step showing verifier output and everything after it.

    Trials that show none come back unchanged (the same object).
    """
    for position, step in enumerate(trial.steps):
        marker = next((m for t in step_texts(step) if (m := verifier_output_marker(t))), None)
        if marker is None:
            continue
        cut = trial.steps[position:]
        dropped = DroppedText(
            reason=f"verifier output from step {position + 1} on ({marker!r}): the official "
                   "test run is never agent evidence",
            steps=len(cut), chars=sum(step_chars(s) for s in cut))
        return trial.model_copy(update={"steps": trial.steps[:position],
                                        "dropped": (*trial.dropped, dropped)})
    return trial


def task_verifier_pattern(task: Task) -> tuple[re.Pattern[str] | None, re.Pattern[str] | None]:
    """Any of the task's own verifier check names, and result lines naming one of them, for
    the judge's guard (computed once per task; None and None when the task has none).

    Only checks that live in one of the task's verifier files count (``test_outputs.py::``):
    a SWE-bench check names the repository's own tests, which an agent may rightly run.
    """
    return _verifier_pattern(frozenset(PurePosixPath(name).name for name in task.verifier_files),
                             tuple(task.checks))


@functools.lru_cache(maxsize=256)
def _verifier_pattern(files: frozenset[str], checks: tuple[str, ...]
                      ) -> tuple[re.Pattern[str] | None, re.Pattern[str] | None]:
    names = tuple(check for check in checks
                  if "::" in check and PurePosixPath(check.split("::", 1)[0]).name in files)
    if not names:
        return None, None
    alternatives = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    return re.compile(alternatives), re.compile(rf"^.*\b{_STATUS}\b.*(?:{alternatives})"
                             rf"|(?:{alternatives})\S*\s+{_STATUS}\b", re.MULTILINE)


def verifier_output_in(trial: Trial, task: Task | None) -> tuple[int, str] | None:
    """(step number, marker line) of the first step showing verifier output, else None.

    The last line of defence before a judge: readers already cut such steps, so this only
    fires on trajectories built by hand (the Python API) or by a reader that missed one.
    """
    named, pattern = task_verifier_pattern(task) if task is not None else (None, None)
    for step in trial.steps:
        for text in step_texts(step):
            marker = verifier_output_marker(text)
            # the pattern matches only where a check's name is in the text: look first
            if marker is None and named and pattern and named.search(text):
                found = pattern.search(text)
                marker = _line_of(text, found) if found else None
            if marker is not None:
                return step.index + 1, marker
    return None
