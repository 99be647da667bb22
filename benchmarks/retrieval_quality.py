"""Retrieval quality on a real skill library: top-1 / top-3 hit rates per backend.

Imports every Agent Skills folder under ``../shared/corpus/skillsbench/skills`` (as
``<task>/<skill>/SKILL.md``) into one bank, then retrieves for each SkillsBench task that
ships skills; a hit is a retrieved skill that the task itself ships. Every task is also asked
alone, and the script checks that its ranking is the same as when all tasks are asked at
once. Prints one line per backend (MiniLM only when the [embed] extra is installed); then,
for the default backend, the held-out protocol of issue 58: banks made of the skills of 24
tasks drawn at random (20 draws, seed 0), each task asked against its draw's bank.

    python benchmarks/retrieval_quality.py [--corpus DIR] [--backends lexical bm25 minilm]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path

from agentcredit.errors import AgentCreditError
from agentcredit.formats import load
from agentcredit.skills.agent_skills import import_paths
from agentcredit.skills.bank import make_bank
from agentcredit.skills.embed import make_embedder
from agentcredit.skills.library import resolve_ids
from agentcredit.skills.ranking import expected_from_lineage, hit_rates, retrieve


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path,
                        default=Path(__file__).resolve().parents[2] / "shared" / "corpus")
    parser.add_argument("--backends", nargs="+",
                        default=["lexical", "bm25", "minilm", "lexical+minilm"])
    args = parser.parse_args()
    skills_dir, tasks_dir = args.corpus / "skillsbench" / "skills", \
        args.corpus / "skillsbench" / "tasks"
    if not skills_dir.is_dir() or not tasks_dir.is_dir():
        raise SystemExit(f"no shared corpus at {args.corpus}")
    read = import_paths([skills_dir])
    bank = make_bank(resolve_ids(read.skills).skills, benchmark=None, embedding="lexical",
                     rules_version="1", prompt_version="none")
    expected = expected_from_lineage(bank)
    tasks = [t for t in load([tasks_dir]).tasks if t.id in expected]
    print(f"{len(read.skills)} skill folders -> {len(bank.skills)} skills; {len(tasks)} tasks "
          "that ship skills")
    with tempfile.TemporaryDirectory() as tmp:
        from agentcredit.llm.cache import ResponseCache

        cache = ResponseCache(Path(tmp) / "embeddings.sqlite")
        for spec in args.backends:
            try:
                embedder = make_embedder(spec, cache=cache)
                together = asyncio.run(retrieve(bank, tasks, embedder, k=3))
                alone = [asyncio.run(retrieve(bank, [t], embedder, k=3))[0] for t in tasks]
            except AgentCreditError as exc:
                print(f"{spec}: skipped ({exc})")
                continue
            rates = hit_rates(together, expected)
            stable = sum(a.matches == b.matches for a, b in zip(together, alone, strict=True))
            label = f"{spec} ({embedder.name}, field-aware BM25)" if spec == "lexical" \
                else f"{spec} ({embedder.name})"
            print(f"{label}: top-1 {rates['top1']:.3f}  top-3 {rates['top3']:.3f}  "
                  f"same ranking asked alone: {stable}/{len(tasks)}")
    _draws(read.skills, tasks, expected)


def _draws(skills: list, tasks: list, expected: dict[str, set[str]]) -> None:
    """Top-1 of the default ranker on banks of 24 random tasks' own skills."""
    import random
    import statistics

    rng, rates, sizes = random.Random(0), [], []
    resolved = resolve_ids(skills).skills
    for _ in range(20):
        drawn = rng.sample(tasks, min(24, len(tasks)))
        wanted = set().union(*(expected[t.id] for t in drawn))
        bank = make_bank([s for s in resolved if s.id in wanted], benchmark=None,
                         embedding="lexical", rules_version="1", prompt_version="none")
        found = asyncio.run(retrieve(bank, drawn, make_embedder("lexical"), k=3))
        rates.append(hit_rates(found, expected)["top1"])
        sizes.append(len(bank.skills))
    print(f"lexical on 20 draws of 24 tasks ({min(sizes)}-{max(sizes)} skills each): top-1 "
          f"median {statistics.median(rates):.3f}, lowest {min(rates):.3f}")


if __name__ == "__main__":
    main()
