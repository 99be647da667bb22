"""The built-in readers, in the order the loader tries them (see :mod:`.registry`).

Folders: a Harbor task (``instruction.md`` + ``task.toml``), a Terminal-Bench 1 task
(``task.yaml``), a trial folder (``result.json``: Harbor; ``results.json``: TB1). Files: an
Inspect ``.eval`` archive, JSON Lines (a trajectory, or a listing of SWE-bench instances or
TB1 outcomes), a JSON document (an Inspect log, a trajectory, a SWE-bench instance).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from agentcredit.errors import InputError
from agentcredit.formats.harbor_task import read_harbor_task
from agentcredit.formats.harbor_trial import is_harbor_trial_result, read_harbor_trial
from agentcredit.formats.inspect_log import (
    InspectRead,
    is_inspect_document,
    read_document,
    read_eval,
)
from agentcredit.formats.protocols import FileReader, FolderReader, Sink
from agentcredit.formats.swebench import is_swebench_instance, read_swebench_instance
from agentcredit.formats.tb1_task import read_tb1_task
from agentcredit.formats.tb1_trial import is_tb1_trial_result, read_tb1_trial, tb1_trial_from_result
from agentcredit.formats.trajectory_file import (
    is_trajectory_document,
    read_trajectory_file,
    sniff_jsonl,
    trajectory_from_document,
)
from agentcredit.safe_io import (
    first_byte,
    iter_jsonl_lenient,
    parse_json,
    peek_first_json_line,
    read_bytes,
    read_json,
)
from agentcredit.schema import AgentInfo, Trial


@contextmanager
def _caught(sink: Sink) -> Iterator[None]:
    """What the block cannot read becomes the sink's error, and the reader goes on."""
    try:
        yield
    except InputError as exc:
        sink.error(exc.path, exc.reason)


class HarborTaskReader:
    name = "harbor-task"
    kind: Literal["folder"] = "folder"

    def read(self, folder: Path, names: frozenset[str], sink: Sink) -> bool:
        if not {"instruction.md", "task.toml"} <= names:
            return False
        with _caught(sink):
            sink.add_task(read_harbor_task(folder), self.name)
        return True


class Tb1TaskReader:
    name = "tb1-task"
    kind: Literal["folder"] = "folder"

    def read(self, folder: Path, names: frozenset[str], sink: Sink) -> bool:
        if "task.yaml" not in names or "task.toml" in names:
            return False
        with _caught(sink):
            sink.add_task(read_tb1_task(folder), self.name)
        return True


class TrialFolderReader:
    """A Harbor trial (``result.json``) or a TB1 trial (``results.json``); a folder that looks
    like a trial but whose result file is unusable is kept as a trial with a reason."""

    name = "trial-folder"
    kind: Literal["folder"] = "folder"

    def read(self, folder: Path, names: frozenset[str], sink: Sink) -> bool:
        for name in ("result.json", "results.json"):
            if name in names:
                return self._trial(folder, folder / name, names, sink)
        return False

    def _trial(self, folder: Path, result_path: Path, names: frozenset[str],
               sink: Sink) -> bool:
        looks_like_trial = bool({"agent", "verifier", "sessions"} & names)
        try:
            value = read_json(result_path)
        except InputError as exc:
            if looks_like_trial:
                _unusable_result(folder, exc.path, exc.reason, sink)
            return looks_like_trial
        if not isinstance(value, dict) and looks_like_trial:
            _unusable_result(folder, str(result_path), "expected a JSON object, found "
                             f"{type(value).__name__}", sink)
            return True
        if is_harbor_trial_result(value):
            trial, problems = read_harbor_trial(folder, value)
            for path, reason in problems:
                sink.error(path, reason, fatal=False)
            sink.add_trial(trial)
            return True
        if is_tb1_trial_result(value):
            trial, log_problems = read_tb1_trial(folder, *_tb1_run_metadata(folder))
            for reason in log_problems:
                sink.error(str(folder / "sessions" / "agent.log"), reason, fatal=False)
            sink.add_trial(trial)
            return True
        if looks_like_trial:
            _unusable_result(folder, str(result_path), "neither a Harbor trial result "
                             "(trial_name, task_name) nor a Terminal-Bench 1 result", sink)
        return looks_like_trial


def _unusable_result(folder: Path, where: str, reason: str, sink: Sink) -> None:
    """A trial folder whose result file cannot be used: kept as a trial with a reason."""
    sink.error(where, reason, fatal=False)
    name = folder.name
    stand_in = {"trial_name": name, "task_name": name.split("__")[0]}
    trial, problems = read_harbor_trial(folder, stand_in)
    for path, problem in problems:
        sink.error(path, problem, fatal=False)
    sink.add_trial(trial.model_copy(update={
        "outcome": "none", "reward": None, "task_id": None if "__" not in name
        else stand_in["task_name"],
        "outcome_reason": f"result file unusable ({reason})"}))


def _inspect(read: InspectRead, sink: Sink) -> None:
    for task in read.tasks:
        sink.add_task(task, "inspect-task")
    for trial in read.trials:
        sink.add_trial(trial)
    for where, reason in read.problems:
        sink.error(where, reason, fatal=False)


