"""Judging checklist items from execution-log evidence."""

from agentcredit.evidence.quotes import check_quotes
from agentcredit.evidence.view import EvidenceView, render_evidence
from agentcredit.judging.llm_judge import JudgeResult, holistic_score, judge_trial
from agentcredit.judging.prompts import HOLISTIC_PROMPT_VERSION, JUDGE_PROMPT_VERSION
from agentcredit.judging.verifier_judge import verifier_judgments

__all__ = [
    "HOLISTIC_PROMPT_VERSION",
    "JUDGE_PROMPT_VERSION",
    "EvidenceView",
    "JudgeResult",
    "check_quotes",
    "holistic_score",
    "judge_trial",
    "render_evidence",
    "verifier_judgments",
]
