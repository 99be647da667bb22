"""GCPC and the holistic baseline as Inspect scorers (`agentcredit/gcpc`, `agentcredit/holistic`).

Registered through Inspect's ``inspect_ai`` entry point (``pip install -e '.[inspect]'``),
so that ``inspect score LOG --scorer agentcredit/gcpc -S checklists=DIR -S model=openai/...``
rescoring a log, or ``scorer=gcpc(...)`` in a task, runs the same code as ``agentcredit judge``.

``gcpc``: the sample's messages become a trajectory (as the Inspect log reader reads them);
its checklist is ``DIR/<task>__<sample id>.json``, synthesized from the sample input on first
use and frozen exactly as ``agentcredit checklists build`` does (gates, repairs, lock file);
the judge labels every item from the evidence view. The score's value is the partial credit
of the judge's labels (no outcome fusion: a scorer does not see the official verdict; NaN
when nothing was decided), with coverage, Perfect and every item's label, reason, rationale
and quotes in the metadata and explanation.
"""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
from typing import Any

from inspect_ai.scorer import Score, Target, mean, scorer
from inspect_ai.solver import TaskState

from agentcredit.checklists.build import build_checklists
from agentcredit.checklists.freeze import file_name, load_checklist
from agentcredit.checklists.rules import load_rules
from agentcredit.evidence.view import render_evidence
from agentcredit.formats.inspect_log import _from_messages
from agentcredit.judging.llm_judge import holistic_score, judge_trial
from agentcredit.judging.prompts import HOLISTIC_PROMPT_VERSION, JUDGE_PROMPT_VERSION
from agentcredit.llm.client import ModelClient
from agentcredit.llm.spec import ModelSpec
from agentcredit.schema import Task, Trial
from agentcredit.store.scores import score_trial

_LOCKS: dict[str, asyncio.Lock] = {}


def _client(model: str, base_url: str | None, cache: str | None) -> ModelClient:
    return ModelSpec(model, base_url=base_url, cache=Path(cache) if cache else None).client()


def _task_name(task: str | None) -> str:
    if task:
        return task
    try:
        from inspect_ai.log._samples import sample_active

        active = sample_active()
        if active is not None and getattr(active, "task", None):
            return str(active.task)
    except ImportError:  # a future Inspect without it: fall back to a fixed name
        pass
    return "inspect"


def _trial(state: TaskState, task_id: str) -> Trial:
    messages = [m.model_dump(exclude_none=True) for m in state.messages]
    where = f"inspect:{task_id}/{state.epoch}"
    return Trial(id=f"{task_id}/{state.epoch}", task_id=task_id,
                 steps=_from_messages(messages, where), outcome="none",
                 outcome_reason="scored inside Inspect", instruction=state.input_text,
                 format="inspect-state", source_path=where)


@scorer(metrics=[mean()])
def gcpc(checklists: str = "checklists", model: str = "", rules: str | None = None,
         evidence: str = "outputs", task: str | None = None, base_url: str | None = None,
         cache: str | None = None) -> Any:
    """GCPC partial credit of a sample (see the module docstring)."""
    if not model:
        raise ValueError("agentcredit/gcpc needs -S model=provider/model (the judge)")
    rule_set = load_rules(Path(rules) if rules else None)
    folder = Path(checklists)

    async def score(state: TaskState, target: Target) -> Score:
        client = _client(model, base_url, cache)
        try:
            task_id = f"{_task_name(task)}/{state.sample_id}"
            spec = Task(id=task_id, instruction=state.input_text, benchmark="inspect",
                        source_path=str(folder))
            path = folder / file_name(task_id)
            async with _LOCKS.setdefault(str(path), asyncio.Lock()):  # epochs share it
                if not path.exists():
                    report = await build_checklists([spec], folder, rule_set, model=client)
                    if task_id in report.rejected:
                        reason = report.rejected[task_id].reason
                        return Score(value=math.nan, explanation=f"no checklist: {reason}")
            checklist = load_checklist(path)
            trial = _trial(state, task_id)
            view = render_evidence(trial)
            result = await judge_trial(client, checklist, spec.instruction, view,
                                       evidence=evidence)
            _, metrics = score_trial(checklist, result.judgments, "none")
        finally:
            await client.aclose()
        items = [{"item_id": j.item_id, "label": j.label, "reason": j.reason,
                  "rationale": j.rationale,
                  "evidence": [c.model_dump(mode="json") for c in j.evidence]}
                 for j in result.judgments]
        value = metrics.partial_credit
        return Score(
            value=math.nan if value is None else float(value),
            answer=f"{metrics.yes} yes / {metrics.no} no / {metrics.abstain} abstain",
            explanation="\n".join(f"{i['item_id']}: {i['label']}"
                                  + (f" ({i['reason']})" if i["reason"] else "")
                                  + f" — {i['rationale']}" for i in items),
            metadata={"coverage": metrics.coverage, "perfect": metrics.perfect,
                      "items": items, "checklist_hash": checklist.hash,
                      "rules": f"{checklist.rules.id} {checklist.rules.version}",
                      "judge_model": client.model_id, "prompt_version": JUDGE_PROMPT_VERSION,
                      "evidence": evidence, "failures": [f.message for f in result.failures]})

    return score


@scorer(metrics=[mean()])
def holistic(model: str = "", task: str | None = None, base_url: str | None = None,
             cache: str | None = None) -> Any:
    """The holistic 0-1 progress baseline of a sample."""
    if not model:
        raise ValueError("agentcredit/holistic needs -S model=provider/model")

    async def score(state: TaskState, target: Target) -> Score:
        client = _client(model, base_url, cache)
        try:
            trial = _trial(state, f"{_task_name(task)}/{state.sample_id}")
            value, rationale, _ = await holistic_score(client, state.input_text,
                                                       render_evidence(trial))
        finally:
            await client.aclose()
        return Score(value=math.nan if value is None else value, explanation=rationale,
                     metadata={"model": client.model_id,
                               "prompt_version": HOLISTIC_PROMPT_VERSION})

    return score