class InspectEvalReader:
    name = "inspect-eval"
    kind: Literal["file"] = "file"
    suffixes: tuple[str, ...] = (".eval",)

    def read(self, path: Path, sink: Sink, *, explicit: bool) -> bool:
        if path.suffix != ".eval":
            return False
        with _caught(sink):
            _inspect(read_eval(path, sink.inspect_scorer), sink)
        return True


class JsonLinesReader:
    """A trajectory in JSON Lines, or a listing of SWE-bench instances or TB1 outcomes."""

    name = "json-lines"
    kind: Literal["file"] = "file"
    suffixes: tuple[str, ...] = (".jsonl", ".json")

    def read(self, path: Path, sink: Sink, *, explicit: bool) -> bool:
        if first_byte(path) != b"{":
            return False
        first = peek_first_json_line(path)
        if sniff_jsonl(path) is not None:
            with _caught(sink):
                sink.add_trial(_file_trial(path, read_trajectory_file(path)))
            return True
        if is_swebench_instance(first) or is_tb1_trial_result(first):
            _listing(path, sink)
            return True
        return False


class JsonDocumentReader:
    """One JSON document: an Inspect log, a trajectory, or a SWE-bench instance."""

    name = "json-document"
    kind: Literal["file"] = "file"
    suffixes: tuple[str, ...] = (".json", ".jsonl")

    def read(self, path: Path, sink: Sink, *, explicit: bool) -> bool:
        try:
            raw = read_bytes(path)
            doc = parse_json(path, raw)
        except InputError as exc:
            if explicit or path.name.endswith("trajectory.json") or path.suffix == ".jsonl":
                sink.error(exc.path, exc.reason)
            return True
        if is_inspect_document(doc):
            _inspect(read_document(path, doc, sink.inspect_scorer), sink)
        elif is_trajectory_document(doc):
            with _caught(sink):
                sink.add_trial(_file_trial(path, trajectory_from_document(path, raw, doc)))
        elif is_swebench_instance(doc):
            _swebench(path, 1, doc, sink)
        elif explicit:
            with _caught(sink):
                trajectory_from_document(path, raw, doc)
        return True


def _file_trial(path: Path, parsed: Any) -> Trial:
    return Trial(id=trial_id_from_file(path), agent=parsed.agent, model=parsed.model,
                 steps=parsed.steps, outcome="none", outcome_reason="no verifier result",
                 usage=parsed.usage, format=parsed.format, source_path=str(path),
                 trajectory_path=str(path), notes=parsed.notes, dropped=parsed.dropped)


def _listing(path: Path, sink: Sink) -> None:
    with _caught(sink):
        for line, _, _, value, problem in iter_jsonl_lenient(path):
            where = f"{path}:{line}"
            if problem is not None:
                sink.error(where, problem)
            elif is_swebench_instance(value):
                _swebench(path, line, value, sink)
            elif is_tb1_trial_result(value):
                _tb1_outcome(where, value, sink)
            else:
                sink.error(where, "line is neither a SWE-bench instance nor a TB1 outcome")


def _swebench(path: Path, line: int, value: dict[str, Any], sink: Sink) -> None:
    try:
        sink.add_task(read_swebench_instance(value, path, line), "swebench-instance")
    except (InputError, ValueError) as exc:
        reason = exc.reason if isinstance(exc, InputError) else str(exc).splitlines()[0]
        sink.error(f"{path}:{line}", reason)


def _tb1_outcome(where: str, value: dict[str, Any], sink: Sink) -> None:
    submission = value.get("submission")
    trial_id = f"{submission}/{value['trial_name']}" if submission else str(value["trial_name"])
    try:
        trial = tb1_trial_from_result(
            value, trial_id=trial_id, source=where, fmt="tb1-outcome",
            agent=AgentInfo(name=str(submission)) if submission else None)
    except (ValueError, KeyError) as exc:
        sink.error(where, f"wrong field types: {str(exc).splitlines()[0]}")
        return
    sink.add_trial(trial)


def trial_id_from_file(path: Path) -> str:
    """A loose trajectory file's trial id: its name, or its trial folder's for
    ``<trial>/agent/trajectory.json``."""
    name = path.name
    for suffix in (".traj.json", ".json", ".jsonl", ".txt"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    if name in ("trajectory", "claude-code") and path.parent.name == "agent":
        return path.parent.parent.name
    return name


def _tb1_run_metadata(folder: Path) -> tuple[str | None, str | None]:
    """(agent_name, model_name) from the run's run_metadata.json, when there is one."""
    for candidate in (folder.parent / "run_metadata.json",
                      folder.parent.parent / "run_metadata.json"):
        if candidate.is_file():
            try:
                meta = read_json(candidate)
            except InputError:
                return None, None
            if not isinstance(meta, dict):
                return None, None
            agent, model = meta.get("agent_name"), meta.get("model_name")
            return (str(agent) if agent else None, str(model) if model else None)
    return None, None


BUILT_IN: tuple[FolderReader | FileReader, ...] = (
    HarborTaskReader(), Tb1TaskReader(), TrialFolderReader(),
    InspectEvalReader(), JsonLinesReader(), JsonDocumentReader())
