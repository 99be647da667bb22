"""Reading any mix of task folders, trial folders, job folders and loose files.

Every path is recognised by content: a folder with instruction.md + task.toml is a Harbor
task, a folder with task.yaml a Terminal-Bench 1 task, a folder whose result.json names a
trial is a Harbor trial (whatever the nesting), a folder whose results.json has
``is_resolved`` a TB1 trial; JSON and JSON Lines files are sniffed by their first
object. Nothing that goes wrong with one input stops the others: it becomes a
:class:`ReadError`. With ``strict=True`` the first error raises instead.
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import os
import queue
import re
import threading
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from agentcredit.errors import AgentCreditError, InputError, StreamStopped
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


class _Loader:
    def __init__(self, strict: bool, inspect_scorer: str | None = None,
                 sink: Callable[[Trial], None] | None = None) -> None:
        self.strict = strict
        self.inspect_scorer = inspect_scorer
        self.out = LoadResult()
        self.sink = sink if sink is not None else self.out.trials.append
        self.records = 0
        self.ids = _DistinctIds(self.out.warnings)
        self.scorer = _ScorerCheck(inspect_scorer)
        self.seen_dirs: set[tuple[int, int]] = set()
        self.finished: Callable[[str], tuple[str, str] | None] | None = None
        self.fingerprints: dict[str, tuple[str, str]] | None = None
        self.skipped = 0
        self.folder_now = ""
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
            before, errors_before = self.records, len(self.out.errors)
            self.folder(path)
            if self.records == before and len(self.out.errors) == errors_before:
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
        if self.finished is not None and self._skip_finished(folder):
            return
        names = {e.name for e in entries}
        self.folder_now = os.path.abspath(folder)
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

    def _skip_finished(self, folder: Path) -> bool:
        """A trial folder a run finished with, unchanged since: not read again."""
        assert self.finished is not None
        where = os.path.abspath(folder)
        known = self.finished(where)
        if known is None or known[0] != folder_fingerprint(where):
            return False
        self.records += 1
        self.skipped += 1
        self.ids.seen.setdefault(known[1], where)
        return True

    def _count(self) -> int:
        return self.records + len(self.out.errors) + len(self.out.warnings)

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
        self.records += 1
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
        self.records += 1
        self.out.formats[trial.format] += 1
        self.scorer.see(trial)
        kept = self.ids.distinct(trial)
        if kept is None:
            return
        if self.fingerprints is not None and \
                os.path.abspath(trial.source_path) == self.folder_now:
            self.fingerprints[kept.id] = (self.folder_now, folder_fingerprint(self.folder_now))
        self.sink(guard_trial(kept))

    def finish(self) -> None:
        """What can only be said once every input was read."""
        problem = self.scorer.problem()
        if problem is not None:
            self.out.errors.append(problem)


def load(paths: Iterable[str | Path], *, strict: bool = False,
         inspect_scorer: str | None = None) -> LoadResult:
    """Read every task and trial under ``paths``.

    Args:
        paths: files or folders, in any mix of supported formats.
        strict: raise ``InputError`` at the first problem instead of recording it.
        inspect_scorer: the Inspect scorer whose value is a log sample's outcome (default:
            the log's first scorer).
    """
    loader = _Loader(strict, inspect_scorer)
    given = [Path(path) for path in paths]
    with _gc_paused(), confined_to(given):
        for path in given:
            loader.path(path)
    loader.finish()
    return loader.out


class TrialStream:
    """The trials under some paths, read one at a time: a reader thread stays at most
    ``window`` trials ahead of whoever iterates, so a run over any number of trials holds
    a bounded number of them.

    Iterate it once (``for`` or ``async for``). The tasks, errors, warnings and formats
    (the :class:`LoadResult` without its trials, in :attr:`result`) are complete once the
    iteration ends; :attr:`read` counts the trials handed out so far. Errors are those of
    :func:`load` (``strict`` raises the first in the iterating thread).
    """

    def __init__(self, paths: Iterable[str | Path], *, strict: bool = False,
                 inspect_scorer: str | None = None, window: int = 64,
                 finished: Callable[[str], tuple[str, str] | None] | None = None) -> None:
        """``finished(folder)``: (fingerprint, trial id) of a trial folder whose trial needs
        no more work; a folder with that fingerprint is skipped, not read (counted in
        :attr:`skipped`). With it, :meth:`folder_of` tells each trial's folder and
        fingerprint for the index the caller keeps."""
        self.paths = [Path(path) for path in paths]
        self.read = 0
        self.total: int | None = None
        """How many trials the stream hands out, once reading has ended (None before)."""
        self._produced = 0
        self._queue: queue.Queue[object] = queue.Queue(maxsize=window)
        self._stop = threading.Event()
        self._loader = _Loader(strict, inspect_scorer, sink=self._put)
        if finished is not None:
            self._loader.finished, self._loader.fingerprints = finished, {}
        self.result = self._loader.out
        self._thread: threading.Thread | None = None

    @property
    def skipped(self) -> int:
        """Trial folders left unread: finished and unchanged."""
        return self._loader.skipped

    def folder_of(self, trial: Trial) -> tuple[str, str] | None:
        """(folder, fingerprint) of a trial read from a trial folder (once per trial)."""
        found = self._loader.fingerprints
        return found.pop(trial.id, None) if found is not None else None

    def _offer(self, item: object) -> bool:
        """Queue ``item`` (waiting while the queue is full) unless the stream stops first."""
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _put(self, trial: Trial) -> None:
        if not self._offer(trial):
            raise StreamStopped
        self._produced += 1

    def _walk(self) -> None:
        try:
            with confined_to(self.paths):
                for path in self.paths:
                    self._loader.path(path)
            self._loader.finish()
            self.total = self._produced
            end: object = _END
        except StreamStopped:
            return
        except BaseException as exc:  # handed to the iterating thread, raised there
            end = exc
        self._offer(end)

    def _start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("a TrialStream is iterated once")
        self._thread = threading.Thread(target=self._walk, name="agentcredit-reader",
                                        daemon=True)
        self._thread.start()

    def _take(self, item: object) -> Trial | None:
        if item is _END:
            self._thread.join() if self._thread else None
            return None
        if isinstance(item, BaseException):
            raise item
        self.read += 1
        assert isinstance(item, Trial)
        return item

    def __iter__(self) -> Iterator[Trial]:
        self._start()
        try:
            while (trial := self._take(self._queue.get())) is not None:
                yield trial
        finally:
            self.close()

    async def __aiter__(self) -> AsyncIterator[Trial]:
        self._start()
        try:
            while True:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    item = await asyncio.to_thread(self._queue.get)
                if (trial := self._take(item)) is None:
                    return
                yield trial
        finally:
            self.close()

    def close(self) -> None:
        """Stop the reader thread (iteration ended or was abandoned)."""
        self._stop.set()


def folder_fingerprint(folder: str) -> str:
    """The names, sizes and modification times of every file under a folder, hashed: what
    changes when anything in a trial folder is written again."""
    seen: list[str] = []
    pending = [folder]
    while pending:
        current = pending.pop()
        try:
            with os.scandir(current) as scan:
                for entry in scan:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            pending.append(entry.path)
                            continue
                        st = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    seen.append(f"{entry.path}\0{st.st_size}\0{st.st_mtime_ns}")
        except OSError as exc:
            seen.append(f"{current}\0unlistable {exc.errno}")
    return hashlib.sha256("\n".join(sorted(seen)).encode("utf-8", "surrogateescape")
                          ).hexdigest()[:32]


_END = object()


class _ScorerCheck:
    """An Inspect scorer that scored no sample at all is a mistake, not a run of 'none'."""

    def __init__(self, scorer: str | None) -> None:
        self.scorer, self.unscored_only = scorer, True
        self.first: Trial | None = None

    def see(self, trial: Trial) -> None:
        if self.scorer is None or not trial.format.startswith("inspect"):
            return
        self.first = self.first or trial
        self.unscored_only &= trial.outcome == "none" and (
            trial.outcome_reason or "").startswith(f"no score from scorer {self.scorer!r}")

    def problem(self) -> ReadError | None:
        if self.first is None or not self.unscored_only:
            return None
        has = (self.first.outcome_reason or "").partition("(has: ")[2].rstrip(")")
        return ReadError(path=self.first.source_path, reason=(
            f"no sample has a score from --inspect-scorer {self.scorer!r}"
            + (f" (the logs have: {has})" if has else "")))


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


class _DistinctIds:
    """Two trials never share an id: the same trial read twice (same file) is kept once;
    two different trials with one name (the same ``trial_name`` in two jobs) are both kept,
    the later one under ``<id>@<its job folder>`` (then ``#2``, ``#3``…), with a warning.

    A store keyed by trial id would otherwise let one silently replace the other.
    """

    def __init__(self, warnings: list[ReadError]) -> None:
        self.warnings = warnings
        self.seen: dict[str, str] = {}

    def distinct(self, trial: Trial) -> Trial | None:
        """``trial``, renamed when its id is taken; None when it was read already."""
        source = trial.trajectory_path or trial.source_path
        first = self.seen.get(trial.id)
        if first is None:
            self.seen[trial.id] = source
            return trial
        if first == source:
            self.warnings.append(ReadError(path=trial.source_path, fatal=False, reason=(
                f"trial {trial.id!r} was reached twice through the inputs given: read once")))
            return None
        job = Path(trial.source_path).parent.name or "input"
        new_id, n = f"{trial.id}@{job}", 2
        while new_id in self.seen:
            new_id, n = f"{trial.id}@{job}#{n}", n + 1
        self.seen[new_id] = source
        self.warnings.append(ReadError(path=trial.source_path, fatal=False, reason=(
            f"trial id {trial.id!r} is also used by {first}: this one is kept as {new_id!r}")))
        return trial.model_copy(update={"id": new_id})


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
