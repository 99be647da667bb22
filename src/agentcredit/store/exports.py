"""Writing rows as CSV, JSON Lines or Parquet (with the ``parquet`` extra)."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from agentcredit.errors import ConfigError, PrerequisiteError

FORMATS = ("csv", "jsonl", "parquet")


def write_rows(rows: Iterable[dict[str, Any]], path: Path, fmt: str,
               columns: Sequence[str] | None = None) -> Path:
    """Write ``rows`` to ``path`` in ``fmt``; empty values stay empty (never 0). CSV and
    JSON Lines are written as the rows come (a generator is never held whole)."""
    if fmt not in FORMATS:
        raise ConfigError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "jsonl":
        with path.open("w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        return path
    if columns is None:
        rows = list(rows)
    names = list(columns or (rows[0].keys() if rows else []))  # type: ignore[index]
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
        table = pa.Table.from_pylist([{k: _flat(row.get(k)) for k in names} for row in rows])
        pq.write_table(table, path)
    return path


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
