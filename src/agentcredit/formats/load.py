"""Reading any mix of task folders, trial folders, job folders and loose files.

Every path is recognised by content: a folder with instruction.md + task.toml is a Harbor
task, a folder with task.yaml a Terminal-Bench 1 task, a folder whose result.json names a
trial is a Harbor trial (whatever the nesting), a folder whose results.json has
``is_resolved`` a TB1 trial; JSON and JSON Lines files are sniffed by their first
object. Nothing that goes wrong with one input stops the others: it becomes a
:class:`ReadError`. With ``strict=True`` the first error raises instead.
"""

from __future__ import annotations

import gc
import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcredit.errors import AgentCreditError, InputError
from agentcredit.formats.boundary import guard_trial
from agentcredit.formats.harbor_task import read_harbor_task
from agentcredit.formats.harbor_trial import is_harbor_trial_result, read_harbor_trial
from agentcredit.formats.inspect_log import (
    InspectRead,
    is_inspect_document,
    read_document,
    read_eval,
)
from agentcredit.formats.safe_io import (
    file_size,
    first_byte,
    iter_jsonl_lenient,
    parse_json,
    peek_first_json_line,
    read_bytes,
    read_json,
)
from agentcredit.formats.swebench import is_swebench_instance, read_swebench_instance
from agentcredit.formats.tb1_task import read_tb1_task
from agentcredit.formats.tb1_trial import is_tb1_trial_result, read_tb1_trial, tb1_trial_from_result
from agentcredit.formats.trajectory_file import (
    is_trajectory_document,
    read_trajectory_file,
    sniff_jsonl,
    trajectory_from_document,
)
from agentcredit.schema import AgentInfo, ReadError, Task, Trial

_SKIPPED_LINE = re.compile(r"^line \d+: (line is|malformed JSON|invalid UTF-8|not a JSON object)")
_SKIP_DIRS = {".git", "__pycache__", "node_modules", ".venv", "environment", "solution"}


@dataclass
class LoadResult:
    """Everything read from some paths, and everything that could not be."""

    tasks: list[Task] = field(default_factory=list)
    trials: list[Trial] = field(default_factory=list)
    errors: list[ReadError] = field(default_factory=list)
    formats: Counter[str] = field(default_factory=Counter)
    warnings: list[ReadError] = field(default_factory=list)

    def merge(self, other: LoadResult) -> None:
        """Add another result's records to this one."""
        self.tasks.extend(other.tasks)
        self.trials.extend(other.trials)
        self.errors.extend(other.errors)
        self.warnings.extend(other.warnings)
        self.formats.update(other.formats)


