"""Deterministic skill gates: pure functions, one code each, the checklist gates' mechanism.

Gates return :class:`~agentcredit.checklists.gates.GateFailure` lists (empty = passed):

- ``S-SHAPE``: id, title and applicability are not empty; criterion ids are unique.
- ``S-COUNT``: 3-5 guidance stages (unless the guidance is a verbatim SKILL.md body),
  3-5 rubric criteria, every weight positive and finite.
- ``S-LEAK``: no literal value from the source tasks' oracle material or the verifier's
  expected literals appears in the applicability, guidance or rubric (literals that the
  instruction itself states are not answers and are allowed; see
  :mod:`agentcredit.skills.leaks` for the literal kinds that are never answers).
- ``S-TOOL``: no rubric criterion names a tool or command seen in the teacher trials (or,
  for imported skills, invoked by the guidance's code): criteria are method-agnostic (see
  :mod:`agentcredit.skills.tool_names` for what a tool is and when a criterion names one).
- ``S-EVIDENCE``: every criterion says which observable output shows it met and which
  shows it not met, in words of its own (not a copy of the statement); see
  :func:`observable`.
- ``S-LINEAGE``: every skill traces to the trials (or files) it came from, and every trial
  id it names was an input of the build.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from agentcredit.schema import Skill
from agentcredit.schema.outcomes import GateFailure
from agentcredit.skills.leaks import find_leaks
from agentcredit.skills.tool_names import ToolSet, named_tools
from agentcredit.text import WORD, normalize_text

SHAPE = "S-SHAPE"
COUNT = "S-COUNT"
LEAK = "S-LEAK"
TOOL = "S-TOOL"
EVIDENCE = "S-EVIDENCE"
LINEAGE = "S-LINEAGE"
RULES_VERSION = "skill-gates-5"
# 5: a name counts where it is used as a tool ("skill module", `*.json`, languages pass)
MIN_PARTS, MAX_PARTS = 3, 5

_SHAPE_CUES = re.compile(r"\w\.[A-Za-z]{2,5}\b|/\w|\d|[\"'`“]|\b[A-Z]{2,}\b|\b[a-z]+[A-Z]\w*")
DISPLAY = frozenset({
    "shows", "show", "shown", "showing", "displays", "displayed", "prints", "printed",
    "print", "outputs", "output", "writes", "written", "wrote", "lists", "listed", "listing",
    "reports", "reported", "logs", "logged", "returns", "returned", "contains", "contain",
    "containing", "appears", "appear", "reads", "renders", "rendered", "saves", "saved",
    "produces", "produced", "creates", "created", "emits", "exits", "raises", "raised",
    "includes", "included", "lacks", "has", "have", "holds", "gives", "yields", "echoes",
    "states", "says", "exists", "visible", "missing", "absent", "present", "empty",
    "equals", "matches", "match", "mismatch", "differs", "opens", "fails", "passes",
})
RECORDED = frozenset({
    "declares", "declared", "declare", "claims", "claimed", "claim", "marks", "marked",
    "unmarked", "announces", "announced", "flags", "flagged", "labels", "labelled", "labeled",
    "ticked", "unticked", "checked", "unchecked", "pending", "recorded", "records",
})
"""Acts of stating and marking: they leave a record ("declared done", "marked complete")
and so are observable, but unlike :data:`DISPLAY` they do not make a state of mind
observable ("feels sure it marked everything")."""
ARTIFACTS = frozenset({
    "output", "file", "files", "log", "logs", "message", "messages", "error", "errors",
    "warning", "warnings", "traceback", "exception", "value", "values", "table", "tables",
    "row", "rows", "column", "columns", "cell", "cells", "sheet", "sheets", "workbook",
    "spreadsheet", "document", "documents", "page", "pages", "slide", "slides", "deck",
    "chart", "charts", "plot", "plots", "figure", "figures", "image", "images", "screenshot",
    "report", "json", "csv", "pdf", "docx", "xlsx", "pptx", "heading", "headings", "title",
    "titles", "section", "sections", "paragraph", "paragraphs", "bibliography", "citation",
    "citations", "reference", "references", "entry", "entries", "record", "records",
    "field", "fields", "key", "keys", "line", "lines", "text", "string", "strings", "number",
    "numbers", "count", "counts", "total", "totals", "sum", "score", "scores", "result",
    "results", "response", "answer", "listing", "directory", "folder", "path", "status",
    "code", "diff", "commit", "database", "query", "schema", "dataframe", "array", "matrix",
    "graph", "axis", "axes", "legend", "label", "labels", "caption", "font", "style",
    "format", "header", "headers", "footer", "comment", "comments", "annotation", "list",
    "item", "items", "summary", "email", "url", "link", "links", "timestamp", "date",
    "dates", "observation", "observations", "test", "tests", "check", "checks", "formula",
    "formulas", "plan", "plans", "solution", "transcript", "dialogue", "node", "nodes",
    "edge", "edges", "tree", "audio", "video", "frame", "frames", "pixel", "pixels",
    "coordinates", "attribute", "attributes", "element", "elements", "tag", "tags",
    "markup", "xml", "html", "yaml", "markdown", "command", "exit", "terminal", "console",
    "stdout", "stderr", "content", "contents", "name", "names", "id", "ids", "version",
    "size", "length", "width", "height", "order", "sequence", "unit", "units", "amount",
    "price", "metric", "metrics", "statistic", "statistics", "estimate", "estimates",
    "prediction", "predictions", "accuracy", "residual", "residuals", "rank",
    "ranking", "mean", "median", "coefficient", "coefficients", "correlation", "model",
    "parameters", "sample", "samples", "dataset", "data", "input", "inputs",
    "track", "tracks", "note", "notes", "author", "authors", "year", "doi", "isbn",
    "cluster", "clusters", "group", "groups", "category", "categories", "layout", "color",
    "colours", "colors", "border", "borders", "margin", "margins", "range", "ranges",
    "pivot", "macro", "cache", "request", "requests", "endpoint",
    "certificate", "signature", "hash", "checksum", "archive", "package", "build",
    "binary", "function", "class", "method", "variable", "config", "configuration",
    "setting", "settings", "step", "steps", "action", "actions", "goal", "state", "states",
    "phase", "phases", "checklist", "checklists", "checkbox", "checkboxes", "todo", "todos",
    "milestone", "milestones", "progress", "tracker",
})
MENTAL = re.compile(
    r"\b(?:understand\w*|understood|know|knows|knew|knowledge|realiz\w*|realis\w*|"
    r"believ\w*|think\w*|thought\w*|intend\w*|intent\w*|consider\w*|aware\w*|"
    r"remember\w*|feel\w*|felt|wants?|wanted|confiden\w*|appreciat\w*|careful\w*|"
    r"mindful\w*|attentive\w*|diligen\w*|wonder\w*|reasoning|judge?ment|intuiti\w*|"
    r"insight\w*|grasp\w*|familiar\w*|comfortable|motivat\w*|strives?|mental\w*)\b",
    re.IGNORECASE)


def _fail(code: str, item_id: str | None, message: str) -> GateFailure:
    return GateFailure(code, item_id, message, scope="skill")


@dataclass(frozen=True)
class GateContext:
    """What the gates check a skill against (empty sets = nothing to check)."""

    leaks: Mapping[str, str] = field(default_factory=dict)
    tools: ToolSet = field(default_factory=dict)
    trial_ids: frozenset[str] | None = None
    require_trials: bool = True


def gate_shape(skill: Skill) -> list[GateFailure]:
    out = [_fail(SHAPE, None, f"empty {name}") for name, value in
           (("id", skill.id), ("title", skill.title), ("applicability", skill.applicability))
           if not value.strip()]
    ids = [c.id for c in skill.rubric or ()]
    out += [_fail(SHAPE, i, "duplicate criterion id") for i in
            sorted({i for i in ids if ids.count(i) > 1})]
    out += [_fail(SHAPE, c.id, "empty criterion statement")
            for c in skill.rubric or () if not c.statement.strip()]
    if skill.body is None:
        out += [_fail(SHAPE, None, f"guidance stage {n} has an empty name or action")
                for n, s in enumerate(skill.guidance, 1)
                if not s.name.strip() or not s.action.strip()]
    return out


def gate_count(skill: Skill) -> list[GateFailure]:
    out: list[GateFailure] = []
    if skill.body is None and not MIN_PARTS <= len(skill.guidance) <= MAX_PARTS:
        out.append(_fail(COUNT, None, f"{len(skill.guidance)} guidance stages; "
                               f"need {MIN_PARTS}-{MAX_PARTS}"))
    if skill.rubric is not None:
        if not MIN_PARTS <= len(skill.rubric) <= MAX_PARTS:
            out.append(_fail(COUNT, None, f"{len(skill.rubric)} rubric criteria; "
                                   f"need {MIN_PARTS}-{MAX_PARTS}"))
        out += [_fail(COUNT, c.id, f"weight {c.weight} is not positive and finite")
                for c in skill.rubric if not (math.isfinite(c.weight) and c.weight > 0)]
    return out


def _texts(skill: Skill) -> list[tuple[str, str]]:
    parts = [("applicability", skill.applicability), ("title", skill.title)]
    parts += [(f"guidance stage {n}", f"{s.name} {s.action}")
              for n, s in enumerate(skill.guidance, 1)]
    if skill.body is not None:
        parts.append(("guidance body", skill.body))
    parts += [(f"criterion {c.id}", f"{c.statement} {c.evidence} {c.failure}")
              for c in skill.rubric or ()]
    return parts


def gate_leak(skill: Skill, leaks: Mapping[str, str]) -> list[GateFailure]:
    out: list[GateFailure] = []
    for where, text in _texts(skill):
        for leak in find_leaks(text, dict(leaks)):
            out.append(_fail(LEAK, None, f"{where} contains {leak.literal!r} ({leak.rule}), a "
                                   f"literal of {leak.source} that the instruction does not "
                                   "state"))
    return out


def gate_tool(skill: Skill, tools: ToolSet) -> list[GateFailure]:
    out: list[GateFailure] = []
    for criterion in skill.rubric or ():
        text = f"{criterion.statement} {criterion.evidence} {criterion.failure}"
        named = named_tools(text, tools)
        if named:
            out.append(_fail(TOOL, criterion.id, f"names {'; '.join(n.describe() for n in named)}"
                                   ": criteria must not depend on a specific tool or command"))
    return out


def observable(text: str) -> str | None:
    """Why a criterion's evidence or failure text names nothing one could observe in a
    log, or None when it does.

    A text names something observable when it names an artifact (a file, table, message,
    value, page, ...), an act of showing (shows, prints, lists, contains, ...) or a concrete
    token (a path, a file name, a number, a quoted string, an ALL-CAPS word). A text about the
    agent's state of mind (understands, is confident, considered) is not observable unless it
    also says what shows it.

    >>> observable("The bibliography lists every DOI once.") is None
    True
    >>> observable("The agent understands the PDF layout.")
    'describes a state of mind or intent, not an output'
    >>> observable("The task is declared done while phases are still pending.") is None
    True
    >>> observable("The agent feels sure it marked everything.")
    'describes a state of mind or intent, not an output'
    >>> observable("The approach is sound and thorough.")
    'names nothing observable (an output, file, value, message, ...)'
    """
    words = WORD.findall(text.lower())
    if len(words) < 3:
        return "is missing or too short"
    vocabulary = set(words)
    if MENTAL.search(text) and not DISPLAY & vocabulary:
        return "describes a state of mind or intent, not an output"
    if not (ARTIFACTS | DISPLAY | RECORDED) & vocabulary and not _SHAPE_CUES.search(text):
        return "names nothing observable (an output, file, value, message, ...)"
    return None


def gate_evidence(skill: Skill) -> list[GateFailure]:
    out: list[GateFailure] = []
    for c in skill.rubric or ():
        for name, text in (("evidence", c.evidence), ("failure", c.failure)):
            why = observable(text)
            if why is not None:
                out.append(_fail(EVIDENCE, c.id, f"{name} {why}: {text[:80]!r}"))
        if c.evidence.strip() and normalize_text(c.evidence) == normalize_text(c.statement):
            out.append(_fail(EVIDENCE, c.id, "evidence repeats the statement"))
    return out


def gate_lineage(skill: Skill, trial_ids: frozenset[str] | None,
                 require_trials: bool) -> list[GateFailure]:
    lineage = skill.lineage
    if lineage.stage == "import":
        return [] if lineage.sources else [_fail(LINEAGE, None, "no source file")]
    out: list[GateFailure] = []
    if require_trials and not lineage.trial_ids:
        out.append(_fail(LINEAGE, None, "traces to no trial"))
    if not lineage.source_tasks:
        out.append(_fail(LINEAGE, None, "traces to no task"))
    if trial_ids is not None:
        unknown = sorted(set(lineage.trial_ids) - trial_ids)
        if unknown:
            out.append(_fail(LINEAGE, None, f"unknown trial ids: {', '.join(unknown[:5])}"))
    return out


def run_skill_gates(skill: Skill, context: GateContext) -> list[GateFailure]:
    """Every skill gate, in a fixed order."""
    return [*gate_shape(skill), *gate_count(skill), *gate_leak(skill, context.leaks),
            *gate_tool(skill, context.tools), *gate_evidence(skill),
            *gate_lineage(skill, context.trial_ids, context.require_trials)]
