"""Writing rows as CSV, JSON Lines or Parquet (with the ``parquet`` extra)."""

from __future__ import annotations

import csv
import itertools
import json
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from agentcredit.errors import ConfigError, PrerequisiteError

FORMATS = ("csv", "jsonl", "parquet")


def write_rows(rows: Iterable[dict[str, Any]], path: Path | str, fmt: str,
               columns: Sequence[str] | None = None) -> Path:
    """Write ``rows`` to ``path`` in ``fmt``; empty values stay empty (never 0). CSV and
    JSON Lines are written as the rows come (a generator is never held whole)."""
    if fmt not in FORMATS:
        raise ConfigError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "jsonl":
        with path.open("w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        return path
    if columns is None:  # the first row's keys name the columns
        rows = iter(rows)
        first = next(rows, None)
        columns = list(first) if first is not None else []
        rows = itertools.chain([first] if first is not None else [], rows)
    names = list(columns)
    if fmt == "csv":
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=names, extrasaction="ignore")
            writer.writeheader()
            for row in rows:
                writer.writerow({k: _cell(row.get(k)) for k in names})
    else:
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise PrerequisiteError("pyarrow", "parquet") from None
        _write_parquet(({k: _flat(row.get(k)) for k in names} for row in rows), path, pa, pq)
    return path


PARQUET_GROUP_ROWS = 8_192


def _write_parquet(rows: Iterable[dict[str, Any]], path: Path, pa: Any, pq: Any) -> None:
    """Parquet in row groups of :data:`PARQUET_GROUP_ROWS`, never every row at once: the
    rows are spooled to a temporary JSON Lines file while each group's schema is unified
    with the last (a column empty so far takes the type of its first value), then written
    group by group under the unified schema."""
    schema = None
    with tempfile.TemporaryFile("w+", encoding="utf-8") as spool:
        for chunk in _chunks(rows, PARQUET_GROUP_ROWS):
            for row in chunk:
                spool.write(json.dumps(row, ensure_ascii=False) + "\n")
            found = pa.Table.from_pylist(chunk).schema
            schema = found if schema is None else pa.unify_schemas(
                [schema, found], promote_options="permissive")
        spool.seek(0)
        with pq.ParquetWriter(path, schema or pa.schema([])) as writer:
            for chunk in _chunks((json.loads(line) for line in spool), PARQUET_GROUP_ROWS):
                writer.write_table(pa.Table.from_pylist(chunk, schema=schema))


def _chunks(rows: Iterable[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    chunk: list[dict[str, Any]] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, dict | list | tuple):
        return json.dumps(value, ensure_ascii=False)
    return value


def _flat(value: Any) -> Any:
    return json.dumps(value, ensure_ascii=False) if isinstance(value, dict | list | tuple) \
        else value
