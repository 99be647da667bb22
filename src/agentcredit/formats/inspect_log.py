"""Inspect AI logs: ``.eval`` archives and ``.json`` documents.

An ``.eval`` log is a zip archive (``header.json``, ``samples/<id>_epoch_<n>.json``,
``summaries.json``, ``reductions.json``, ``_journal/``) whose members current Inspect writes
with Zstandard (zip method 93), which Python 3.11's ``zipfile`` cannot open; those members
are decompressed here with the ``zstandard`` package. Samples are read one member at a time,
so a large log never sits in memory whole. A ``.json`` log is the same content as one
document.

Each sample × epoch becomes a :class:`Trial` (id ``<task>/<sample id>/<epoch>``, task id
``<task>/<sample id>``) and each sample a :class:`Task` (benchmark ``inspect``; its
instruction is the sample input; the target is oracle material and is not kept). Messages
become steps (assistant text: claims; tool calls: actions; tool messages: observations
linked by call id; images: :class:`ImageRef`); model and tool ``events`` are used when a
sample has no messages. The outcome comes from one scorer (the first of the log unless
named): ``C``/``I``, true/false and 1/0 map to pass/fail; partial values (``P``, 0 < x < 1)
to fail with the value kept as ``reward``; unscored samples and samples with an ``error``
have outcome none with the reason.
"""

from __future__ import annotations

import io
import json
import struct
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcredit.errors import InputError, PrerequisiteError
from agentcredit.formats._coerce import opt_str
from agentcredit.formats._content import arguments_dict
from agentcredit.safe_io import max_file_bytes, open_regular, parse_json
from agentcredit.schema import (
    AgentInfo,
    DroppedText,
    ImageRef,
    Observation,
    Origin,
    OutcomeStatus,
    Step,
    StepSource,
    Task,
    TokenUsage,
    ToolCall,
    Trial,
)

ZSTD = 93
_PASS = {"C": "pass", "I": "fail", "P": "fail", "N": "fail"}
_ROLES: dict[str, StepSource] = {"system": "system", "user": "user", "assistant": "agent"}


@dataclass
class InspectRead:
    """What one log gave: tasks, trials, and the members that could not be read."""

    tasks: list[Task] = field(default_factory=list)
    trials: list[Trial] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)
    task_ids: set[str] = field(default_factory=set)


def is_inspect_document(value: Any) -> bool:
    """A ``.json`` Inspect log has ``eval`` (with a task) and ``version`` at the top."""
    return isinstance(value, dict) and isinstance(value.get("eval"), dict) and \
        "task" in value["eval"] and "version" in value


def _member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, raw: Any) -> bytes:
    """A member's bytes, never more than it declares nor than the file-size limit.

    A member that declares more than the limit is refused before anything is inflated; one
    that inflates past what it declares (a decompression bomb) is cut off at that point.
    """
    most = max_file_bytes()
    limit = min(info.file_size, most)
    if info.file_size > most:
        raise InputError(info.filename, f"member declares {info.file_size} bytes, over the "
                         f"{most // (1024 * 1024)} MB limit "
                         "(AGENTCREDIT_MAX_FILE_MB raises it)")
    if info.compress_type != ZSTD:
        with archive.open(info) as member:
            return _capped(member.read(limit + 1), limit, info)
    try:
        import zstandard
    except ImportError:
        raise PrerequisiteError("zstandard", "inspect") from None
    raw.seek(info.header_offset)
    header = raw.read(30)
    if len(header) < 30 or header[:4] != b"PK\x03\x04":
        raise InputError(info.filename, "bad local header")
    name_len, extra_len = struct.unpack("<HH", header[26:30])
    raw.seek(info.header_offset + 30 + name_len + extra_len)
    data = raw.read(info.compress_size)
    if len(data) < info.compress_size:
        raise InputError(info.filename, "member is truncated")
    try:
        reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data))
        return _capped(reader.read(limit + 1), limit, info)
    except zstandard.ZstdError as exc:
        raise InputError(info.filename, f"cannot decompress: {exc}") from None


