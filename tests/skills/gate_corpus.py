"""The labelled gate corpus (``tests/data/gate_corpus``): loading it and scoring the gates.

Shared by ``tests/skills/test_gate_corpus.py`` (which asserts the rates) and
``benchmarks/gate_corpus.py`` (which prints them). Each labelled text is run through the
real gates with the context the real command would give them; a text is *accepted* when no
gate fails on it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from agentcredit.checklists.gates import GateFailure
from agentcredit.schema import GuidanceStage, Lineage, RubricCriterion, Skill
from agentcredit.skills.gates import GateContext, run_skill_gates
from agentcredit.skills.tool_names import ToolOrigin, ToolSet, guidance_tools

DATA = Path(__file__).resolve().parents[1] / "data" / "gate_corpus"
IMPORTED = DATA / "imported.yaml"
BUILT = DATA / "built.yaml"
GUIDANCE_TOOLS = DATA / "guidance_tools.json"
SKILLS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "skillsbench" / "skills"


@dataclass
class Tally:
    """How many labelled texts of one kind the gates got right, and the misses."""

    label: str
    right: int = 0
    total: int = 0
    misses: list[str] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.right / self.total if self.total else 1.0

    def add(self, ok: bool, what: str) -> None:
        self.total += 1
        self.right += ok
        if not ok:
            self.misses.append(what)

    def line(self) -> str:
        return f"{self.label:<42} {self.right:>3}/{self.total:<3} = {self.rate:.3f}"


def imported_entries() -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = yaml.safe_load(IMPORTED.read_text())["skills"]
    return entries


def stored_tools() -> dict[str, dict[str, str]]:
    """Each corpus skill's guidance tools (name -> kind), as extracted when last refreshed."""
    tools: dict[str, dict[str, str]] = json.loads(GUIDANCE_TOOLS.read_text())
    return tools


def extract_tools(paths: Iterable[str], root: Path = SKILLS) -> dict[str, dict[str, str]]:
    """The guidance tools of each skill folder's SKILL.md body, read from the shared corpus."""
    from agentcredit.skills.agent_skills import parse_skill_md

    out: dict[str, dict[str, str]] = {}
    for path in paths:
        skill = parse_skill_md((root / path / "SKILL.md").read_text(), path, path)
        out[path] = {name: origin.kind for name, origin in
                     sorted(guidance_tools(skill.guidance_text()).items())}
    return out


def _toolset(kinds: dict[str, str]) -> ToolSet:
    return {name: ToolOrigin(kind, "in the guidance")  # type: ignore[arg-type]
            for name, kind in kinds.items()}


def _criterion(texts: list[str]) -> Skill:
    statement, evidence, failure = texts
    return Skill(id="s", title="corpus skill", applicability="corpus applicability",
                 guidance=(GuidanceStage(name="n", action="a"),),
                 rubric=(RubricCriterion(id="R1", statement=statement, evidence=evidence,
                                   failure=failure, weight=1.0),),
                 lineage=Lineage(stage="import", sources=("corpus",)))


def gate_failures(texts: list[str], context: GateContext) -> list[GateFailure]:
    """The gate failures of one criterion (the rubric/guidance count gates left out)."""
    return [f for f in run_skill_gates(_criterion(texts), context) if f.code != "S-COUNT"]


def score_imported() -> dict[str, Tally]:
    """Natural criteria accepted; planted tool names and non-observable texts caught."""
    tools = stored_tools()
    natural = Tally("natural criteria accepted (all gates)")
    tool = Tally("planted tool names caught (S-TOOL)")
    unobservable = Tally("planted non-observable caught (S-EVIDENCE)")
    for entry in imported_entries():
        context = GateContext(tools=_toolset(tools[entry["path"]]), require_trials=False)
        for texts in entry.get("natural", ()):
            failures = gate_failures(texts, context)
            reasons = "; ".join(f"[{f.code}] {f.message}" for f in failures)
            natural.add(not failures, f"{entry['path']}: {texts[0]!r} -> {reasons}")
        for texts in entry.get("tool", ()):
            failures = gate_failures(texts, context)
            tool.add(any(f.code == "S-TOOL" for f in failures), f"{entry['path']}: {texts}")
        for texts in entry.get("unobservable", ()):
            failures = gate_failures(texts, context)
            unobservable.add(any(f.code == "S-EVIDENCE" for f in failures),
                             f"{entry['path']}: {texts}")
    return {"natural": natural, "tool": tool, "unobservable": unobservable}
