"""Which JSON parser reads trajectory documents fastest here: the standard library,
pydantic-core (what ``safe_io.parse_json`` uses) and ``orjson`` when it is installed.

Parses every ``trajectory.json`` of the shared corpus (when ``../shared`` is beside the
repo) and a synthetic 60-step trajectory, and prints each parser's time and its ratio to the
standard library's.

    python benchmarks/json_parsers.py [--repeat 200]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pydantic_core

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.judging.synthetic import write_trials

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


def documents() -> list[bytes]:
    found = [p.read_bytes() for p in sorted(CORPUS.rglob("trajectory.json"))] \
        if CORPUS.is_dir() else []
    with tempfile.TemporaryDirectory() as tmp:
        write_trials(Path(tmp), 4, steps=60)
        found += [p.read_bytes() for p in sorted(Path(tmp).rglob("trajectory.json"))]
    return found


def timed(parse: Callable[[bytes], Any], docs: list[bytes], repeat: int) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        for doc in docs:
            parse(doc)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    docs = documents()
    parsers: dict[str, Callable[[bytes], Any]] = {
        "json (stdlib)": json.loads, "pydantic_core.from_json": pydantic_core.from_json}
    try:
        import orjson
        parsers["orjson"] = orjson.loads
    except ImportError:
        print("orjson is not installed: compared without it")
    size = sum(map(len, docs))
    print(f"{len(docs)} trajectory documents, {size / 1e6:.1f} MB, parsed {args.repeat} times")
    base = timed(json.loads, docs, args.repeat)
    for name, parse in parsers.items():
        took = base if parse is json.loads else timed(parse, docs, args.repeat)
        print(f"{name:>24}: {took:6.2f} s  {size * args.repeat / took / 1e6:6.0f} MB/s  "
              f"{base / took:4.2f}x the standard library")


if __name__ == "__main__":
    main()