def _capped(data: bytes, limit: int, info: zipfile.ZipInfo) -> bytes:
    if len(data) > limit:
        raise InputError(info.filename, f"member inflates past the {limit} bytes it declares "
                         "(a decompression bomb?): not read")
    return data


def read_eval(path: Path, scorer: str | None = None) -> InspectRead:
    """Every sample of an ``.eval`` archive, member by member."""
    out = InspectRead()
    open_regular(path).close()  # a link out of the input or a FIFO: refused, never waited on
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise InputError(str(path), f"not a readable .eval archive ({exc})") from None
    with archive, path.open("rb") as raw:
        members = {i.filename: i for i in archive.infolist()}
        header = _json_member(archive, members.get("header.json"), raw, path, out)
        if header is None:
            start = _json_member(archive, members.get("_journal/start.json"), raw, path, out)
            header = start if isinstance(start, dict) else {}
        if not isinstance(header.get("eval"), dict):
            raise InputError(str(path), "no header.json with an eval spec")
        samples = sorted(n for n in members if n.startswith("samples/") and n.endswith(".json"))
        if not samples:
            out.problems.append((str(path), "the log holds no samples"))
        for name in samples:
            sample = _json_member(archive, members[name], raw, path, out)
            if isinstance(sample, dict):
                _add(out, header, sample, path, f"{path}#{name}", scorer)
            elif sample is not None:
                out.problems.append((f"{path}#{name}", "a sample must be a JSON object"))
    return out


def _json_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo | None, raw: Any,
                 path: Path, out: InspectRead) -> Any:
    if info is None:
        return None
    where = f"{path}#{info.filename}"
    try:
        return parse_json(Path(where), _member(archive, info, raw))
    except InputError as exc:
        out.problems.append((where, exc.reason))
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        out.problems.append((where, f"unreadable member: {exc}"))
    return None


def read_document(path: Path, doc: dict[str, Any], scorer: str | None = None) -> InspectRead:
    """Every sample of a ``.json`` log."""
    out = InspectRead()
    samples = doc.get("samples")
    if not isinstance(samples, list):
        out.problems.append((str(path), "the log holds no samples list"))
        return out
    for n, sample in enumerate(samples):
        if isinstance(sample, dict):
            _add(out, doc, sample, path, f"{path}#/samples/{n}", scorer)
        else:
            out.problems.append((f"{path}#/samples/{n}", "a sample must be a JSON object"))
    return out


def _add(out: InspectRead, header: dict[str, Any], sample: dict[str, Any], path: Path,
         where: str, scorer: str | None) -> None:
    spec = header["eval"]
    task_name = str(spec.get("task") or "task")
    sample_id = str(sample.get("id"))
    epoch = sample.get("epoch", 1)
    task_id = f"{task_name}/{sample_id}"
    instruction = _input_text(sample.get("input"))
    if task_id not in out.task_ids:
        out.task_ids.add(task_id)
        out.tasks.append(Task(id=task_id, instruction=instruction, benchmark="inspect",
                              source_path=str(path)))
    dropped: tuple[DroppedText, ...] = ()
    try:
        steps, dropped = _steps(sample, where)
    except (KeyError, TypeError, ValueError) as exc:
        out.problems.append((where, f"unreadable messages: {exc}"))
        steps = ()
    outcome, reason, reward = _outcome(sample, header, scorer)
    out.trials.append(Trial(
        id=f"{task_id}/{epoch}", task_id=task_id, agent=_agent(header),
        model=opt_str(spec.get("model")), steps=steps, outcome=outcome, outcome_reason=reason,
        reward=reward, usage=_usage(sample.get("model_usage")),
        started_at=opt_str(sample.get("started_at")),
        finished_at=opt_str(sample.get("completed_at")), instruction=instruction,
        format="inspect-eval" if path.suffix == ".eval" else "inspect-json",
        source_path=str(path), trajectory_path=where, dropped=dropped))


