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

from agentcredit.schema import GuidanceStage, Lineage, RubricCriterion, Skill
from agentcredit.schema.outcomes import GateFailure
from agentcredit.skills.gates import GateContext, run_skill_gates
from agentcredit.skills.tool_names import ToolOrigin, ToolSet, guidance_tools

DATA = Path(__file__).resolve().parents[1] / "data" / "gate_corpus"
IMPORTED = DATA / "imported.yaml"
BUILT = DATA / "built.yaml"
ENGLISH = DATA / "english_words.yaml"
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


def _score_labelled(groups: Iterable[tuple[str, dict[str, str], dict[str, Any]]],
                    natural: Tally, tool: Tally) -> dict[str, Tally]:
    """Each group's natural criteria accepted; its planted tool names (S-TOOL) and
    non-observable texts (S-EVIDENCE) caught. A group is (name, its tools, its entry)."""
    unobservable = Tally("planted non-observable caught (S-EVIDENCE)")
    for name, tools, entry in groups:
        context = GateContext(tools=_toolset(tools), require_trials=False)
        for texts in entry.get("natural", ()):
            failures = gate_failures(texts, context)
            reasons = "; ".join(f"[{f.code}] {f.message}" for f in failures)
            natural.add(not failures, f"{name}: {texts[0]!r} -> {reasons}")
        for texts in entry.get("tool", ()):
            failures = gate_failures(texts, context)
            tool.add(any(f.code == "S-TOOL" for f in failures), f"{name}: {texts}")
        for texts in entry.get("unobservable", ()):
            failures = gate_failures(texts, context)
            unobservable.add(any(f.code == "S-EVIDENCE" for f in failures), f"{name}: {texts}")
    return {"natural": natural, "tool": tool, "unobservable": unobservable}


def score_imported() -> dict[str, Tally]:
    """Natural criteria accepted; planted tool names and non-observable texts caught."""
    tools = stored_tools()
    return _score_labelled(((e["path"], tools[e["path"]], e) for e in imported_entries()),
                           Tally("natural criteria accepted (all gates)"),
                           Tally("planted tool names caught (S-TOOL)"))


def english_groups() -> list[dict[str, Any]]:
    groups: list[dict[str, Any]] = yaml.safe_load(ENGLISH.read_text())["groups"]
    return groups


def score_english() -> dict[str, Tally]:
    """Criteria where a tool's name is a plain English word: accepted when the word is used
    in its everyday sense, caught by S-TOOL when it names the tool; and planted
    states of mind that use the same verbs (declared, marked, claimed), caught by
    S-EVIDENCE."""
    return _score_labelled(((g["name"], g["tools"] or {}, g) for g in english_groups()),
                           Tally("English-word criteria accepted (all gates)"),
                           Tally("English-word tool names caught (S-TOOL)"))


BUILD_CONTEXT = DATA / "build_context.json"
TRIALS = SKILLS.parent / "trials-more"
TASKS = SKILLS.parent / "tasks"


def built_entries() -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = yaml.safe_load(BUILT.read_text())["tasks"]
    return entries


def extract_build_context(corpus: Path = SKILLS.parent) -> dict[str, Any]:
    """What ``skills build`` over ``trials-more`` gates against: the tools its trials ran
    and, per task, the literals of its oracle and verifier that the instruction does not
    state."""
    from agentcredit.formats import load
    from agentcredit.formats.oracle import read_oracle
    from agentcredit.skills.leaks import leak_literals
    from agentcredit.skills.tool_names import seen_tools

    loaded = load([corpus / "trials-more", corpus / "tasks"])
    ids = {trial.task_id for trial in loaded.trials}
    leaks = {task.id: leak_literals(task, read_oracle(task)[0])
             for task in loaded.tasks if task.id in ids}
    return {"tools": {name: origin.kind for name, origin in
                      sorted(seen_tools(loaded.trials).items())},
            "leaks": dict(sorted(leaks.items()))}


