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

from agentcredit.errors import AgentCreditError, InputError
from agentcredit.formats import trajectory_formats
from agentcredit.formats.boundary import guard_trial
from agentcredit.formats.registry import (
    ENTRY_POINT_GROUP,
    file_readers,
    file_suffixes,
    folder_readers,
    plugin_problems,
)
from agentcredit.safe_io import confined_to, file_size
from agentcredit.schema import ReadError, Task, Trial

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
        self.suffixes = file_suffixes()
        self.out.warnings += [ReadError(path=group, reason=p, fatal=False)
                              for group, problems in ((ENTRY_POINT_GROUP, plugin_problems()),
                                                      (trajectory_formats.ENTRY_POINT_GROUP,
                                                       trajectory_formats.plugin_problems()))
                              for p in problems]

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
        elif entry.name.endswith(self.suffixes):
            self.file(path, explicit=False)

    def _count(self) -> int:
        return len(self.out.tasks) + len(self.out.trials) + len(self.out.errors) + \
            len(self.out.warnings)

    def try_record_folder(self, folder: Path, names: set[str]) -> bool:
        """Read the folder as one record if a folder reader takes it; True when one did."""
        frozen = frozenset(names)
        return any(reader.read(folder, frozen, self) for reader in folder_readers())

    def file(self, path: Path, *, explicit: bool) -> None:
        """Offer the file to the file readers (a walked file only to those whose suffixes
        match its name) until one takes it."""
        for reader in file_readers():
            if (explicit or path.name.endswith(reader.suffixes)) and \
                    reader.read(path, self, explicit=explicit):
                return
        if explicit:
            self.error(str(path), "no reader takes this file")

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
    given = [Path(path) for path in paths]
    with _gc_paused(), confined_to(given):
        for path in given:
            loader.path(path)
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
