"""Terminal-Bench 1 trial folders (results.json + sessions/agent.log) and outcome listings.

The agent log is a raw terminal transcript. When mini-swe-agent's structure is visible
(``mini-swe-agent (step N, $x):`` headers, THOUGHT text, a bash block, then the
environment's ``<returncode>``/``<output>`` reply) it is split into steps; otherwise the
whole cleaned transcript is kept as one step. Steps keep line and byte offsets into the
raw log.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from agentcredit.errors import InputError
from agentcredit.formats._coerce import opt_int, opt_str
from agentcredit.formats._parsed import ParsedTrajectory
from agentcredit.formats.boundary import verifier_output_marker
from agentcredit.formats.terminal import CleanLine, clean_transcript
from agentcredit.safe_io import read_bytes, read_json_object
from agentcredit.schema import (
    AgentInfo,
    CheckStatus,
    DroppedText,
    Observation,
    Origin,
    OutcomeStatus,
    Step,
    TokenUsage,
    ToolCall,
    Trial,
)

_HEADER = re.compile(r"^(System|User|Assistant):\s*$|^mini-swe-agent \(step (\d+), \$[\d.]+\):\s*$")
_RULE = re.compile(r"^[─━═-]{20,}\s*$")
# mini-swe-agent v1's own rule: exactly one match of this pattern is the action.
_MINI_ACTION = re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL)
_SUBMIT = re.compile(r"^\s*echo\s+['\"]?COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", re.MULTILINE)
_OBSERVATION_OPEN = re.compile(r"<returncode>|<output>|<output_head>|<warning>")
_OUTPUT_CLOSE = re.compile(r"</output(?:_tail)?>\s*$")
_FORMAT_ERROR = re.compile(r"EXACTLY ONE action|format error", re.IGNORECASE)
# Lines the harness prints, never the model: its spinner, LiteLLM's notices, retries.
_HARNESS_LINE = re.compile(
    r"Waiting for the LM to respond|^Give Feedback / Get Help:|^LiteLLM\.Info:"
    r"|^Provider List:|^Retrying .* as it raised|\blitellm\.\w*(?:Error|Exception)\b"
    r"|^\S*litellm\S*\.py\b")
_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)\b")
_PROMPT = re.compile(r"^\S+@[\w.-]+:\S*[#$]( (clear|exit))?$")
# Lines that only come after an agent's session: the harness's teardown and test run.
_AFTER_EPISODE = re.compile(
    r"^asciinema: recording finished|^Saved trajectory to |(?:^|[#$] )bash /tests/"
    r"|/tests/run-tests\.sh\b|^=+ test session starts =+$")
# TB1's parser can glue an exception onto a test name: "test_x - AssertionError: message".
_CHECK_SUFFIX = re.compile(r"^(\S+) - ([A-Za-z_][\w.]*(?:Error|Exception|Failure|Exit)\b.*)$",
                           re.DOTALL)
_STATUS: dict[str, CheckStatus] = {"passed": "passed", "failed": "failed", "skipped": "skipped"}


def is_tb1_trial_result(value: Any) -> bool:
    """A TB1 per-trial results.json: trial_name, task_id and an is_resolved key."""
    return (
        isinstance(value, dict)
        and "trial_name" in value
        and "task_id" in value
        and "is_resolved" in value
    )


def tb1_outcome(value: dict[str, Any]) -> tuple[OutcomeStatus, str | None]:
    """is_resolved true/false/null -> pass/fail/none with the failure mode as reason."""
    resolved = value.get("is_resolved")
    if resolved is True:
        return "pass", None
    if resolved is False:
        return "fail", None
    mode = value.get("failure_mode")
    detail = f" ({mode})" if mode and mode != "unset" else ""
    return "none", f"harness error: is_resolved is null{detail}"


def tb1_checks(value: dict[str, Any]) -> tuple[dict[str, CheckStatus], dict[str, str]]:
    """parser_results as check id -> status (unknown statuses become 'error'), and the
    messages TB1's parser appended to some names, by the normalized name.

    >>> tb1_checks({"parser_results": {"test_a - AssertionError: not public": "failed"}})
    ({'test_a': 'failed'}, {'test_a': 'AssertionError: not public'})
    """
    raw = value.get("parser_results")
    if not isinstance(raw, dict):
        return {}, {}
    checks: dict[str, CheckStatus] = {}
    messages: dict[str, str] = {}
    for key, status in raw.items():
        name, message = split_check_name(str(key))
        checks[name] = _STATUS.get(str(status), "error")
        if message:
            messages[name] = message
    return checks, messages


def split_check_name(name: str) -> tuple[str, str | None]:
    """A TB1 parser name as (test name, the message its parser glued on, if any).

    >>> split_check_name("test_bucket - AssertionError: Bucket is not public")
    ('test_bucket', 'AssertionError: Bucket is not public')
    >>> split_check_name("test_outputs.py::test_x[a - b]")
    ('test_outputs.py::test_x[a - b]', None)
    """
    match = _CHECK_SUFFIX.match(name)
    if match is None:
        return name, None
    return match.group(1), match.group(2).strip()


def tb1_trial_from_result(
    value: dict[str, Any], *, trial_id: str, source: str, fmt: str,
    trajectory: ParsedTrajectory | None = None, agent: AgentInfo | None = None,
    model: str | None = None,
) -> Trial:
    """A Trial from a TB1 results record (a results.json or an outcome listing line)."""
    outcome, reason = tb1_outcome(value)
    checks, messages = tb1_checks(value)
    return Trial(
        id=trial_id,
        task_id=str(value["task_id"]),
        agent=agent or (trajectory.agent if trajectory else None),
        model=model or (trajectory.model if trajectory else None),
        steps=trajectory.steps if trajectory else (),
        outcome=outcome,
        outcome_reason=reason,
        reward=None if outcome == "none" else float(outcome == "pass"),
        checks=checks,
        check_messages=messages,
        usage=TokenUsage(input=opt_int(value.get("total_input_tokens")),
                         output=opt_int(value.get("total_output_tokens"))),
        started_at=opt_str(value.get("trial_started_at")),
        finished_at=opt_str(value.get("trial_ended_at")),
        instruction=opt_str(value.get("instruction")),
        format=fmt,
        source_path=source,
        trajectory_path=trajectory.path if trajectory else None,
        notes=trajectory.notes if trajectory else (),
        dropped=trajectory.dropped if trajectory else (),
    )


def read_tb1_trial(folder: Path, run_agent: str | None,
                   run_model: str | None = None) -> tuple[Trial, list[str]]:
    """Read a TB1 trial folder; returns the trial and problems with its agent log.

    ``run_agent`` and ``run_model`` come from the run's ``run_metadata.json``
    (``agent_name``, ``model_name``).
    """
    value = read_json_object(folder / "results.json")
    problems: list[str] = []
    trajectory = None
    log = folder / "sessions" / "agent.log"
    if log.exists() or log.is_symlink():
        try:
            trajectory = read_agent_log(log)
        except InputError as exc:
            problems.append(exc.reason)
    else:
        problems.append("no sessions/agent.log")
    agent = AgentInfo(name=run_agent) if run_agent else None
    if trajectory is not None and trajectory.agent is not None:
        agent = trajectory.agent
    trial = tb1_trial_from_result(
        value, trial_id=str(value["trial_name"]), source=str(folder), fmt="tb1",
        trajectory=trajectory, agent=agent, model=run_model,
    )
    return trial, problems


def read_agent_log(path: Path) -> ParsedTrajectory:
    """Clean a raw agent.log, split it into mini-swe-agent steps where it is recognised, and
    cut it where the agent's episode ends (see :func:`_episode`)."""
    raw = read_bytes(path)
    lines = clean_transcript(raw)
    sections = _sections(lines)
    if not any(kind == "agent" for kind, _, _ in sections):
        kept, dropped = _cut_trailing(lines, "after the agent's session (harness teardown or "
                                      "test run)")
        return ParsedTrajectory(format="terminal", path=str(path),
                                steps=(_whole(path, kept),) if kept else (), dropped=dropped)
    sections, dropped = _episode(sections)
    steps: list[Step] = []
    for kind, header, body in sections:
        origin = _origin(path, header, body)
        if kind == "agent":
            _agent_step(steps, body, origin)
        elif kind == "user" and steps and steps[-1].source == "agent" and _is_observation(body):
            _observation(steps, body, origin)
        else:
            text = _text(body)
            if text:
                source = "system" if kind in ("system", "terminal", "harness") else "user"
                steps.append(Step(index=len(steps), source=source, message=text, origin=origin))
    _format_errors(steps)
    return ParsedTrajectory(format="mini-swe-agent-log", path=str(path), steps=tuple(steps),
                            agent=AgentInfo(name="mini-swe-agent"), dropped=dropped)


