"""Running GCPC end to end: judging into a run store, and scoring it."""

from agentcredit.runs.judging import JudgeOptions, JudgeSummary, judge_trials
from agentcredit.store.scores import SCORE_COLUMNS, TrialScore, aggregate, run_scores

__all__ = ["SCORE_COLUMNS", "JudgeOptions", "JudgeSummary", "TrialScore", "aggregate",
           "judge_trials", "run_scores"]
