"""The normalized records every reader produces: tasks, trials and their steps.

Every outside format (Harbor, ATIF, CTRF, Terminal-Bench 1, Claude Code, mini-swe-agent,
SWE-bench, OpenAI chat messages) is read into these few models, so that checklists,
judging and scoring never need to know where a log came from.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from agentcredit.schema.base import Record

StepSource = Literal["system", "user", "agent"]
CheckStatus = Literal["passed", "failed", "skipped", "error"]
OutcomeStatus = Literal["pass", "fail", "none"]
Condition = Literal["skills", "no-skills"]


class Origin(Record):
    """Where a step came from in the raw file, so a citation can be traced back."""

    path: str = Field(description="File the step was read from.")
    line: int | None = Field(
        default=None, description="1-based line number (JSON Lines files, terminal logs)."
    )
    byte_start: int | None = Field(
        default=None, description="Byte offset of the step's first byte in the raw file."
    )
    byte_end: int | None = Field(
        default=None, description="Byte offset just past the step's last byte in the raw file."
    )
    pointer: str | None = Field(
        default=None, description="JSON pointer to the step inside a JSON document, e.g. /steps/3."
    )


class ImageRef(Record):
    """An image shown to or produced by the agent, kept as a reference, never as bytes."""

    mime_type: str = Field(description="IANA media type, e.g. image/png.")
    path: str | None = Field(default=None, description="File path or URL of the image.")
    note: str | None = Field(default=None, description="Why the image is not available, if so.")


class ToolCall(Record):
    """One tool invocation requested by the agent."""

    id: str | None = Field(default=None, description="Call id used to link observations.")
    name: str = Field(description="Tool or function name, e.g. run_shell_command or bash.")
    arguments: dict[str, Any] = Field(
        default_factory=dict,
        description="Arguments as given; a non-object payload is kept under the key 'raw'.",
    )


class SubagentRef(Record):
    """A reference to a delegated subagent's trajectory (ATIF 1.7), kept as a reference."""

    session_id: str | None = Field(default=None, description="The subagent's session id.")
    trajectory_path: str | None = Field(default=None, description="Where its trajectory lives.")


class Observation(Record):
    """What the environment returned for a tool call (or for an action without one)."""

    call_id: str | None = Field(
        default=None, description="Id of the ToolCall this answers; None when unlinked."
    )
    text: str = Field(default="", description="Textual content of the result.")
    images: tuple[ImageRef, ...] = Field(default=(), description="Images in the result.")
    subagents: tuple[SubagentRef, ...] = Field(
        default=(), description="Subagent trajectories this result delegates to."
    )
    is_error: bool | None = Field(default=None, description="Whether the tool reported an error.")


class Step(Record):
    """One turn of a trajectory."""

    index: int = Field(description="0-based position in the trial's step list.")
    source: StepSource = Field(description="Who produced the step: system, user or agent.")
    message: str = Field(default="", description="Visible message text (the agent's claims).")
    reasoning: str | None = Field(
        default=None, description="Reasoning or thinking text, kept apart from the message."
    )
    tool_calls: tuple[ToolCall, ...] = Field(default=(), description="Tools the agent invoked.")
    observations: tuple[Observation, ...] = Field(
        default=(), description="Results returned to the agent in this step."
    )
    images: tuple[ImageRef, ...] = Field(default=(), description="Images in the message itself.")
    timestamp: str | None = Field(default=None, description="ISO 8601 time as written.")
    origin: Origin = Field(description="Where the step came from in the raw file.")


class AgentInfo(Record):
    """The agent harness that produced a trial."""

    name: str = Field(description="Harness name, e.g. gemini-cli, claude-code, mini-swe-agent.")
    version: str | None = Field(default=None, description="Harness version when recorded.")


class TokenUsage(Record):
    """Token totals of a trial as recorded by its harness (None when not recorded)."""

    input: int | None = Field(default=None, description="Prompt tokens, cached included.")
    cached_input: int | None = Field(default=None, description="Prompt tokens served from cache.")
    output: int | None = Field(default=None, description="Completion tokens.")
    cost_usd: float | None = Field(default=None, description="Cost reported by the harness.")


class TaskMetadata(Record):
    """Descriptive metadata of a task."""

    difficulty: str | None = Field(default=None, description="e.g. easy, medium, hard.")
    category: str | None = Field(default=None, description="e.g. data-analysis.")
    tags: tuple[str, ...] = Field(default=(), description="Free-form tags.")
    extra: dict[str, Any] = Field(
        default_factory=dict, description="Other metadata fields kept as written."
    )


