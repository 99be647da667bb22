"""Rows written as files: Parquet in row groups, whatever the number of rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcredit.store import exports
from agentcredit.store.exports import write_rows

pq = pytest.importorskip("pyarrow.parquet")


def test_parquet_is_written_in_row_groups_under_one_schema(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A column empty in the first group takes its type from a later one; an int column
    that later holds floats becomes float; nested values are JSON text, as before."""
    monkeypatch.setattr(exports, "PARQUET_GROUP_ROWS", 3)
    rows = [{"id": f"t{i}", "outcome": None if i < 4 else i / 10, "n": i if i < 5 else i + 0.5,
             "states": {"R1": "verified"}} for i in range(8)]
    path = write_rows(iter(rows), tmp_path / "rows.parquet", "parquet")
    found = pq.ParquetFile(path)
    assert found.metadata.num_row_groups == 3
    table = found.read()
    assert table.column("outcome").to_pylist() == [None] * 4 + [0.4, 0.5, 0.6, 0.7]
    assert table.column("n").to_pylist() == [0, 1, 2, 3, 4, 5.5, 6.5, 7.5]
    assert table.column("states").to_pylist() == ['{"R1": "verified"}'] * 8
    assert table.column_names == ["id", "outcome", "n", "states"]


def test_no_rows_make_an_empty_parquet_file(tmp_path: Path) -> None:
    path = write_rows([], tmp_path / "none.parquet", "parquet")
    assert pq.read_table(path).num_rows == 0