def stored_build_context() -> dict[str, Any]:
    context: dict[str, Any] = json.loads(BUILD_CONTEXT.read_text())
    return context


def draft(entry: dict[str, Any]) -> dict[str, Any]:
    """The clean skill of a built-corpus entry as a dual-view answer (the model's JSON)."""
    clean = entry["clean"]
    return {"title": clean["title"], "applicability": clean["applicability"],
            "guidance": [{"name": n, "action": a} for n, a in clean["guidance"]],
            "rubric": [{"statement": s, "evidence": e, "failure": f, "weight": 1.0}
                       for s, e, f in clean["rubric"]]}


def _built_skill(task_id: str, clean: dict[str, Any]) -> Skill:
    return Skill(id=task_id, title=clean.get("title", "t"),
                 applicability=clean.get("applicability", "a"),
                 guidance=tuple(GuidanceStage(name=n, action=a)
                                for n, a in clean.get("guidance", [["n", "a"]])),
                 rubric=tuple(RubricCriterion(id=f"R{i}", statement=s, evidence=e,
                                              failure=f, weight=1.0)
                              for i, (s, e, f) in enumerate(clean.get("rubric", []), 1)),
                 lineage=Lineage(stage="dual-view", source_tasks=(task_id,),
                                 trial_ids=("corpus-trial",)))


def _parts(clean: dict[str, Any]) -> list[str]:
    """The gate's names for each part of a skill (as S-LEAK messages start)."""
    return ["title", "applicability",
            *(f"guidance stage {n}" for n in range(1, len(clean["guidance"]) + 1)),
            *(f"criterion R{n}" for n in range(1, len(clean["rubric"]) + 1))]


def _failed_part(failure: GateFailure) -> str:
    if failure.item_id is not None:
        return f"criterion {failure.item_id}"
    words = failure.message.split()
    for prefix, length in (("title", 1), ("applicability", 1), ("guidance stage", 3),
                           ("criterion", 2)):
        if failure.message.startswith(prefix):
            return " ".join(words[:length])
    return "skill"


def _planted(task_id: str, part: dict[str, Any]) -> Skill:
    [(kind, value)] = part.items()
    if kind == "criterion":
        return _built_skill(task_id, {"rubric": [value]})
    if kind == "stage":
        return _built_skill(task_id, {"guidance": [["stage", value]]})
    return _built_skill(task_id, {kind: value})


def score_built() -> dict[str, Tally]:
    """Clean parts accepted; planted leaks and tool names caught."""
    context_data = stored_build_context()
    tools = _toolset(context_data["tools"])
    natural = Tally("clean skill parts accepted (all gates)")
    leak = Tally("planted leaks caught (S-LEAK)")
    tool = Tally("planted tool names caught (S-TOOL)")
    for entry in built_entries():
        task_id = entry["id"]
        context = GateContext(leaks=context_data["leaks"][task_id], tools=tools,
                              require_trials=False)
        failures = [f for f in run_skill_gates(_built_skill(task_id, entry["clean"]), context)
                    if f.code not in ("S-COUNT", "S-LINEAGE")]
        failed = {_failed_part(f): f for f in failures}
        for part in _parts(entry["clean"]):
            natural.add(part not in failed, f"{task_id} {part}: "
                        f"{failed[part].code} {failed[part].message}" if part in failed else "")
        unattributed = [f for f in failures if _failed_part(f) not in _parts(entry["clean"])]
        for failure in unattributed:
            natural.add(False, f"{task_id}: [{failure.code}] {failure.message}")
        for part in entry.get("leak", ()):
            found = [f for f in run_skill_gates(_planted(task_id, part), context)
                     if f.code == "S-LEAK"]
            leak.add(bool(found), f"{task_id}: {part}")
        for texts in entry.get("tool", ()):
            found = [f for f in run_skill_gates(_built_skill(task_id, {"rubric": [texts]}),
                                                context) if f.code == "S-TOOL"]
            tool.add(bool(found), f"{task_id}: {texts}")
    return {"natural": natural, "leak": leak, "tool": tool}
