"""Acting with a skill, and the answer-style outcome evaluator (SkillRubric B.2, B.3, B.5).

The actor sees a skill's guidance in its system message and nothing else of the skill:
never its applicability text, its rubric or any verifier feedback.

The outcome evaluator scores a final answer written inside ``<answer>…</answer>`` (the last
such block counts): 1 for an exact match after normalisation (case, punctuation, articles,
whitespace), 1 for free-form numbers within ±5 % of the truth (only when both sides are a
bare number), optionally 1 when a model judges the two semantically equivalent; 0 when there
is no valid answer or none of these hold. It is independent of any rubric.
"""

from __future__ import annotations

import re
import string
import unicodedata
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from agentcredit.llm.client import Model
from agentcredit.llm.types import Message, ModelFailure
from agentcredit.schema import Skill

ANSWER = re.compile(r"<answer>(.*?)</answer>", re.DOTALL | re.IGNORECASE)
_NUMBER = re.compile(r"^[-+]?[$€£]?\s*(\d{1,3}(?:,\d{3})+|\d+)?(\.\d+)?\s*%?$")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation.replace(".", "").replace("-", ""))
Reason = Literal["exact", "numeric", "semantic", "mismatch", "no_answer"]


def guidance_block(skill: Skill) -> str:
    """The text an actor is given: the skill's guidance, marked as non-prescriptive."""
    return (f"<skill name=\"{skill.id}\">\nGuidance from a skill that fits this task. It "
            "describes goals, not a fixed path: any other way that reaches the same "
            f"evidence is as good.\n\n{skill.guidance_text().rstrip()}\n</skill>")


def with_guidance(messages: list[dict[str, Any]], skill: Skill) -> list[dict[str, Any]]:
    """Chat messages with the skill's guidance appended to the system message (or a new
    system message first); the input list is not changed."""
    block = guidance_block(skill)
    if messages and messages[0].get("role") == "system" and isinstance(
            messages[0].get("content"), str):
        first = {**messages[0], "content": f"{messages[0]['content'].rstrip()}\n\n{block}"}
        return [first, *messages[1:]]
    return [{"role": "system", "content": block}, *messages]


def extract_answer(text: str) -> str | None:
    """The last ``<answer>`` block's text, or None when there is no non-empty one.

    >>> extract_answer("think... <answer> 42 </answer>")
    '42'
    >>> extract_answer("no tags") is None
    True
    """
    found = [m.strip() for m in ANSWER.findall(text)]
    return found[-1] if found and found[-1] else None


def normalize_answer(text: str) -> str:
    """Lower case, NFKC, no punctuation (but decimal points and hyphens), no articles.

    >>> normalize_answer("  The Sri-Lanka  team! ")
    'sri-lanka team'
    """
    value = unicodedata.normalize("NFKC", text).lower().translate(_PUNCT)
    value = _ARTICLES.sub(" ", value)
    return " ".join(value.split()).strip(".")


def parse_number(text: str) -> float | None:
    """A bare number (thousands separators, a currency sign or % allowed), else None.

    >>> parse_number("$1,234.5"), parse_number("12 apples")
    (1234.5, None)
    """
    value = text.strip()
    match = _NUMBER.match(value)
    if not match or not (match.group(1) or match.group(2)):
        return None
    digits = re.sub(r"[^\d.\-+]", "", value)
    try:
        return float(digits)
    except ValueError:
        return None


@dataclass(frozen=True)
class AnswerScore:
    """The outcome of one response."""

    score: float
    reason: Reason
    answer: str | None


def score_answer(response: str, truth: str, *, tolerance: float = 0.05) -> AnswerScore:
    """Exact match after normalisation, or ±tolerance for bare numbers (no model).

    >>> score_answer("<answer>67.9</answer>", "67.86").reason
    'numeric'
    >>> score_answer("<answer>75</answer>", "66").score
    0.0
    """
    answer = extract_answer(response)
    if answer is None:
        return AnswerScore(0.0, "no_answer", None)
    if normalize_answer(answer) == normalize_answer(truth):
        return AnswerScore(1.0, "exact", answer)
    mine, theirs = parse_number(answer), parse_number(truth)
    if mine is not None and theirs is not None:
        close = mine == theirs if theirs == 0 else abs(mine - theirs) <= tolerance * abs(theirs)
        if close:
            return AnswerScore(1.0, "numeric", answer)
    return AnswerScore(0.0, "mismatch", answer)


class Equivalence(BaseModel):
    """The semantic-equivalence judge's answer."""

    equivalent: bool
    rationale: str = ""


async def score_answer_semantic(response: str, truth: str, model: Model | None, *,
                                question: str = "", tolerance: float = 0.05) -> AnswerScore:
    """:func:`score_answer`, then (on a mismatch) a model's semantic-equivalence check.

    A failed model call keeps the mismatch (0): it never turns into credit.
    """
    first = score_answer(response, truth, tolerance=tolerance)
    if first.reason != "mismatch" or model is None or first.answer is None:
        return first
    if parse_number(first.answer) is not None and parse_number(truth) is not None:
        return first  # numbers are judged by the tolerance alone
    prompt = (f"QUESTION: {question or '(not given)'}\nREFERENCE ANSWER: {truth}\n"
              f"CANDIDATE ANSWER: {first.answer}\n\nDoes the candidate answer mean the same "
              "as the reference answer (same entity, value or claim; wording may differ)? "
              'Answer as JSON: {"equivalent": true|false, "rationale": "..."}')
    result = await model.generate([Message(role="user", content=prompt)], schema=Equivalence)
    if isinstance(result, ModelFailure) or result.parsed is None:
        return first
    if Equivalence.model_validate(result.parsed).equivalent:
        return AnswerScore(1.0, "semantic", first.answer)
    return first
