"""Fuzzing the readers over the repo's own example trials and tasks.

Every mutant (truncation, flipped bytes, a JSON value replaced by another type, deep nesting,
non-object roots, NaN/Infinity, huge strings, invalid UTF-8, symlinks) must leave ``load()``
returning; an unparseable file must be reported with its path; the mutated trial must not
vanish without a word; and every untouched sibling must be read exactly as before.

CI runs a bounded number of seeded examples; set ``AGENTCREDIT_FUZZ_ITERATIONS`` (mutation
fuzzer) and ``AGENTCREDIT_FUZZ_EXAMPLES`` (hypothesis) for a longer run.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentcredit.formats import load
from tests.conftest import EXAMPLES

ITERATIONS = int(os.environ.get("AGENTCREDIT_FUZZ_ITERATIONS", "2500"))
EXAMPLES_N = int(os.environ.get("AGENTCREDIT_FUZZ_EXAMPLES", "500"))
SOURCE = EXAMPLES / "jobs" / "toy-agent-skills"
TASKS = EXAMPLES / "tasks"
KINDS = ("truncate", "flip", "retype", "nest", "root", "nan", "huge", "utf8", "symlink",
         "empty")


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in (".json", ".txt",
                                                                           ".toml", ".md",
                                                                           ".py", ".sh"))


JOB_FILES = [p.relative_to(SOURCE) for p in _files(SOURCE) if p.name != "config.json"]
TASK_FILES = [p.relative_to(TASKS) for p in _files(TASKS)]


def _fingerprint(record: Any) -> str:
    data = record.model_dump(mode="json")
    data.pop("source_path", None)
    data.pop("trajectory_path", None)
    for step in data.get("steps", []):
        step["origin"].pop("path", None)
    return json.dumps(data, sort_keys=True)


def _baseline(root: Path) -> dict[str, str]:
    result = load([root / "job", root / "tasks"])
    assert not result.errors
    return {**{t.source_path.replace(str(root), ""): _fingerprint(t) for t in result.trials},
            **{t.source_path.replace(str(root), ""): _fingerprint(t) for t in result.tasks}}


def _retype(value: Any, rng: random.Random) -> Any:
    """The document with one value (at a random path) replaced by another type."""
    replacements = [None, 0, -1, 1.5, "", "x", [], {}, True, "y" * 10_000, float("nan"),
                    [[[]]], {"a": {"b": None}}]
    if isinstance(value, dict) and value and rng.random() < 0.8:
        key = rng.choice(sorted(value))
        return {**value, key: _retype(value[key], rng)}
    if isinstance(value, list) and value and rng.random() < 0.8:
        i = rng.randrange(len(value))
        return [*value[:i], _retype(value[i], rng), *value[i + 1:]]
    return rng.choice(replacements)


def _mutate(path: Path, kind: str, rng: random.Random) -> None:
    data = path.read_bytes()
    if kind == "truncate":
        path.write_bytes(data[:rng.randrange(len(data) + 1)])
    elif kind == "flip":
        raw = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            if raw:
                raw[rng.randrange(len(raw))] = rng.randrange(256)
        path.write_bytes(bytes(raw))
    elif kind in ("retype", "nan", "root") and path.suffix == ".json":
        try:
            doc = json.loads(data)
        except ValueError:
            return
        if kind == "retype":
            doc = _retype(doc, rng)
        elif kind == "nan":
            doc = _retype(doc, rng) if rng.random() < 0.3 else doc
            text = json.dumps(doc).replace("1.0", rng.choice(["NaN", "Infinity", "-Infinity"]))
            path.write_text(text)
            return
        else:
            doc = rng.choice([[doc], "text", 42, None, True, []])
        path.write_text(json.dumps(doc))
    elif kind == "nest":
        depth = rng.choice([50, 2_000, 40_000])
        path.write_bytes(b"[" * depth + data + b"]" * depth)
    elif kind == "huge":
        path.write_bytes(data[:len(data) // 2] + b'"' + b"z" * 3_000_000 + b'"' +
                         data[len(data) // 2:])
    elif kind == "utf8":
        cut = rng.randrange(len(data) + 1)
        path.write_bytes(data[:cut] + b"\xff\xfe\xc3" + data[cut:])
    elif kind == "symlink":
        path.unlink()
        target = rng.choice([path, path.parent / "missing.json", path.parent])
        os.symlink(target, path)
    elif kind == "empty":
        path.write_bytes(b"")


def _parses(path: Path) -> bool:
    try:
        if path.is_symlink() and not path.exists():
            return False
        json.loads(path.read_bytes().decode("utf-8"))
        return True
    except (ValueError, RecursionError, OSError):
        return False


def _check(root: Path, rel: Path, in_job: bool, baseline: dict[str, str]) -> None:
    mutated = (root / ("job" if in_job else "tasks") / rel)
    owner = mutated.parents[len(rel.parts) - 2] if len(rel.parts) > 1 else mutated
    result = load([root / "job", root / "tasks"])  # must return, whatever the input
    reported = [e.path for e in [*result.errors, *result.warnings]]
    named = [p for p in reported if p.startswith(str(owner))]
    if mutated.suffix == ".json" and not _parses(mutated) and mutated.name not in (
            "config.json",):
        assert any(p.startswith(str(mutated)) or p == str(owner) for p in named), \
            (rel, reported)
    records = {**{t.source_path: t for t in result.trials},
               **{t.source_path: t for t in result.tasks}}
    assert str(owner) in records or named, (rel, "vanished without a word")
    for key, fingerprint in baseline.items():
        if key.startswith(str(owner).replace(str(root), "")):
            continue
        found = records.get(str(root) + key)
        assert found is not None and _fingerprint(found) == fingerprint, (rel, key)


def _fresh(root: Path) -> None:
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(SOURCE, root / "job", symlinks=True)
    shutil.copytree(TASKS, root / "tasks", symlinks=True)


class _Tree:
    """One copy of the examples; each mutant changes one file, which is then restored."""

    def __init__(self, root: Path) -> None:
        self.root = root
        _fresh(root)
        self.baseline = _baseline(root)

    def trial(self, rel: Path, in_job: bool, kind: str, rng: random.Random) -> None:
        path = self.root / ("job" if in_job else "tasks") / rel
        original = path.read_bytes()
        try:
            _mutate(path, kind, rng)
            _check(self.root, rel, in_job, self.baseline)
        finally:
            if path.is_symlink() or path.is_dir():
                path.unlink()
            path.write_bytes(original)


def test_mutation_fuzzer(tmp_path: Path) -> None:
    rng = random.Random(20261130)
    tree = _Tree(tmp_path / "fuzz")
    for _ in range(ITERATIONS):
        in_job = rng.random() < 0.8
        tree.trial(rng.choice(JOB_FILES if in_job else TASK_FILES), in_job, rng.choice(KINDS),
                   rng)
    assert _baseline(tree.root) == tree.baseline  # every file was restored


_TREES: dict[str, _Tree] = {}


@settings(max_examples=EXAMPLES_N, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow])
@given(rel=st.sampled_from(JOB_FILES), kind=st.sampled_from(KINDS),
       seed=st.integers(0, 2**32 - 1))
def test_property_every_mutant_is_read_or_reported(tmp_path_factory: Any, rel: Path, kind: str,
                                                   seed: int) -> None:
    if "tree" not in _TREES:
        _TREES["tree"] = _Tree(tmp_path_factory.mktemp("prop"))
    _TREES["tree"].trial(rel, True, kind, random.Random(seed))