def mini_action(text: str) -> str | None:
    """The command mini-swe-agent (v1) runs for a response: its one ```` ```bash ```` block.

    Any other number of blocks is a format error and nothing runs. A heredoc whose body
    holds a fence ends the block there, exactly as mini-swe-agent's own pattern does.

    >>> mini_action("THOUGHT: list.\\n\\n```bash\\nls -la\\n```")
    'ls -la'
    >>> mini_action("```bash\\nls\\n```\\nthen\\n```bash\\npwd\\n```") is None
    True
    >>> mini_action("```sh\\nls\\n```") is None
    True
    """
    blocks = _MINI_ACTION.findall(text)
    return blocks[0].strip() if len(blocks) == 1 else None


Section = tuple[str, "CleanLine | None", list[CleanLine]]


def _episode(sections: list[Section]) -> tuple[list[Section], tuple[DroppedText, ...]]:
    """The sections of the agent's own episode, and what was dropped after it.

    The episode ends with the agent's final submission (``echo
    COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT``: mini-swe-agent stops there, and what follows is
    the harness: ``exit``, asciinema, with ``run_tests_in_same_shell`` the official tests);
    without one (step limit, timeout), with the closing tag of the last command's output.
    """
    last_agent = max(n for n, (kind, _, _) in enumerate(sections) if kind == "agent")
    for n, (kind, _, body) in enumerate(sections):
        if kind == "agent" and (action := mini_action(_text(body))) and _SUBMIT.search(action):
            end = _block_end(body)
            after = [*sections[n + 1:], ("", None, body[end:])]
            sections = [*sections[:n], (kind, sections[n][1], body[:end])]
            chars = sum(len(_text(b)) + 1 for _, _, b in after)
            dropped = (DroppedText(reason="after the agent's final submission (harness "
                                   "teardown, and the official test run when the task runs "
                                   "its tests in the agent's shell)", steps=0, chars=chars),) \
                if chars > 1 else ()
            return sections, dropped
    kept = sections[:last_agent + 2]
    dropped_chars = sum(len(_text(b)) + 1 for _, _, b in sections[last_agent + 2:])
    kind, header, body = kept[-1]
    close = _last_close(body) if kind == "user" else None
    if close is not None:
        body, tail = body[:close + 1], body[close + 1:]
    else:
        body, tail = _split_trailing(body)
    kept[-1] = (kind, header, body)
    dropped_chars += sum(len(line.text) + 1 for line in tail)
    if dropped_chars <= 1:
        return kept, ()
    return kept, (DroppedText(reason="after the output of the agent's last command (harness "
                              "teardown or test run)", steps=0, chars=dropped_chars),)


