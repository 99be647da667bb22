"""Lexical retrieval: rank 1,000 skills for 1,000 tasks, top-1 (target: under 1 s).

Builds synthetic applicability texts and instructions (a 5,000-word vocabulary, 25-60
words each, seeded), runs the same ``retrieve`` the CLI uses with the lexical TF-IDF
backend, and prints the median time of repeats and its ratio to the 1 s target.

    python benchmarks/retrieval_speed.py [--skills 1000] [--tasks 1000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

import numpy as np

from agentcredit.schema import Lineage, Skill, Task
from agentcredit.skills.bank import make_bank
from agentcredit.skills.embed import LexicalEmbedder
from agentcredit.skills.ranking import retrieve


def _texts(rng: np.random.Generator, n: int, vocabulary: list[str]) -> list[str]:
    weights = 1.0 / np.arange(1, len(vocabulary) + 1)  # Zipf-like word frequencies
    weights /= weights.sum()
    return [" ".join(rng.choice(vocabulary, size=int(rng.integers(25, 61)), p=weights))
            for _ in range(n)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--skills", type=int, default=1000)
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    vocabulary = [f"w{i}" for i in range(5000)]
    skills = [Skill(id=f"s{i:04d}", title=f"s{i}", applicability=text,
                    lineage=Lineage(stage="import", sources=("bench",)))
              for i, text in enumerate(_texts(rng, args.skills, vocabulary))]
    tasks = [Task(id=f"t{i:04d}", instruction=text, benchmark="bench", source_path="-")
             for i, text in enumerate(_texts(rng, args.tasks, vocabulary))]
    bank = make_bank(skills, benchmark=None, embedding="lexical-tfidf-1", rules_version="-",
                     prompt_version="-")
    times = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        results = asyncio.run(retrieve(bank, tasks, LexicalEmbedder(), k=1))
        times.append(time.perf_counter() - start)
    assert len(results) == args.tasks and all(r.best is not None for r in results)
    median = statistics.median(times)
    print(f"{args.skills} skills x {args.tasks} tasks, lexical top-1: median {median:.3f} s "
          f"over {args.repeats} repeats (min {min(times):.3f} s)")
    print(f"ratio to the 1 s target: {median / 1.0:.3f} (below 1 meets it)")


if __name__ == "__main__":
    main()