class _Loader:
    def __init__(self, strict: bool, inspect_scorer: str | None = None) -> None:
        self.strict = strict
        self.inspect_scorer = inspect_scorer
        self.out = LoadResult()
        self.seen_dirs: set[tuple[int, int]] = set()

    def error(self, path: str, reason: str, *, fatal: bool = True) -> None:
        if self.strict:
            raise InputError(path, reason)
        self.out.errors.append(ReadError(path=path, reason=reason, fatal=fatal))

    def path(self, path: Path) -> None:
        if path.is_symlink() and not path.exists():
            try:
                file_size(path)
            except InputError as exc:
                self.error(str(path), exc.reason)
            return
        if not path.exists():
            self.error(str(path), "no such file or folder")
        elif path.is_dir():
            if _dir_key_or_none(path) in self.seen_dirs:
                self.out.warnings.append(ReadError(path=str(path), fatal=False, reason=(
                    "already read through another input: read once")))
                return
            before = len(self.out.tasks) + len(self.out.trials)
            errors_before = len(self.out.errors)
            self.folder(path)
            if len(self.out.tasks) + len(self.out.trials) == before and \
                    len(self.out.errors) == errors_before:
                self.error(str(path), "no tasks or trials found in this folder")
        else:
            try:
                self.file(path, explicit=True)
            except AgentCreditError:
                raise
            except Exception as exc:  # a reader bug must not end the run: report and go on
                self.error(str(path), f"could not be read ({type(exc).__name__}: "
                           f"{str(exc).splitlines()[0] if str(exc) else 'no message'})")

    def folder(self, folder: Path) -> None:
        try:
            key = _dir_key(folder)
            with os.scandir(folder) as scan:
                entries = list(scan)
        except OSError as exc:
            self.error(str(folder), f"cannot list folder: {exc.strerror or exc}")
            return
        if key in self.seen_dirs:
            return  # reached again through a symlink
        self.seen_dirs.add(key)
        names = {e.name for e in entries}
        if self.try_record_folder(folder, names):
            return
        job = "config.json" in names
        entries.sort(key=lambda e: e.name)
        for entry in entries:
            path = Path(entry.path)
            try:
                self.entry(entry, path, job)
            except AgentCreditError:
                raise
            except Exception as exc:  # a reader bug must not end the run: report and go on
                self.error(entry.path, f"could not be read ({type(exc).__name__}: "
                           f"{str(exc).splitlines()[0] if str(exc) else 'no message'})")

    def entry(self, entry: os.DirEntry[str], path: Path, job: bool) -> None:
        try:
            is_dir = entry.is_dir()
        except OSError:
            is_dir = False
        if entry.is_symlink() and not path.exists():
            self.error(entry.path, _dangling_reason(path))
        elif is_dir:
            if entry.name not in _SKIP_DIRS:
                before = self._count()
                self.folder(path)
                if self._count() == before and (job or "__" in entry.name):
                    self.out.warnings.append(ReadError(
                        path=entry.path, fatal=False,
                        reason="empty or partial trial folder (no result.json): skipped"))
        elif entry.name.endswith((".json", ".jsonl", ".eval")):
            self.file(path, explicit=False)

    def _count(self) -> int:
        return len(self.out.tasks) + len(self.out.trials) + len(self.out.errors) + \
            len(self.out.warnings)

    def try_record_folder(self, folder: Path, names: set[str]) -> bool:
        """Read the folder as a task or trial if it is one; True when it was."""
        try:
            if "instruction.md" in names and "task.toml" in names:
                self.add_task(read_harbor_task(folder), "harbor-task")
                return True
            if "task.yaml" in names and "task.toml" not in names:
                self.add_task(read_tb1_task(folder), "tb1-task")
                return True
        except InputError as exc:
            self.error(exc.path, exc.reason)
            return True
        for name in ("result.json", "results.json"):
            if name in names:
                return self.trial_folder(folder, folder / name, names)
        return False

    def trial_folder(self, folder: Path, result_path: Path, names: set[str]) -> bool:
        looks_like_trial = bool({"agent", "verifier", "sessions"} & names)
        try:
            value = read_json(result_path)
        except InputError as exc:
            if looks_like_trial:
                self.unusable_result(folder, exc.path, exc.reason)
                return True
            return False
        if not isinstance(value, dict) and looks_like_trial:
            self.unusable_result(folder, str(result_path), "expected a JSON object, found "
                                 f"{type(value).__name__}")
            return True
        if is_harbor_trial_result(value):
            trial, problems = read_harbor_trial(folder, value)
            for path, reason in problems:
                self.error(path, reason, fatal=False)
            self.add_trial(trial)
            return True
        if is_tb1_trial_result(value):
            trial, log_problems = read_tb1_trial(folder, *_tb1_run_metadata(folder))
            for reason in log_problems:
                self.error(str(folder / "sessions" / "agent.log"), reason, fatal=False)
            self.add_trial(trial)
            return True
        if looks_like_trial:
            self.unusable_result(folder, str(result_path), "neither a Harbor trial result "
                                 "(trial_name, task_name) nor a Terminal-Bench 1 result")
            return True
        return False

    def unusable_result(self, folder: Path, where: str, reason: str) -> None:
        """A trial folder whose result file cannot be used: kept as a trial with a reason."""
        self.error(where, reason, fatal=False)
        name = folder.name
        stand_in = {"trial_name": name, "task_name": name.split("__")[0]}
        trial, problems = read_harbor_trial(folder, stand_in)
        for path, problem in problems:
            self.error(path, problem, fatal=False)
        self.add_trial(trial.model_copy(update={
            "outcome": "none", "reward": None, "task_id": None if "__" not in name
            else stand_in["task_name"],
            "outcome_reason": f"result file unusable ({reason})"}))

    def inspect_log(self, read: InspectRead) -> None:
        for task in read.tasks:
            self.add_task(task, "inspect-task")
        for trial in read.trials:
            self.add_trial(trial)
        for where, reason in read.problems:
            self.error(where, reason, fatal=False)

    def file(self, path: Path, *, explicit: bool) -> None:
        if path.suffix == ".eval":
            try:
                self.inspect_log(read_eval(path, self.inspect_scorer))
            except InputError as exc:
                self.error(exc.path, exc.reason)
            return
        lead = first_byte(path)
        if lead == b"{" and self.jsonl(path):
            return
        try:
            raw = read_bytes(path)
            doc = parse_json(path, raw)
        except InputError as exc:
            if explicit or path.name.endswith("trajectory.json") or path.suffix == ".jsonl":
                self.error(exc.path, exc.reason)
            return
        if is_inspect_document(doc):
            self.inspect_log(read_document(path, doc, self.inspect_scorer))
            return
        if is_trajectory_document(doc):
            try:
                parsed = trajectory_from_document(path, raw, doc)
            except InputError as exc:
                self.error(exc.path, exc.reason)
                return
            self.add_trial(Trial(
                id=_trial_id_from_file(path), agent=parsed.agent, model=parsed.model,
                steps=parsed.steps, outcome="none", outcome_reason="no verifier result",
                usage=parsed.usage, format=parsed.format, source_path=str(path),
                trajectory_path=str(path), notes=parsed.notes, dropped=parsed.dropped,
            ))
        elif is_swebench_instance(doc):
            self.swebench_value(path, 1, doc)
        elif explicit:
            try:
                trajectory_from_document(path, raw, doc)
            except InputError as exc:
                self.error(exc.path, exc.reason)

    def jsonl(self, path: Path) -> bool:
        """Handle line-oriented files; False when the file is not one of ours."""
        first = peek_first_json_line(path)
        kind = sniff_jsonl(path)
        if kind is not None:
            try:
                parsed = read_trajectory_file(path)
            except InputError as exc:
                self.error(exc.path, exc.reason)
                return True
            self.add_trial(Trial(
                id=_trial_id_from_file(path), agent=parsed.agent, model=parsed.model,
                steps=parsed.steps, outcome="none", outcome_reason="no verifier result",
                usage=parsed.usage, format=parsed.format, source_path=str(path),
                trajectory_path=str(path), notes=parsed.notes, dropped=parsed.dropped,
            ))
            return True
        if is_swebench_instance(first) or is_tb1_trial_result(first):
            self.listing(path)
            return True
        return False

    def listing(self, path: Path) -> None:
        try:
            for line, _, _, value, problem in iter_jsonl_lenient(path):
                where = f"{path}:{line}"
                if problem is not None:
                    self.error(where, problem)
                elif is_swebench_instance(value):
                    self.swebench_value(path, line, value)
                elif is_tb1_trial_result(value):
                    self.tb1_outcome(where, value)
                else:
                    self.error(where, "line is neither a SWE-bench instance nor a TB1 outcome")
        except InputError as exc:
            self.error(exc.path, exc.reason)

    def swebench_value(self, path: Path, line: int, value: dict[str, Any]) -> None:
        try:
            self.add_task(read_swebench_instance(value, path, line), "swebench-instance")
        except (InputError, ValueError) as exc:
            reason = exc.reason if isinstance(exc, InputError) else str(exc).splitlines()[0]
            self.error(f"{path}:{line}", reason)

    def tb1_outcome(self, where: str, value: dict[str, Any]) -> None:
        submission = value.get("submission")
        trial_id = f"{submission}/{value['trial_name']}" if submission else str(value["trial_name"])
        try:
            trial = tb1_trial_from_result(
                value, trial_id=trial_id, source=where, fmt="tb1-outcome",
                agent=AgentInfo(name=str(submission)) if submission else None,
            )
        except (ValueError, KeyError) as exc:
            self.error(where, f"wrong field types: {str(exc).splitlines()[0]}")
            return
        self.add_trial(trial)

    def add_task(self, task: Task, fmt: str) -> None:
        if not is_clean_text(task.id):
            task = task.model_copy(update={"id": clean_text(task.id)})
            self.out.warnings.append(ReadError(path=clean_text(task.source_path), fatal=False,
                                               reason=f"task id has undecodable bytes: read "
                                               f"as {task.id!r}"))
        self.out.tasks.append(task)
        self.out.formats[fmt] += 1

    def add_trial(self, trial: Trial) -> None:
        if not (is_clean_text(trial.id) and is_clean_text(trial.task_id or "")):
            trial = trial.model_copy(update={
                "id": clean_text(trial.id),
                "task_id": None if trial.task_id is None else clean_text(trial.task_id)})
            self.out.warnings.append(ReadError(path=clean_text(trial.source_path), fatal=False,
                                               reason=f"trial id has undecodable bytes: read "
                                               f"as {trial.id!r}"))
        for note in trial.notes:
            if _SKIPPED_LINE.match(note):  # a line of the log was lost: the user must know
                self.error(trial.trajectory_path or trial.source_path, f"{note} (the rest "
                           "of the trajectory was read)", fatal=False)
        self.out.trials.append(guard_trial(trial))
        self.out.formats[trial.format] += 1


