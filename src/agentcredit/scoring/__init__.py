"""Outcome fusion and metrics (pure)."""

from agentcredit.scoring.fusion import ENDPOINT_ID, Fused, fuse
from agentcredit.scoring.metrics import Score, mean, score

__all__ = ["ENDPOINT_ID", "Fused", "Score", "fuse", "mean", "score"]
