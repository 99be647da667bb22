"""What to do about a failed model call, from its kind: one line the commands print."""

from __future__ import annotations

import re
from pathlib import Path

from agentcredit.checklists.build import REJECTIONS, BuildReport
from agentcredit.llm.client import ENOUGH_TOKENS


def advice(reason: str) -> str:
    """What to do about a failure, from its kind.

    >>> advice("too_long: the prompt (~9000 tokens) leaves no room")[:28]
    'the trajectory does not fit '
    """
    kind = reason.removeprefix("holistic ").removeprefix("generic ").split(":", 1)[0]
    return {
        "too_long": "the trajectory does not fit the model's window even reduced: serve the "
                    "model with a larger window (or pass --context-tokens if the server's is "
                    "larger than the one used)",
        "timeout": "the server is slower than --timeout: raise --timeout, lower "
                   "--max-tokens or --concurrency",
        "schema_validation": _schema_advice(reason),
        "bad_request": "the server refused the request: see the message; --structured "
                       "prompt avoids request fields a server may not take",
        "connection": "the server could not be reached: check --base-url and that it runs",
        "auth": "check the API key (OPENAI_API_KEY / ANTHROPIC_API_KEY)",
        "rate_limit": "the provider limited the rate: lower --concurrency or set --rpm/--tpm",
        "server_error": "the server failed: check its log, then run again",
    }.get(kind, "see the message, then run again")


def _schema_advice(reason: str) -> str:
    """What to try when answers did not fit the schema: a structured-output form not yet
    used, a larger answer budget when the answer was cut off (a failure recorded under other
    settings is asked again by itself), or a stronger model.

    >>> _schema_advice("schema_validation: bad [structured output via json_object]")[49:]
    'try --structured json_schema or prompt, or a stronger model'
    """
    used = reason.rsplit("[structured output via ", 1)[-1].rstrip("]") \
        if "[structured output via " in reason else None
    others = [m for m in ("json_schema", "json_object", "prompt") if m != used]
    tries = [f"--structured {others[0]} or {others[1]}" if used else
             "--structured json_object or prompt"]
    cut = re.search(r"cut off at max_tokens \((\d+)", reason)
    if cut and int(cut.group(1)) < ENOUGH_TOKENS:  # past it, more tokens rarely help
        tries.insert(0, "a larger --max-tokens")
    return "the model's answers did not fit the JSON schema: try " + ", ".join(tries) + \
        ", or a stronger model"


def refused_line(report: BuildReport, out: Path) -> str | None:
    """The line on checklists the gates rejected (not failed calls): where their drafts'
    failures are and what to try; None when the gates rejected none."""
    refused = [(t, r.reason) for t, r in report.rejected.items()
               if not r.reason.startswith("model call failed")]
    if not refused:
        return None
    return (f"{len(refused)} checklists rejected by the gates (first, {refused[0][0]}: "
            f"{refused[0][1][:200]}); each draft's failures are in "
            f"{out / 'checklists' / REJECTIONS}. Their trials get no partial credit: try a "
            "stronger --model, or --rules that fit these tasks")


def nothing_scored_hint(model: str | None, report: BuildReport) -> str:
    """What would help when trials were read but none was scored."""
    if model is None:
        return ("add --model provider/name: without a model, checklists are derived from the "
                "verifiers' per-check results, and these tasks have none")
    if report.rejected or report.deferred or report.no_checks:
        return "no checklist was built for their tasks (see above); fix that, then run again"
    return "check that --tasks holds the trials' tasks"
