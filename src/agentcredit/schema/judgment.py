"""Judgments of checklist items, as stored and scored."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agentcredit.schema.base import Record

Label = Literal["yes", "no", "abstain"]
EvidenceKind = Literal["output", "action", "claim", "authored", "given", "harness", "forged",
                       "unspecific"]
JudgeSource = Literal["llm", "verifier", "generic"]
AbstainReason = Literal["judge_abstained", "unverified_evidence", "no_output_evidence",
                        "not_judged", "judge_failed", "check_skipped", "check_missing",
                        "no_checks", "needs_model", "split_vote"]
"""Why an item is Abstain: the judge said so; its citations were not found, or cited no
(specific) output; the judge's answer left it out, or the call failed; the verifier skipped
or never ran the check it cites; it cites no check; it needs a model and none was given;
the decided votes of a judge panel tie."""


RiggingKind = Literal["edits_tests", "forces_outcomes", "shims_runner", "rewrites_runner",
                      "writes_verifier_output", "selects_tests", "edits_fixtures"]


class RiggingFlag(Record):
    """An action of the agent that rigs the measurement. A flag never raises a score; a
    trainer may subtract a penalty for it (the reward service's ``rigging_penalty``)."""

    step: int = Field(description="1-based step number of the action.")
    kind: RiggingKind = Field(description=(
        "edits_tests (changed or removed a file of the task's tests or one its run loads), "
        "forces_outcomes (code that changes test outcomes), shims_runner (a runner or "
        "interpreter replaced: wrapper, alias, link, PATH shim), rewrites_runner (a test "
        "run piped through a rewriting filter), writes_verifier_output, selects_tests "
        "(addopts, PYTEST_ADDOPTS), edits_fixtures (a file the tests compare against)."))
    reason: str = Field(description="What the action did, in one line.")


def rigging_text(flags: tuple[RiggingFlag, ...] | list[RiggingFlag]) -> str:
    """Flags as one cell of a table: ``kind@step; …`` (empty when none).

    >>> rigging_text([RiggingFlag(step=4, kind="shims_runner", reason="x")])
    'shims_runner@4'
    """
    return "; ".join(f"{f.kind}@{f.step}" for f in flags)


class EvidenceRules(Record):
    """When a cited quote is specific enough to count as evidence (the judge's quote check
    and the turn verifier): the rules file's ``evidence`` section, recorded with every run."""

    min_quote_chars: int = Field(default=6, ge=0, description=(
        "Letters or digits of the environment's own text (echoes and tool labels taken "
        "out) a quote must hold, unless it is a whole line of the step's output."))
    max_step_share: float = Field(default=0.5, gt=0.0, le=1.0, description=(
        "A quote found in more than this share of the log's steps with output (and in at "
        "least 3 of them) proves nothing about one of them."))


class Citation(Record):
    """Evidence for a label: a step of the log and a verbatim quote from it."""

    step: int = Field(description="1-based step number in the evidence view.")
    quote: str = Field(description="Verbatim text from that step's action or output.")
    kind: EvidenceKind | None = Field(
        default=None, description="output (a tool output or file content shown), action (the "
        "agent's own command, code or arguments), claim (its message), authored (output the "
        "agent wrote itself one step removed: a claim), given (output repeating the instruction "
        "or another message given to the agent), harness (only the harness's status lines, "
        "labels or line numbers), forged (output at or after a line imitating a prompt's step "
        "header), unspecific (output text too short or too common in the log to prove "
        "anything); None: not found.")


class ItemJudgment(Record):
    """The label of one checklist item for one trial."""

    item_id: str = Field(description="Checklist item id (or 'ENDPOINT' for the virtual item).")
    label: Label = Field(description="yes, no or abstain.")
    reason: AbstainReason | None = Field(
        default=None, description="Why abstain: judge_abstained, unverified_evidence, "
        "no_output_evidence, not_judged, judge_failed, check_skipped, check_missing, "
        "no_checks, needs_model.")
    rationale: str = Field(default="", description="The judge's short rationale.")
    evidence: tuple[Citation, ...] = Field(default=(), description="Citations.")
    source: JudgeSource = Field(
        description="llm, verifier or generic (the generic-checklist ablation).")
