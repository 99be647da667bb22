"""Matching trials to their tasks and reporting what does not line up.

Mismatches are warnings, not errors: a trial whose first user message differs from its
task's instruction is still scored, but the user should know.
"""

from __future__ import annotations

import re
import unicodedata

from agentcredit.formats.pytest_checks import strip_parameters
from agentcredit.schema import ReadError, Task, Trial

_SPACE = re.compile(r"\s+")
# Characters that change nothing a reader sees: zero-width spaces and joiners, the soft
# hyphen, the byte-order mark, bidirectional controls (Unicode's format characters).
_INVISIBLE = re.compile("[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f"
                        "\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufe00-\ufe0f\ufeff]")
# Letters that look like Latin ones (Cyrillic, Greek; NFKC keeps them apart), the
# dashes and the quotes a text can swap without a reader noticing.
_CONFUSABLES = str.maketrans({
    **dict(zip("\u0430\u0435\u043e\u0440\u0441\u0443\u0445\u0455\u0456\u0458\u04bb"
               "\u0501\u0410\u0412\u0415\u041a\u041c\u041d\u041e\u0420\u0421\u0422"
               "\u0425\u0405\u0406\u0408", "aeopcyxsijhdABEKMHOPCTXSIJ", strict=True)),
    **dict(zip("\u03bf\u03b1\u03bd\u03c1\u0391\u0392\u0395\u0396\u0397\u0399"
               "\u039a\u039c\u039d\u039f\u03a1\u03a4\u03a5\u03a7",
               "oavpABEZHIKMNOPTYX", strict=True)),
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2212", "-"),
    **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033", '"'),
})


def normalize_text(text: str) -> str:
    """The form used to compare texts: NFKC, invisible characters taken out, look-alike
    letters, dashes and quotes folded to ASCII, whitespace collapsed. Applied to both sides
    before they are matched, so that neither a zero-width space nor a Cyrillic "а" makes a
    quote differ from (or match) the text it imitates.

    >>> normalize_text("  Don\\u2019t\\r\\n  stop ")
    "Don't stop"
    >>> normalize_text("5 p\\u0430s\\u200bsed \\u2014 OK") == "5 passed - OK"
    True
    """
    return _SPACE.sub(" ", fold(text)).strip()


def fold(text: str) -> str:
    """:func:`normalize_text` without the whitespace collapse (lines stay lines): NFKC,
    invisible characters out, look-alikes folded."""
    return _INVISIBLE.sub("", unicodedata.normalize("NFKC", text)).translate(_CONFUSABLES)


def normalize_lines(text: str) -> list[str]:
    """``[normalize_text(line) for line in text.split("\\n")]``, folding the text once.

    >>> normalize_lines("a\\u200b b\\n  c\\u2014d ")
    ['a b', 'c-d']
    """
    folded = fold(text).split("\n")
    if len(folded) != text.count("\n") + 1:  # a line break folded away: line by line
        return [normalize_text(line) for line in text.split("\n")]
    return [_SPACE.sub(" ", line).strip() for line in folded]


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
