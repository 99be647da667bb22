"""What a reader is and where it puts what it read: the protocols the built-in readers, the
registry and plugins share (:mod:`agentcredit.formats.registry`)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from agentcredit.schema import Task, Trial

ReaderKind = Literal["folder", "file"]


class Sink(Protocol):
    """Where a reader puts what it read (the loader)."""

    inspect_scorer: str | None

    def add_task(self, task: Task, fmt: str) -> None: ...

    def add_trial(self, trial: Trial) -> None: ...

    def error(self, path: str, reason: str, *, fatal: bool = True) -> None: ...


@runtime_checkable
class FolderReader(Protocol):
    """Reads a folder that is one record (a task, a trial)."""

    name: str
    kind: Literal["folder"]

    def read(self, folder: Path, names: frozenset[str], sink: Sink) -> bool: ...


@runtime_checkable
class FileReader(Protocol):
    """Reads a file; ``explicit`` is True when the user named the file itself."""

    name: str
    kind: Literal["file"]
    suffixes: tuple[str, ...]

    def read(self, path: Path, sink: Sink, *, explicit: bool) -> bool: ...


Reader = FolderReader | FileReader


__all__ = ["FileReader", "FolderReader", "Reader", "ReaderKind", "Sink"]