def _input_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_text(m.get("content"))[0] for m in value
                         if isinstance(m, dict) and m.get("role") in ("user", "system"))
    return ""


def _text(content: Any) -> tuple[str, tuple[ImageRef, ...]]:
    if content is None:
        return "", ()
    if isinstance(content, str):
        return content, ()
    texts: list[str] = []
    images: list[ImageRef] = []
    for part in content if isinstance(content, list) else [content]:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text":
            texts.append(str(part.get("text") or ""))
        elif kind == "image":
            image = str(part.get("image") or "")
            inline = image.startswith("data:")
            mime = image[5:image.find(";")] if inline and ";" in image else "image/png"
            images.append(ImageRef(mime_type=mime or "image/png",
                                   path=None if inline else image or None,
                                   note="inline image data not kept" if inline else None))
    return "\n".join(t for t in texts if t), tuple(images)


def _steps(sample: dict[str, Any], where: str) -> tuple[tuple[Step, ...],
                                                        tuple[DroppedText, ...]]:
    messages = sample.get("messages")
    if isinstance(messages, list) and messages:
        return _from_messages(messages, where), ()
    return _from_events(sample, where)


def _is_scoring(event: dict[str, Any]) -> bool:
    """The first event of the scoring phase: a score, or a scorer's span or step.

    Scorers run after the solver has finished (and may run model calls or sandbox commands
    of their own): none of it is the agent's episode.
    """
    kind = event.get("event")
    if kind == "score":
        return True
    return kind in ("span_begin", "step") and event.get("type") in ("scorer", "scorers")


def _from_messages(messages: list[Any], where: str) -> tuple[Step, ...]:
    steps: list[Step] = []
    owner: dict[str, int] = {}
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        origin = Origin(path=where, pointer=f"/messages/{i}")
        text, images = _text(message.get("content"))
        role = message.get("role")
        if role == "tool":
            call_id = opt_str(message.get("tool_call_id"))
            error = message.get("error")
            if isinstance(error, dict) and error.get("message"):
                text = f"{text}\n[error] {error['message']}".strip()
            target = owner.get(call_id or "", len(steps) - 1)
            obs = Observation(call_id=call_id, text=text, images=images,
                              is_error=bool(error) if error is not None else None)
            if target >= 0:
                steps[target] = steps[target].model_copy(
                    update={"observations": (*steps[target].observations, obs)})
            continue
        source = _ROLES.get(str(role))
        if source is None:
            continue
        calls = _calls(message.get("tool_calls"))
        for call in calls:
            if call.id:
                owner[call.id] = len(steps)
        steps.append(Step(index=len(steps), source=source, message=text,
                          tool_calls=calls, images=images, origin=origin))
    return tuple(steps)


def _calls(raw: Any) -> tuple[ToolCall, ...]:
    calls = []
    for call in raw or ():
        if not isinstance(call, dict):
            continue
        fn = call.get("function")
        name = fn.get("name") if isinstance(fn, dict) else fn
        arguments = fn.get("arguments") if isinstance(fn, dict) else call.get("arguments")
        calls.append(ToolCall(id=opt_str(call.get("id")), name=str(name or "unknown"),
                              arguments=arguments_dict(arguments)))
    return tuple(calls)


