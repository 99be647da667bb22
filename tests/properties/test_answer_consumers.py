"""Every consumer of a model's answer, fed every answer its schema allows.

Each test registers a scripted model whose answers hypothesis draws from the very JSON
schema the consumer sends (``tests/properties/drawn.py``), aimed at the prompt's real ids,
steps and quotes half the time, and asserts that the consumer ends in a result or a typed
failure: never an exception, never a NaN or a score outside its range, and never a yes/no
labelled LLM-judged (or a satisfied criterion) without a citation the quote check accepted.
Example counts are kept small so the whole suite stays well inside CI's limit.
"""

from __future__ import annotations

import asyncio
import itertools
import math
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from agentcredit.checklists import derive_checklist, load_rules
from agentcredit.checklists.synthesize import synthesize
from agentcredit.formats import load
from agentcredit.judging import judge_trial, render_evidence
from agentcredit.judging.llm_judge import holistic_score
from agentcredit.llm import ModelClient, make_provider, register_script
from agentcredit.rewards.table import rubric_satisfaction
from agentcredit.rewards.verifier import Failed, verify_trial
from agentcredit.schema import Checklist, TrialVerdict
from agentcredit.scoring.fusion import fuse
from agentcredit.scoring.metrics import score
from tests.conftest import EXAMPLES
from tests.properties.drawn import drawing_script
from tests.skills.helpers import make_skill

RULES = load_rules()
LOADED = load([EXAMPLES / "jobs", EXAMPLES / "tasks"])
TASKS = {task.id: task for task in LOADED.tasks}
TRIALS = [trial for trial in LOADED.trials if trial.task_id in TASKS]
_names = itertools.count()
PROPERTY = settings(max_examples=30, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                           HealthCheck.data_too_large])


def _model(data: Any, calls: list[dict[str, Any]] | None = None) -> ModelClient:
    name = f"drawn-{next(_names)}"
    register_script(name, drawing_script(data, calls=calls))
    return ModelClient(make_provider(f"scripted/{name}"))


def _finite(value: float | None, low: float = 0.0, high: float = 1.0) -> None:
    if value is not None:
        assert not math.isnan(value) and low <= value <= high, value


@PROPERTY
@given(data=st.data(), which=st.integers(0, len(TRIALS) - 1), per_item=st.booleans())
def test_the_item_judge_labels_every_item_and_cites_what_it_says(
        data: Any, which: int, per_item: bool) -> None:
    trial = TRIALS[which]
    task = TASKS[trial.task_id or ""]
    checklist = derive_checklist(task, RULES)
    view = render_evidence(trial)
    result = asyncio.run(judge_trial(_model(data), checklist, task.instruction, view,
                                     per_item=per_item))
    assert [j.item_id for j in result.judgments] == [i.id for i in checklist.items]
    event(f"labels {sorted({j.label for j in result.judgments})}")
    for judgment in result.judgments:
        assert judgment.source == "llm"
        if judgment.label in ("yes", "no"):  # a decided label stands on an accepted quote
            assert judgment.evidence, judgment
            for citation in judgment.evidence:
                assert citation.quote and citation.quote in view.steps[citation.step].output
        else:
            assert judgment.reason, judgment
    for outcome in ("pass", "fail", None):
        fused = fuse(checklist, result.judgments, outcome)  # type: ignore[arg-type]
        scored = score(fused.labels.values(), fused.endpoint)
        for value in vars(scored).values() if hasattr(scored, "__dict__") else \
                scored.model_dump().values():
            if isinstance(value, float):
                _finite(value)


@PROPERTY
@given(data=st.data(), which=st.integers(0, len(TRIALS) - 1))
def test_the_holistic_baseline_is_a_progress_in_range_or_a_failure(data: Any, which: int
                                                                   ) -> None:
    trial = TRIALS[which]
    progress, rationale, _ = asyncio.run(holistic_score(
        _model(data), TASKS[trial.task_id or ""].instruction, render_evidence(trial)))
    _finite(progress)
    assert isinstance(rationale, str)


SKILL = make_skill()


