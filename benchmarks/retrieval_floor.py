"""The retrieval floor: top-1 scores of a task's own skill versus the nearest unrelated one.

One bank of every Agent Skills folder under ``../shared/corpus/skillsbench/skills``. Three
populations of top-1 scores under the default (lexical) ranker:

- own: each SkillsBench task that ships skills, when its top-1 is one of its own skills;
- held out: the same tasks against the bank without their own skills (the nearest skill of
  another task: what a task with no skill of its own gets);
- out of domain: the 89 Terminal-Bench 2.0 tasks (no SkillsBench skill was written for them).

Prints their quantiles and, for candidate floors, the share of own hits kept and of the
others turned away; the floor shipped (``RETRIEVAL_FLOOR``) is printed with them.

    python benchmarks/retrieval_floor.py
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np

from agentcredit.formats import load
from agentcredit.skills.agent_skills import import_paths
from agentcredit.skills.bank import make_bank
from agentcredit.skills.embed import make_embedder
from agentcredit.skills.library import resolve_ids
from agentcredit.skills.ranking import RETRIEVAL_FLOOR, expected_from_lineage, retrieve

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


def top1(bank, tasks, embedder):  # type: ignore[no-untyped-def]
    return asyncio.run(retrieve(bank, tasks, embedder))


def main() -> None:
    read = import_paths([CORPUS / "skillsbench" / "skills"])
    skills = resolve_ids(read.skills).skills
    bank = make_bank(skills, benchmark=None, embedding="lexical", rules_version="1",
                     prompt_version="none")
    expected = expected_from_lineage(bank)
    tasks = [t for t in load([CORPUS / "skillsbench" / "tasks"]).tasks if t.id in expected]
    embedder = make_embedder("lexical")
    own = [r.best.score for r in top1(bank, tasks, embedder)
           if r.best is not None and r.best.skill_id in expected[r.task_id]]
    held: list[float] = []
    for task in tasks:
        others = make_bank([s for s in skills if s.id not in expected[task.id]], benchmark=None,
                           embedding="lexical", rules_version="1", prompt_version="none")
        [result] = top1(others, [task], embedder)
        held += [result.best.score] if result.best is not None else []
    tb2 = load([CORPUS / "terminal-bench-2" / "tasks"]).tasks
    ood = [r.best.score for r in top1(bank, tb2, embedder) if r.best is not None]
    for name, values in (("own", own), ("held out", held), ("out of domain", ood)):
        q = np.quantile(values, [0.05, 0.25, 0.5, 0.75, 0.95])
        print(f"{name:14s} n={len(values):3d} quantiles 5/25/50/75/95%: "
              + " ".join(f"{v:.4f}" for v in q))
    for floor in sorted({*np.quantile(own, [0.02, 0.05, 0.1, 0.2]).round(4), 30.0,
                         RETRIEVAL_FLOOR["lexical"]}):
        kept = np.mean(np.asarray(own) >= floor)
        away = np.mean(np.asarray(held) < floor), np.mean(np.asarray(ood) < floor)
        mark = "  <- RETRIEVAL_FLOOR" if floor == RETRIEVAL_FLOOR["lexical"] else ""
        print(f"floor {floor:.4f}: own hits kept {kept:.2f}, held out turned away "
              f"{away[0]:.2f}, out of domain turned away {away[1]:.2f}{mark}")


if __name__ == "__main__":
    main()
