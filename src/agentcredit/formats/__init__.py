"""Readers for the formats benchmarks and agent harnesses write, chosen by content."""

from agentcredit.formats.join import join_warnings
from agentcredit.formats.load import LoadResult, TrialStream, load
from agentcredit.formats.trajectory_file import read_trajectory_file
from agentcredit.text import normalize_text

__all__ = ["LoadResult", "TrialStream", "join_warnings", "load", "normalize_text",
           "read_trajectory_file"]