def _block_end(body: list[CleanLine]) -> int:
    """Index just past the line that closes the response's ```` ```bash ```` block."""
    opened = False
    for n, line in enumerate(body):
        text = line.text.strip()
        if not opened and text.startswith("```bash"):
            opened = True
        elif opened and text.startswith("```"):
            return n + 1
    return len(body)


def _split_trailing(lines: list[CleanLine]) -> tuple[list[CleanLine], list[CleanLine]]:
    """(lines before the first harness line that only follows an agent's session, the rest)."""
    for n, line in enumerate(lines):
        if _AFTER_EPISODE.search(line.text) or verifier_output_marker(line.text):
            # The prompt and the "exit" typed to end the recording belong to the harness too.
            while n > 0 and (lines[n - 1].text.strip() == "exit"
                             or _PROMPT.match(lines[n - 1].text.strip())):
                n -= 1
            return lines[:n], lines[n:]
    return lines, []


def _cut_trailing(lines: list[CleanLine], reason: str,
                  ) -> tuple[list[CleanLine], tuple[DroppedText, ...]]:
    kept, tail = _split_trailing(lines)
    if not tail:
        return kept, ()
    return kept, (DroppedText(reason=reason, steps=0,
                              chars=sum(len(x.text) + 1 for x in tail)),)


