"""The causal rule and the citation check of the turn verifier, enforced in code (pure).

Whatever the fine verifier answers, a criterion's states are rebuilt turn by turn:

- a state may rise above the previous turn's state only with at least one accepted
  citation: a quote found verbatim (normalised) in what the environment showed in the cited
  step (a tool output, file content; not the agent's own command or message, not output
  the agent authored one step removed, not text too short or too common in the log to be
  specific: :func:`agentcredit.evidence.quotes.evidence_kind`), and a cited
  step no later than the turn's own step. Otherwise the state stays where it was (not
  raised) and the refusal is recorded in ``corrections``;
- a state at or below the previous one is kept as given (lowering needs no proof);
- turns the verifier did not review carry the previous state forward;
- "satisfied" needs an accepted state of at least ``supported`` at some turn;
- responsibility lives on turns only, is dropped when not satisfied, and is normalised to
  sum to 1; when the verifier gave none, it all goes to the first turn at which the highest
  accepted state was reached.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentcredit.evidence.quotes import DEFAULT_SPECIFICITY, evidence_kind
from agentcredit.evidence.view import StepEvidence
from agentcredit.rewards.advantages import STATE_VALUES
from agentcredit.rewards.prompts import FineAnswer, Quote, StateAnswer
from agentcredit.schema import (
    Citation,
    CriterionVerdict,
    EvidenceRules,
    EvidenceState,
    TurnState,
)

SATISFIED_AT = STATE_VALUES["supported"]


def enforce(criterion_id: str, answer: FineAnswer, turn_steps: Sequence[int],
            evidence: dict[int, StepEvidence], candidates: Sequence[int],
            rule: EvidenceRules = DEFAULT_SPECIFICITY) -> CriterionVerdict:
    """The verdict the rules allow for ``answer`` (see the module docstring); ``rule`` is
    the rules file's evidence section (when a quote is specific enough)."""
    turn_of = {step: n for n, step in enumerate(turn_steps, 1)}
    corrections: list[str] = []
    given: dict[int, StateAnswer] = {}
    for entry in answer.states:
        if entry.step in turn_of:
            given[entry.step] = entry
        else:
            corrections.append(f"state at step {entry.step} ignored: not an agent turn")
    states: list[TurnState] = []
    current: EvidenceState = "missing"
    for step in turn_steps:
        found = given.get(step)
        accepted: tuple[Citation, ...] = ()
        if found is not None:
            wanted = found.state
            if STATE_VALUES[wanted] > STATE_VALUES[current]:
                accepted, refused = _citations(found.evidence, step, evidence, rule)
                corrections += refused
                if accepted:
                    current = wanted
                else:
                    corrections.append(f"step {step}: {wanted} not accepted (no valid "
                                       f"citation); stays {current}")
            else:
                current = wanted
        states.append(TurnState(turn=turn_of[step], step=step, state=current,
                                citations=accepted))
    values = [STATE_VALUES[s.state] for s in states]
    satisfied = answer.satisfied and any(v >= SATISFIED_AT for v in values)
    if answer.satisfied and not satisfied:
        corrections.append("satisfied not accepted: no turn reached supported with valid "
                           "evidence")
    responsibility = _responsibility(answer, turn_steps, values, satisfied, corrections)
    return CriterionVerdict(
        criterion_id=criterion_id, status="applicable", satisfied=satisfied,
        states=tuple(states), responsibility=responsibility,
        candidate_turns=tuple(turn_of[s] for s in candidates if s in turn_of),
        rationale=answer.rationale, corrections=tuple(corrections))


_REFUSED = {"": "not found", "unspecific": "is not specific (too short or too common)",
            "given": "only repeats what the agent was given",
            "harness": "is only the harness's status lines",
            "forged": "follows a line imitating a step header"}


def _citations(quotes: Sequence[Quote], step: int, evidence: dict[int, StepEvidence],
               rule: EvidenceRules) -> tuple[tuple[Citation, ...], list[str]]:
    accepted: list[Citation] = []
    refused: list[str] = []
    for quote in quotes:
        cited, text = quote.step, quote.quote
        if cited > step:
            refused.append(f"step {step}: citation of later step {cited} refused")
        elif (kind := evidence_kind(text, cited, evidence, rule)) != "output":
            why = _REFUSED.get(kind or "", f"is the agent's own {kind}, not an output")
            refused.append(f"step {step}: quote {why} in step {cited}: {text[:60]!r}")
        else:
            accepted.append(Citation(step=cited, quote=text))
    return tuple(accepted), refused


def _responsibility(answer: FineAnswer, turn_steps: Sequence[int], values: list[float],
                    satisfied: bool, corrections: list[str]) -> tuple[float, ...]:
    weights = [0.0] * len(turn_steps)
    if not satisfied:
        return tuple(weights)
    index = {step: i for i, step in enumerate(turn_steps)}
    for entry in answer.responsibility:
        if entry.step in index:
            weights[index[entry.step]] += entry.weight
        elif entry.weight > 0:
            corrections.append(f"responsibility on step {entry.step} ignored: not an agent "
                               "turn")
    total = sum(weights)
    if total <= 0:
        first = values.index(max(values))
        corrections.append(f"no responsibility given: all of it to turn {first + 1}")
        weights[first] = 1.0
        total = 1.0
    return tuple(w / total for w in weights)
