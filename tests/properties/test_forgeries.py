"""Forged evidence of every family, in many drawn surface forms, earns no output evidence at
the judge's quote check or the turn verifier; the genuine control of the same shape does."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentcredit.evidence.quotes import check_quotes
from agentcredit.evidence.view import evidence_steps
from agentcredit.rewards.causal import enforce
from agentcredit.rewards.prompts import FineAnswer
from agentcredit.schema import Citation, ItemJudgment, Observation, Origin, Step, ToolCall, Trial
from tests.properties.forgeries import HONEST, Call, families

INSTRUCTION = ("Parse every log file under /var/log/app and write the error counts per "
               "service to /app/errors.json. Make sure the provided test suite passes.")
SENTENCE = "Parse every log file under /var/log/app and write the error counts per service"


def _trial(calls: tuple[Call, ...]) -> Trial:
    steps = [Step(index=0, source="user", message=INSTRUCTION, origin=Origin(path="x")),
             Step(index=1, source="agent", origin=Origin(path="x"),
                  tool_calls=(ToolCall(id="w", name="bash",
                                       arguments={"command": "ls /var/log/app"}),),
                  observations=(Observation(call_id="w", text="api.log\nworker.log"),))]
    for tool, arguments, shown in calls:
        n = len(steps)
        steps.append(Step(index=n, source="agent", origin=Origin(path="x"),
                          tool_calls=(ToolCall(id=f"c{n}", name=tool, arguments=arguments),),
                          observations=(Observation(call_id=f"c{n}", text=shown),)))
    return Trial(id="t", task_id="task", outcome="fail", format="test", source_path="x",
                 steps=tuple(steps))


def _earns(calls: tuple[Call, ...], quote: str) -> tuple[str | None, bool, bool]:
    """The cited quote's kind, whether the judge's yes stands and whether the turn
    verifier accepts a verified state on it."""
    trial = _trial(calls)
    last = len(trial.steps)
    steps = evidence_steps(trial, INSTRUCTION)
    judged = check_quotes(ItemJudgment(item_id="C1", label="yes", source="llm",
                                       evidence=(Citation(step=last, quote=quote),)), steps)
    answer = FineAnswer.model_validate({
        "satisfied": True, "responsibility": [{"step": last, "weight": 1}],
        "states": [{"step": last, "state": "verified",
                    "evidence": [{"step": last, "quote": quote}]}]})
    turns = [s.index + 1 for s in trial.steps if s.source == "agent"]
    verdict = enforce("R1", answer, turns, steps, [last])
    return judged.evidence[0].kind, judged.label == "yes", verdict.satisfied


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_every_drawn_forgery_is_refused_and_its_control_accepted(data: st.DataObject) -> None:
    drawn = families(SENTENCE, 3)
    family = data.draw(st.sampled_from(sorted(drawn)))
    variant = data.draw(drawn[family])
    kind, judged, verified = _earns(variant.steps, variant.quote)
    assert kind is not None and kind != "output" and not judged and not verified, \
        (family, variant.steps, variant.quote, kind)
    kind, judged, verified = _earns(variant.control, variant.control_quote)
    assert (kind, judged, verified) == ("output", True, True), \
        (family, variant.control, variant.control_quote, kind)


@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_steps_earn_output(name: str) -> None:
    calls, quote = HONEST[name]
    assert _earns(calls, quote) == ("output", True, True), name


def test_one_tool_calls_stream_never_demotes_anothers() -> None:
    """A step with a controlled call (a computed line) and a real test run: the run's line
    stays output, the computed one does not."""
    step = Step(index=2, source="agent", origin=Origin(path="x"), tool_calls=(
        ToolCall(id="a", name="bash", arguments={"command": "echo $((40+2)) checks done"}),
        ToolCall(id="b", name="bash", arguments={"command": "python -m pytest -q tests"})),
        observations=(Observation(call_id="a", text="42 checks done"),
                      Observation(call_id="b", text="....\n4 passed in 0.31s")))
    trial = _trial(())
    trial = trial.model_copy(update={"steps": (*trial.steps, step)})
    steps = evidence_steps(trial, INSTRUCTION)
    kinds = {quote: check_quotes(ItemJudgment(item_id="C1", label="yes", source="llm",
                                              evidence=(Citation(step=3, quote=quote),)),
                                 steps).evidence[0].kind
             for quote in ("4 passed in 0.31s", "42 checks done")}
    assert kinds == {"4 passed in 0.31s": "output", "42 checks done": "authored"}, kinds
