"""The reader registry: which reader takes a folder or a file, decided by content.

A *folder reader* is offered every folder the loader walks (with the names it holds); a
*file reader* every file whose name ends with one of its ``suffixes`` (and any file given
explicitly). Each reader's ``read`` says whether the input was its own (True) and hands
what it read to the loader through a :class:`Sink`; the first reader that takes an input
wins, so readers are tried in order: readers added with :func:`register_reader`, then those
of installed packages (the ``agentcredit.readers`` entry point group), then the built-in
ones (:mod:`agentcredit.formats.readers`).

A third-party package adds a format with one entry point::

    [project.entry-points."agentcredit.readers"]
    my-format = "my_package.reader:MyReader"

where ``MyReader`` (a class or an instance) has ``name``, ``kind`` ("folder" or "file"),
``suffixes`` (file readers) and ``read``. A plugin that cannot be loaded is reported as a
warning of the load and the others go on.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from agentcredit.formats.plugins import load_plugins
from agentcredit.formats.protocols import FileReader, FolderReader, Reader, ReaderKind, Sink
from agentcredit.formats.readers import BUILT_IN

__all__ = ["ENTRY_POINT_GROUP", "FileReader", "FolderReader", "Reader", "ReaderKind", "Sink",
           "file_readers", "file_suffixes", "folder_readers", "plugin_problems", "readers",
           "register_reader", "unregister_reader"]
ENTRY_POINT_GROUP = "agentcredit.readers"
_ADDED: list[Reader] = []


def register_reader(reader: Reader) -> None:
    """Try ``reader`` before every installed and built-in reader (in this process)."""
    _ADDED.insert(0, reader)
    _all.cache_clear()


def unregister_reader(reader: Reader) -> None:
    """Take back a reader added with :func:`register_reader`."""
    _ADDED.remove(reader)
    _all.cache_clear()


@functools.cache
def _plugins() -> tuple[tuple[Reader, ...], tuple[str, ...]]:
    """The readers of installed packages, and why any could not be loaded."""
    return load_plugins(ENTRY_POINT_GROUP, "reader", _as_reader,
                        "needs name, kind, read; file readers also suffixes")


def _as_reader(loaded: Any) -> Reader | None:
    reader = loaded() if isinstance(loaded, type) else loaded
    return reader if isinstance(reader, FolderReader | FileReader) else None


@functools.cache
def _all() -> tuple[Reader, ...]:
    return (*_ADDED, *_plugins()[0], *BUILT_IN)


def readers() -> Sequence[Reader]:
    """Every reader, in the order they are tried."""
    return _all()


def folder_readers() -> list[FolderReader]:
    return [r for r in _all() if r.kind == "folder"]


def file_readers() -> list[FileReader]:
    return [r for r in _all() if r.kind == "file"]


def file_suffixes() -> tuple[str, ...]:
    """Names a folder walk offers to the file readers."""
    return tuple(sorted({s for r in file_readers() for s in r.suffixes}))


def plugin_problems() -> tuple[str, ...]:
    """Why installed reader plugins could not be loaded (empty when all could)."""
    return _plugins()[1]