def load(paths: Iterable[str | Path], *, strict: bool = False,
         inspect_scorer: str | None = None) -> LoadResult:
    """Read every task and trial under ``paths``.

    Args:
        paths: files or folders, in any mix of supported formats.
        strict: raise :class:`InputError` at the first problem instead of recording it.
        inspect_scorer: the Inspect scorer whose value is a log sample's outcome (default:
            the log's first scorer).
    """
    loader = _Loader(strict, inspect_scorer)
    with _gc_paused():
        for path in paths:
            loader.path(Path(path))
    _distinct_trial_ids(loader.out)
    if inspect_scorer is not None:
        _check_scorer(loader.out, inspect_scorer)
    return loader.out


def _check_scorer(out: LoadResult, scorer: str) -> None:
    """An Inspect scorer that scored no sample at all is a mistake, not a run of 'none'."""
    inspect = [t for t in out.trials if t.format.startswith("inspect")]
    if inspect and all(t.outcome == "none" and (t.outcome_reason or "").startswith(
            f"no score from scorer {scorer!r}") for t in inspect):
        has = (inspect[0].outcome_reason or "").partition("(has: ")[2].rstrip(")")
        out.errors.append(ReadError(path=inspect[0].source_path, reason=(
            f"no sample has a score from --inspect-scorer {scorer!r}"
            + (f" (the logs have: {has})" if has else ""))))