def _last_close(body: list[CleanLine]) -> int | None:
    for n in range(len(body) - 1, -1, -1):
        if _OUTPUT_CLOSE.search(body[n].text):
            return n
    return None


def _is_observation(body: list[CleanLine]) -> bool:
    return any(_OBSERVATION_OPEN.search(line.text) for line in body[:40])


def _text(body: list[CleanLine]) -> str:
    return "\n".join(line.text for line in body).strip()


def _split_harness(body: list[CleanLine]) -> tuple[list[CleanLine], list[CleanLine]]:
    """(the model's own lines, the harness's lines: spinner, LiteLLM notices, retries and
    tracebacks printed while waiting for the model)."""
    own: list[CleanLine] = []
    harness: list[CleanLine] = []
    in_traceback = False
    for line in body:
        text = line.text
        if in_traceback:
            harness.append(line)
            in_traceback = bool(text.startswith((" ", "\t")) or not text.strip()) \
                or not _EXCEPTION_LINE.match(text)
            in_traceback = in_traceback and len(harness) < 400
            continue
        if text.startswith("Traceback (most recent call last):"):
            in_traceback = True
            harness.append(line)
        elif _HARNESS_LINE.search(text):
            harness.append(line)
        else:
            own.append(line)
    return own, harness


def _agent_step(steps: list[Step], body: list[CleanLine], origin: Origin) -> None:
    own, harness = _split_harness(body)
    noise = _text(harness)
    if noise:
        steps.append(Step(index=len(steps), source="system", origin=origin,
                          message=f"[harness output while waiting for the model]\n{noise}"))
    text = _text(own)
    action = mini_action(text)
    message = text
    if action is not None:
        match = _MINI_ACTION.search(text)
        assert match is not None
        message = (text[:match.start()] + text[match.end():]).strip()
    calls = (ToolCall(name="bash", arguments={"command": action}),) if action is not None else ()
    steps.append(Step(index=len(steps), source="agent", message=message, tool_calls=calls,
                      origin=origin))


def _observation(steps: list[Step], body: list[CleanLine], origin: Origin) -> None:
    start = next(n for n, line in enumerate(body) if _OBSERVATION_OPEN.search(line.text))
    close = _last_close(body)
    end = len(body) if close is None else close + 1
    before, inside, after = body[:start], body[start:end], body[end:]
    prev = steps[-1]
    obs = (*prev.observations, Observation(text=_text(inside)))
    steps[-1] = prev.model_copy(update={"observations": obs})
    noise = _text([*before, *after])
    if noise:
        steps.append(Step(index=len(steps), source="system", origin=origin,
                          message=f"[harness output around the command's output]\n{noise}"))


def _format_errors(steps: list[Step]) -> None:
    """An action the harness answered with a format error did not run: drop it."""
    for n, step in enumerate(steps[:-1]):
        reply = steps[n + 1]
        if step.source == "agent" and step.tool_calls and not step.observations and \
                reply.source == "user" and _FORMAT_ERROR.search(reply.message):
            steps[n] = step.model_copy(update={"tool_calls": ()})


def _sections(lines: list[CleanLine]) -> list[tuple[str, CleanLine | None, list[CleanLine]]]:
    sections: list[tuple[str, CleanLine | None, list[CleanLine]]] = [("terminal", None, [])]
    for line in lines:
        if _RULE.match(line.text):
            continue
        match = _HEADER.match(line.text.strip())
        if match:
            kind = "agent" if match.group(2) or match.group(1) == "Assistant" else \
                match.group(1).lower()
            sections.append((kind, line, []))
        else:
            sections[-1][2].append(line)
    return sections


def _origin(path: Path, header: CleanLine | None, body: list[CleanLine]) -> Origin:
    first = header or (body[0] if body else None)
    last = body[-1] if body else header
    return Origin(
        path=str(path),
        line=first.line_no if first else None,
        byte_start=first.byte_start if first else None,
        byte_end=last.byte_end if last else None,
    )


def _whole(path: Path, lines: list[CleanLine]) -> Step:
    text = "\n".join(line.text for line in lines).strip()
    return Step(
        index=0, source="agent", observations=(Observation(text=text),),
        origin=Origin(path=str(path), line=1, byte_start=0, byte_end=lines[-1].byte_end),
    )