@PROPERTY
@given(data=st.data(), which=st.integers(0, len(TRIALS) - 1))
def test_the_turn_verifier_gives_a_verdict_in_range_or_a_typed_failure(data: Any, which: int
                                                                      ) -> None:
    trial = TRIALS[which]
    verdict = asyncio.run(verify_trial(trial, SKILL, _model(data),
                                       TASKS[trial.task_id or ""].instruction))
    assert isinstance(verdict, (TrialVerdict, Failed)), verdict
    if isinstance(verdict, Failed):
        event(f"failed: {verdict.reason.split(':')[0]}")
        return
    event(f"satisfied {sum(c.satisfied for c in verdict.criteria)} of {len(verdict.criteria)}")
    assert [c.criterion_id for c in verdict.criteria] == [c.id for c in SKILL.rubric or ()]
    for criterion in verdict.criteria:
        assert len(criterion.states) in (0, len(verdict.turn_steps))
        for value in criterion.responsibility:
            _finite(value)
        if criterion.responsibility:
            assert math.isclose(sum(criterion.responsibility), 1.0 if criterion.satisfied
                                else 0.0, abs_tol=1e-6)
        if criterion.satisfied:  # satisfied only on an accepted citation
            assert criterion.status == "applicable"
            assert any(state.citations for state in criterion.states), criterion
    _finite(rubric_satisfaction(verdict, SKILL.rubric or ()))


@settings(PROPERTY, max_examples=20)
@given(data=st.data(), task_id=st.sampled_from(sorted(TASKS)))
def test_checklist_synthesis_ends_in_a_gated_checklist_or_a_rejection(data: Any, task_id: str
                                                                      ) -> None:
    result = asyncio.run(synthesize(TASKS[task_id], _model(data), RULES))
    event(type(result).__name__)
    if isinstance(result, Checklist):
        assert result.items and result.hash
        assert len({item.id for item in result.items}) == len(result.items)
    else:
        assert str(result)


@settings(PROPERTY, max_examples=10)
@given(data=st.data())
def test_a_bank_build_ends_in_gated_skills_or_recorded_failures(data: Any) -> None:
    import tempfile
    from pathlib import Path

    from agentcredit.skills.build import BuildOptions, build_bank
    from agentcredit.skills.embed import make_embedder
    from agentcredit.skills.gates import GateContext, run_skill_gates

    with tempfile.TemporaryDirectory() as folder:
        options = BuildOptions(model=_model(data), embedder=make_embedder("lexical"), tau=0.5)
        task = TASKS["csv-sales-summary"]  # one task: every call's draw fits one example
        trials = [t for t in TRIALS if t.task_id == task.id]
        report = asyncio.run(build_bank(trials, [task], Path(folder) / "bank", options))
        event(f"bank of {len(report.bank.skills) if report.bank else 'none'}, "
              f"{len(report.rejected)} rejected, {len(report.failed)} failed")
        for stage, unit, why in report.failed:
            assert stage and unit and why
        if report.bank is not None:
            for skill in report.bank.skills:
                assert [f for f in run_skill_gates(skill, GateContext(require_trials=False))
                        if f.code in ("S-COUNT", "S-EVIDENCE")] == [], skill


@settings(PROPERTY, max_examples=20)
@given(data=st.data())
def test_an_imported_skills_rubric_is_gated_or_a_typed_failure(data: Any) -> None:
    from agentcredit.schema.outcomes import Failed as CallFailed
    from agentcredit.schema.outcomes import Rejected
    from agentcredit.skills.agent_skills import parse_skill_md
    from agentcredit.skills.importing import derive_rubric

    folder = EXAMPLES / "skills" / "log-level-filtering"
    skill = parse_skill_md((folder / "SKILL.md").read_text(), folder.name, str(folder))
    result = asyncio.run(derive_rubric(skill, _model(data)))
    event(type(result).__name__)
    assert isinstance(result, (type(skill), CallFailed, Rejected)), result
    if isinstance(result, type(skill)):
        assert result.rubric and all(c.weight > 0 and not math.isnan(c.weight)
                                     for c in result.rubric)


@settings(PROPERTY, max_examples=20)
@given(data=st.data(), rubric=st.booleans())
def test_an_evolve_proposal_is_gated_or_says_why_there_is_none(data: Any, rubric: bool
                                                               ) -> None:
    from agentcredit.evolve.propose import (
        NoProposal,
        Proposal,
        evidence_block,
        propose_guidance,
        propose_rubric,
    )
    from agentcredit.schema.outcomes import Failed as CallFailed
    from agentcredit.schema.outcomes import Rejected
    from agentcredit.skills.gates import GateContext, run_skill_gates

    skill = make_skill()
    trials = TRIALS[:2]
    context = GateContext(trial_ids=frozenset(t.id for t in trials))
    propose = propose_rubric if rubric else propose_guidance
    outcome = asyncio.run(propose(skill, trials, evidence_block(trials, {}), _model(data),
                                  context))
    event(type(outcome).__name__)
    assert isinstance(outcome, (Proposal, NoProposal, CallFailed, Rejected)), outcome
    if isinstance(outcome, Proposal):
        assert outcome.skill.version > skill.version
        assert run_skill_gates(outcome.skill, context) == []