def is_clean_text(text: str) -> bool:
    """False when a name holds bytes that were not UTF-8 (lone surrogates from the OS)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def clean_text(text: str) -> str:
    """A name's undecodable bytes shown as U+FFFD, so it can be stored and printed.

    >>> clean_text("trial-" + chr(0xDCFF)) == "trial-" + chr(0xFFFD)
    True
    """
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _distinct_trial_ids(out: LoadResult) -> None:
    """Two trials never share an id: the same trial read twice (same file) is kept once;
    two different trials with one name (the same ``trial_name`` in two jobs) are both kept,
    the later one under ``<id>@<its job folder>`` (then ``#2``, ``#3``…), with a warning.

    A store keyed by trial id would otherwise let one silently replace the other.
    """
    seen: dict[str, str] = {}
    kept: list[Trial] = []
    for trial in out.trials:
        source = trial.trajectory_path or trial.source_path
        first = seen.get(trial.id)
        if first is None:
            seen[trial.id] = source
            kept.append(trial)
            continue
        if first == source:
            out.warnings.append(ReadError(path=trial.source_path, fatal=False, reason=(
                f"trial {trial.id!r} was reached twice through the inputs given: read once")))
            continue
        job = Path(trial.source_path).parent.name or "input"
        new_id, n = f"{trial.id}@{job}", 2
        while new_id in seen:
            new_id, n = f"{trial.id}@{job}#{n}", n + 1
        seen[new_id] = source
        kept.append(trial.model_copy(update={"id": new_id}))
        out.warnings.append(ReadError(path=trial.source_path, fatal=False, reason=(
            f"trial id {trial.id!r} is also used by {first}: this one is kept as {new_id!r}")))
    out.trials = kept


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while records are built.

    Reading creates many small acyclic objects (parsed JSON, records); generation scans
    over them cost about 40% of reading time and free nothing.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            # Everything allocated while paused sits in the youngest generation; the first
            # collection after re-enabling would scan it all. Moving it to the oldest
            # generation (freeze, then unfreeze) treats it as the long-lived data it is.
            gc.freeze()
            gc.unfreeze()
            gc.enable()


def _trial_id_from_file(path: Path) -> str:
    name = path.name
    for suffix in (".traj.json", ".json", ".jsonl", ".txt"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    if name in ("trajectory", "claude-code") and path.parent.name == "agent":
        return path.parent.parent.name
    return name


def _tb1_run_metadata(folder: Path) -> tuple[str | None, str | None]:
    """(agent_name, model_name) from the run's run_metadata.json, when there is one."""
    for candidate in (folder.parent / "run_metadata.json",
                      folder.parent.parent / "run_metadata.json"):
        if candidate.is_file():
            try:
                meta = read_json(candidate)
            except InputError:
                return None, None
            if not isinstance(meta, dict):
                return None, None
            agent, model = meta.get("agent_name"), meta.get("model_name")
            return (str(agent) if agent else None, str(model) if model else None)
    return None, None


def _dir_key_or_none(folder: Path) -> tuple[int, int] | None:
    try:
        return _dir_key(folder)
    except OSError:
        return None


def _dir_key(folder: Path) -> tuple[int, int]:
    st = folder.stat()
    return st.st_dev, st.st_ino


def _dangling_reason(path: Path) -> str:
    try:
        file_size(path)
    except InputError as exc:
        return exc.reason
    return "unreadable link"