class Task(Record):
    """A benchmark task: what the agent was asked and how the official verifier checks it.

    Oracle material (reference solutions, gold patches) is never part of a Task; it lives
    in :class:`Oracle`, which no prompt builder accepts.
    """

    id: str = Field(description="Task id (Harbor folder name, TB1 task id, SWE-bench instance).")
    instruction: str = Field(description="The prompt given to the agent.")
    verifier_files: dict[str, str] = Field(
        default_factory=dict, description="Verifier files: path relative to the task -> text."
    )
    skipped_files: dict[str, str] = Field(
        default_factory=dict, description="Verifier files left out: path -> reason."
    )
    checks: tuple[str, ...] = Field(
        default=(),
        description="Verifier check ids: CTRF-style pytest ids (test_outputs.py::TestX::test_y),"
        " TB1 parser names, or SWE-bench FAIL_TO_PASS then PASS_TO_PASS ids.",
    )
    fail_to_pass: tuple[str, ...] = Field(
        default=(), description="SWE-bench checks the fix must turn from failing to passing."
    )
    metadata: TaskMetadata = Field(default_factory=TaskMetadata, description="Metadata.")
    benchmark: str = Field(description="harbor, terminal-bench-1 or swe-bench.")
    source_path: str = Field(description="Folder or file the task was read from.")
    notes: tuple[str, ...] = Field(default=(), description="Reader remarks worth showing.")


class Oracle(Record):
    """Reference-solution material of a task, kept apart from :class:`Task` on purpose."""

    task_id: str = Field(description="The task this oracle belongs to.")
    files: dict[str, str] = Field(
        default_factory=dict, description="Oracle files or fields: name -> text."
    )


class DroppedText(Record):
    """Text a reader left out of a trajectory because it is not the agent's episode.

    Everything after the agent's episode ends (a harness's teardown, the official test run
    in the agent's own terminal, a scorer's events) and harness noise inside it is dropped
    so that no judge ever sees it; this record says how much and why.
    """

    reason: str = Field(description="Why it was dropped, e.g. 'after the agent's final "
                        "submission' or 'verifier output (rootdir: /tests)'.")
    steps: int = Field(default=0, description="Whole steps dropped.")
    chars: int = Field(default=0, description="Characters of text dropped.")


class Trial(Record):
    """One agent attempt at a task, with its trajectory and official outcome."""

    id: str = Field(description="Trial id (Harbor trial_name, TB1 trial_name, file stem).")
    task_id: str | None = Field(default=None, description="The task attempted, when known.")
    agent: AgentInfo | None = Field(default=None, description="Harness that ran the agent.")
    model: str | None = Field(default=None, description="Model the agent ran on.")
    condition: Condition | None = Field(
        default=None, description="skills / no-skills when it can be recovered, else None."
    )
    steps: tuple[Step, ...] = Field(default=(), description="The trajectory, in order.")
    outcome: OutcomeStatus = Field(description="Official outcome: pass, fail or none.")
    outcome_reason: str | None = Field(
        default=None, description="Why the outcome is none (harness error, no verifier result)."
    )
    reward: float | None = Field(default=None, description="The official reward, if any.")
    checks: dict[str, CheckStatus] = Field(
        default_factory=dict, description="Per-check results: check id -> status."
    )
    check_messages: dict[str, str] = Field(
        default_factory=dict,
        description="A message the harness attached to a check's name (TB1's "
        "'test_x - AssertionError: ...'), by normalized check id.",
    )
    usage: TokenUsage = Field(default_factory=TokenUsage, description="Token totals.")
    started_at: str | None = Field(default=None, description="ISO 8601 start time.")
    finished_at: str | None = Field(default=None, description="ISO 8601 end time.")
    instruction: str | None = Field(
        default=None, description="The instruction as recorded with the trial, if it was."
    )
    format: str = Field(description="Reader that produced this trial, e.g. harbor+atif.")
    source_path: str = Field(description="Folder or file the trial was read from.")
    trajectory_path: str | None = Field(default=None, description="The trajectory file read.")
    notes: tuple[str, ...] = Field(default=(), description="Reader remarks worth showing.")
    dropped: tuple[DroppedText, ...] = Field(
        default=(), description="What the reader left out of the trajectory, and why."
    )


class ReadError(Record):
    """An input that could not be read (or only partly), and why."""

    path: str = Field(description="The file or folder concerned.")
    reason: str = Field(description="One line saying what went wrong.")
    fatal: bool = Field(
        default=True, description="True when nothing usable was read from the path."
    )
