"""The skill gates on natural text nobody wrote for them (issue 58): every prose sentence of
the 142 real ``SKILL.md`` files under ``../shared/corpus/skillsbench/skills``, read at run
time (nothing of the corpus is copied here).

- **S-TOOL**: each sentence as a rubric criterion's statement, against the tools the real
  trials of the corpus ran (``build_context.json``: harness calls such as ``Skill``, commands,
  modules). A refusal is a false positive unless the sentence really uses the tool; the
  uses a person confirmed by reading are listed in ``natural_tool_uses.yaml`` (skill folder
  -> tool names), every other refusal counts as false.
- **S-LEAK**: each sentence against the answers of *another* task (its oracle's and
  verifier's literals the instruction does not state): general skill text carries no
  unrelated task's answer, so every refusal is a false positive. (Against its own task a
  shipped skill may hold that task's literals on purpose: not a false positive to count.)
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from tests.skills.gate_corpus import DATA, SKILLS, stored_build_context

USES = DATA / "natural_tool_uses.yaml"
_FENCE = re.compile(r"```.*?```", re.S)
_BREAK = re.compile(r"\n\s*\n|\n(?=\s*[-*#|>\d])")
_BULLET = re.compile(r"^\s*(?:#+|[-*>]|\d+[.)])\s*")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*])")


@dataclass
class Refusals:
    """One gate's refusals of natural sentences: (folder, name or literal, sentence)."""

    gate: str
    sentences: int = 0
    refused: list[tuple[str, str, str]] = field(default_factory=list)
    confirmed: int = 0

    @property
    def false_positives(self) -> int:
        return len(self.refused) - self.confirmed

    def line(self) -> str:
        rate = self.false_positives / self.sentences if self.sentences else 0.0
        return (f"{self.gate:<7} refused {len(self.refused):>3} of {self.sentences} sentences; "
                f"{self.confirmed} confirmed uses; false positives {self.false_positives} "
                f"= {rate:.2%}")


def sentences(text: str) -> Iterator[str]:
    """The prose sentences of a SKILL.md (code blocks and table rows left out, list markers
    and headings stripped), five words or more."""
    for part in _BREAK.split(_FENCE.sub(" ", text)):
        part = _BULLET.sub("", part.strip()).replace("\n", " ")
        for sentence in _SENTENCE.split(part):
            if len(sentence.split()) >= 5 and not sentence.startswith("|"):
                yield sentence.strip()


def skill_texts(root: Path = SKILLS) -> Iterator[tuple[str, str]]:
    """(``<task>/<skill>``, sentence) for every sentence of every SKILL.md under ``root``."""
    from agentcredit.skills.agent_skills import parse_skill_md

    for path in sorted(root.glob("*/*/SKILL.md")):
        folder = f"{path.parent.parent.name}/{path.parent.name}"
        skill = parse_skill_md(path.read_text(encoding="utf-8"), folder, path.parent.name)
        for sentence in sentences(f"{skill.applicability}\n\n{skill.body or ''}"):
            yield folder, sentence


def tool_refusals(root: Path = SKILLS) -> Refusals:
    from agentcredit.skills.tool_names import ToolOrigin, named_tools

    tools = {name: ToolOrigin(kind, "in the corpus trials")  # type: ignore[arg-type]
             for name, kind in stored_build_context()["tools"].items()}
    uses: dict[str, dict[str, str]] = yaml.safe_load(USES.read_text())["uses"]
    out = Refusals("S-TOOL")
    for folder, sentence in skill_texts(root):
        out.sentences += 1
        named = ", ".join(n.name for n in named_tools(sentence, tools))
        if named:
            out.refused.append((folder, named, sentence))
            digest = hashlib.sha256(sentence.encode()).hexdigest()[:12]
            out.confirmed += uses.get(folder, {}).get(digest) == named
    return out


def leak_refusals(root: Path = SKILLS) -> Refusals:
    """Each sentence against the answers of another task (the next task with skills, in name
    order): general skill text that trips an unrelated task's literal is a false positive."""
    from agentcredit.formats import load
    from agentcredit.formats.oracle import read_oracle
    from agentcredit.skills.leaks import find_leaks, leak_literals

    texts = list(skill_texts(root))
    owners = sorted({folder.split("/", 1)[0] for folder, _ in texts})
    tasks = {t.id: t for t in load([root.parent / "tasks"]).tasks if t.id in owners}
    answers = {task_id: leak_literals(task, read_oracle(task)[0])
               for task_id, task in tasks.items()}
    other = {owner: owners[(n + 1) % len(owners)] for n, owner in enumerate(owners)}
    out = Refusals("S-LEAK")
    for folder, sentence in texts:
        literals = answers.get(other[folder.split("/", 1)[0]])
        if literals is None:
            continue
        out.sentences += 1
        found = find_leaks(sentence, literals)
        if found:
            out.refused.append((folder, ", ".join(x.literal for x in found), sentence))
    return out
