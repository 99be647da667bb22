"""Readers are a registry: a third party adds a format without touching the loader."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import pytest

from agentcredit.formats import load, registry
from agentcredit.formats.registry import Sink, register_reader, unregister_reader
from agentcredit.schema import Trial


class PipeLogReader:
    """A toy format: one ``.pipelog`` file per trial, ``outcome|text`` on one line."""

    name = "pipe-log"
    kind: Literal["file"] = "file"
    suffixes: tuple[str, ...] = (".pipelog",)

    def read(self, path: Path, sink: Sink, *, explicit: bool) -> bool:
        text = path.read_text()
        if "|" not in text:
            return False
        outcome, _, _ = text.partition("|")
        if outcome not in ("pass", "fail"):
            sink.error(str(path), f"unknown outcome {outcome!r}")
            return True
        sink.add_trial(Trial(id=path.stem, task_id="t", outcome=outcome,  # type: ignore[arg-type]
                             format=self.name, source_path=str(path)))
        return True


@pytest.fixture
def pipelog() -> Iterator[PipeLogReader]:
    reader = PipeLogReader()
    register_reader(reader)
    yield reader
    unregister_reader(reader)


def test_a_registered_reader_reads_its_files_in_a_folder_walk(
        tmp_path: Path, pipelog: PipeLogReader) -> None:
    (tmp_path / "a.pipelog").write_text("pass|did it")
    (tmp_path / "b.pipelog").write_text("maybe|unsure")
    (tmp_path / "notes.txt").write_text("pass|not offered: no reader claims .txt")
    result = load([tmp_path])
    assert [(t.id, t.outcome, t.format) for t in result.trials] == [("a", "pass", "pipe-log")]
    assert [(Path(e.path).name, e.reason) for e in result.errors] == [
        ("b.pipelog", "unknown outcome 'maybe'")]


def test_without_the_reader_the_same_files_are_not_read(tmp_path: Path) -> None:
    (tmp_path / "a.pipelog").write_text("pass|did it")
    result = load([tmp_path])
    assert not result.trials
    assert "no tasks or trials found" in result.errors[0].reason


class _Point:
    def __init__(self, name: str, value: object, fails: bool = False) -> None:
        self.name, self.value, self.fails, self.target = name, f"pkg:{name}", fails, value

    def load(self) -> object:
        if self.fails:
            raise ImportError("no module named pkg")
        return self.target


def test_entry_point_plugins_are_loaded_and_a_broken_one_is_reported(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    points = [_Point("pipe", PipeLogReader), _Point("broken", None, fails=True),
              _Point("odd", object())]
    from agentcredit.formats import plugins

    monkeypatch.setattr(plugins, "entry_points",
                        lambda group: points if group == registry.ENTRY_POINT_GROUP else [])
    registry._plugins.cache_clear()
    registry._all.cache_clear()
    try:
        (tmp_path / "a.pipelog").write_text("fail|tried")
        result = load([tmp_path])
        assert [(t.id, t.outcome) for t in result.trials] == [("a", "fail")]
        warnings = [w.reason for w in result.warnings]
        assert any("'broken'" in w and "ImportError" in w for w in warnings)
        assert any("'odd'" in w and "is not a reader" in w for w in warnings)
    finally:
        registry._plugins.cache_clear()
        registry._all.cache_clear()