def _from_events(sample: dict[str, Any], where: str) -> tuple[tuple[Step, ...],
                                                              tuple[DroppedText, ...]]:
    steps: list[Step] = [Step(index=0, source="user", message=_input_text(sample.get("input")),
                              origin=Origin(path=where, pointer="/input"))]
    owner: dict[str, int] = {}
    events = list(_events(sample))
    end = next((n for n, event in enumerate(events) if _is_scoring(event)), len(events))
    dropped: tuple[DroppedText, ...] = ()
    if end < len(events):
        dropped = (DroppedText(
            reason=f"the scoring phase (events {end} to {len(events) - 1}): scorers' events "
                   "are never the agent's episode", steps=0,
            chars=sum(len(json.dumps(e, default=str)) for e in events[end:])),)
    for n, event in enumerate(events[:end]):
        origin = Origin(path=where, pointer=f"/events/{n}")
        if event.get("event") == "model":
            output: dict[str, Any] = event["output"] if isinstance(event.get("output"),
                                                                   dict) else {}
            choices = output.get("choices") or [{}]
            message = choices[0].get("message") if isinstance(choices[0], dict) else None
            message = message if isinstance(message, dict) else {}
            text, images = _text(message.get("content"))
            calls = _calls(message.get("tool_calls"))
            for call in calls:
                if call.id:
                    owner[call.id] = len(steps)
            steps.append(Step(index=len(steps), source="agent", message=text, images=images,
                              tool_calls=calls, origin=origin))
        elif event.get("event") == "tool":
            call_id = opt_str(event.get("id"))
            text, images = _text(event.get("result"))
            error = event.get("error")
            target = owner.get(call_id or "", len(steps) - 1)
            obs = Observation(call_id=call_id, text=text, images=images,
                              is_error=bool(error) if error is not None else None)
            steps[target] = steps[target].model_copy(
                update={"observations": (*steps[target].observations, obs)})
    return tuple(steps), dropped


def _events(sample: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for event in sample.get("events") or ():
        if isinstance(event, dict):
            yield event


def _outcome(sample: dict[str, Any], header: dict[str, Any],
             scorer: str | None) -> tuple[OutcomeStatus, str | None, float | None]:
    error = sample.get("error")
    if error:
        message = error.get("message") if isinstance(error, dict) else str(error)
        return "none", f"sample error: {str(message).splitlines()[0][:200]}", None
    scores = sample.get("scores")
    if not isinstance(scores, dict) or not scores:
        return "none", "unscored sample", None
    name = scorer or _first_scorer(header, scores)
    entry = scores.get(name)
    if not isinstance(entry, dict):
        return "none", f"no score from scorer {name!r} (has: {', '.join(scores)})", None
    value = entry.get("value")
    if isinstance(value, bool):
        return ("pass" if value else "fail"), None, 1.0 if value else 0.0
    if isinstance(value, str) and value.upper() in _PASS:
        status = _PASS[value.upper()]
        reward = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}[value.upper()]
        return status, None, reward  # type: ignore[return-value]
    if isinstance(value, int | float):
        number = float(value)
        if number >= 1.0:
            return "pass", None, number
        return "fail", None, number
    return "none", f"score value {value!r} of {name!r} is not a pass/fail verdict", None


def _first_scorer(header: dict[str, Any], scores: dict[str, Any]) -> str:
    listed = header["eval"].get("scorers")
    if isinstance(listed, list):
        for entry in listed:
            if isinstance(entry, dict) and entry.get("name") in scores:
                return str(entry["name"])
    return next(iter(scores))


def _agent(header: dict[str, Any]) -> AgentInfo | None:
    spec = header["eval"]
    solver = spec.get("solver")
    if isinstance(solver, str) and solver:
        return AgentInfo(name=solver)
    plan = header.get("plan")
    steps = plan.get("steps") if isinstance(plan, dict) else None
    names = [str(s.get("solver")) for s in steps or () if isinstance(s, dict) and s.get("solver")]
    return AgentInfo(name="+".join(names)) if names else None


def _usage(raw: Any) -> TokenUsage:
    if not isinstance(raw, dict):
        return TokenUsage()
    totals = {"input": 0, "output": 0, "cached": 0}
    for usage in raw.values():
        if isinstance(usage, dict):
            totals["input"] += int(usage.get("input_tokens") or 0)
            totals["output"] += int(usage.get("output_tokens") or 0)
            totals["cached"] += int(usage.get("input_tokens_cache_read") or 0)
    return TokenUsage(input=totals["input"], output=totals["output"],
                      cached_input=totals["cached"])
