"""The SkillBank jobs as library calls: build a bank, import skills into one, retrieve.

Each job is an async core with a sync wrapper, writes the same files as its command
(``agentcredit skills build|import|retrieve``) and returns a result the command prints.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcredit.errors import AgentCreditError, ConfigError, IdConflict, NothingToDo
from agentcredit.formats import TrialStream, load
from agentcredit.llm.cache import ResponseCache, default_cache_path
from agentcredit.llm.client import ModelClient
from agentcredit.llm.spec import ModelLike, ModelSpec, client_for, concurrency_of
from agentcredit.runs.status import tell_progress
from agentcredit.schema import ReadError, Skill, SkillBank, Task
from agentcredit.skills.agent_skills import FILES_DIR, import_paths, store_files
from agentcredit.skills.bank import BANK_NAME, freeze_bank, load_bank, make_bank
from agentcredit.skills.build import BankBuildReport, BuildOptions
from agentcredit.skills.build import build_bank as build_bank_async
from agentcredit.skills.embed import Embedder, make_embedder
from agentcredit.skills.gates import RULES_VERSION
from agentcredit.skills.importing import RubricReport, derive_rubrics
from agentcredit.skills.library import content_hash, resolve_ids
from agentcredit.skills.prompts import PROMPT_VERSION
from agentcredit.skills.ranking import Retrieval
from agentcredit.skills.ranking import retrieve as retrieve_async
from agentcredit.skills.teachers import Teachers

Step = Callable[[str], None]


@dataclass
class ImportResult:
    """What an import read, how ids were resolved, the rubrics derived, the bank written."""

    bank: SkillBank
    imported: list[Skill]
    read_errors: list[tuple[str, str]]
    id_table: list[tuple[str, str, str]]
    rubrics: RubricReport | None
    usage: dict[str, Any] | None = None
    cache_path: Path | None = None


@dataclass
class BuildResult:
    """A build's report with what it read and which model and embedding it used."""

    report: BankBuildReport
    read_errors: list[ReadError]
    trials: int
    tasks: int
    model: str
    embedding: str
    usage: dict[str, Any] = field(default_factory=dict)
    cache_path: Path | None = None


async def _closing(client: ModelClient | None, owned: bool) -> None:
    if owned and client is not None:
        await client.aclose()


def import_skills(paths: Sequence[Path | str], out: Path | str, **options: Any) -> ImportResult:
    """Import Agent Skills folders (any depth) and SkillRL JSON files into the bank ``out``.

    The synchronous wrapper of ``import_skills_async`` (same arguments). Without a
    model, skills are kept with ``rubric: none``.

    Examples:
        >>> import tempfile
        >>> bank = Path(tempfile.mkdtemp()) / "bank"
        >>> result = import_skills(["examples/skills"], bank)
        >>> sorted(s.id for s in result.bank.skills), (bank / "bank.json").exists()
        (['config-schema-migration', 'log-level-filtering', 'tabular-aggregation'], True)
    """
    return asyncio.run(import_skills_async(paths, out, **options))


async def import_skills_async(
    paths: Sequence[Path | str], out: Path | str, *, model: ModelLike | None = None,
    force: bool = False, progress: Step | None = None,
) -> ImportResult:
    """Read every input, resolve ids before any model call, derive gated rubrics (with a
    model), keep each skill's folder and freeze the bank.

    Raises:
        IdConflict: a bank skill's own source now holds other content and ``force`` is off.
        ConfigError: an unusable option or bank, or a skill folder that cannot be kept.
    """
    out = Path(out)
    client = client_for(model, default_cache=out / "responses.sqlite")
    concurrency = concurrency_of(model, default=4)
    try:
        existing = load_bank(out) if (out / BANK_NAME).exists() else None
        read = import_paths([Path(p) for p in paths])
        resolution = resolve_ids(read.skills, existing.skills if existing else (),
                                 force=force, want_rubrics=client is not None)
        if resolution.conflicts:
            raise IdConflict(f"{', '.join(resolution.conflicts)} changed since they were "
                             "imported from the same files: --force replaces them",
                             resolution.table, read.errors)
        skills, rubrics = resolution.skills, None
        if client is not None and skills:
            tell_progress(progress, client, len(skills))
            skills, rubrics = await derive_rubrics(skills, client, concurrency=concurrency,
                                                   progress=progress)
    finally:
        await _closing(client, client is not model)
    bank = _merge_into(existing, skills, force, client)
    try:
        for imported in skills:  # the whole folder of each new skill, kept with the bank
            if imported.files and imported.lineage.sources:
                store_files(imported, Path(imported.lineage.sources[0]).parent,
                            out / FILES_DIR)
    except (AgentCreditError, OSError, ValueError) as exc:
        raise ConfigError(f"could not keep a skill's files: {exc}") from None
    freeze_bank(bank, out)
    return ImportResult(bank=bank, imported=skills, read_errors=read.errors,
                        id_table=resolution.table, rubrics=rubrics,
                        usage=client.ledger.summary() if client else None,
                        cache_path=client.cache.path if client is not None and
                        client.cache is not None else None)


def _merge_into(existing: SkillBank | None, skills: list[Skill], force: bool,
                client: ModelClient | None) -> SkillBank:
    kept = list(existing.skills) if existing else []
    old = {s.id: s for s in kept}
    if not force:  # ids were resolved: a shared id here is the same skill, re-imported
        skills = [_keep_rubric(old.get(s.id), s) for s in skills]
    new_ids = {s.id for s in skills}
    merged = [s for s in kept if s.id not in new_ids] + skills
    return make_bank(merged, benchmark=existing.benchmark if existing else None,
                     embedding=existing.embedding if existing else "lexical-tfidf-1",
                     rules_version=RULES_VERSION,
                     prompt_version=existing.prompt_version if existing else
                     (PROMPT_VERSION if client else "none"),
                     synthesizer=existing.synthesizer if existing else
                     (client.model_id if client else None),
                     tau=existing.tau if existing else None)


def _keep_rubric(old: Skill | None, new: Skill) -> Skill:
    """Re-importing the same skill adds a rubric it lacked and never drops one it has."""
    if old is None or content_hash(old) != content_hash(new):
        return new
    if new.rubric is None or old.rubric is not None:
        return old
    return new


def build_bank(trials: Sequence[Path | str], tasks: Sequence[Path | str], out: Path | str, *,
               model: ModelLike, **options: Any) -> BuildResult:
    """Distil a dual-view SkillBank from teacher trials (the four resumable stages).

    The synchronous wrapper of ``build_bank_from_paths`` (same arguments).

    Examples:
        >>> import json, tempfile
        >>> from agentcredit.llm import register_script
        >>> def teacher(messages, schema):  # a scripted synthesizer, for the example only
        ...     return json.dumps(ANSWERS[schema["title"]])
        >>> ANSWERS = {"TeacherAnalysis": {"recurring_strategies": ["read first"],
        ...     "effective_decisions": ["check"], "failure_patterns": ["guessing"],
        ...     "transferable_techniques": ["read back"], "summary": "read, act, check"},
        ...     "ConsolidatedSkill": {"title": "t", "shared_strategies": ["read"],
        ...     "alternatives": [], "disagreements": [], "pitfalls": [], "checkpoints": ["c"]},
        ...     "DualViewDraft": {"title": "Careful file work", "applicability": "Files to change.",
        ...     "guidance": [{"name": n, "action": "Do it."} for n in ("Read", "Act", "Check")],
        ...     "rubric": [{"statement": f"Step {i} done.", "evidence": "An output shows the file.",
        ...     "failure": "No output shows the file.", "weight": 1.0} for i in (1, 2, 3)]},
        ...     "MergeAnswer": {"coherent": False, "reason": "separate tasks", "merged": None}}
        >>> register_script("doc-teacher", teacher)
        >>> out = Path(tempfile.mkdtemp()) / "bank"
        >>> result = build_bank(["examples/jobs"], ["examples/tasks"], out,
        ...                     model="scripted/doc-teacher")
        >>> result.trials, len(result.report.bank.skills), (out / "bank.json").exists()
        (8, 3, True)
    """
    return asyncio.run(build_bank_from_paths(trials, tasks, out, model=model, **options))


async def build_bank_from_paths(
    trials: Sequence[Path | str], tasks: Sequence[Path | str], out: Path | str, *,
    model: ModelLike, tau: float = 0.7, embed: str = "lexical",
    budget_tokens: int = 24_000, progress: Step | None = None,
) -> BuildResult:
    """Read the trials and tasks, then run (or resume) the build into ``out``.

    Raises:
        NothingToDo: no trial was read, or none has steps and its task among ``tasks``.
        ConfigError: an unusable model or embedding setting.
    """
    out = Path(out)
    client = client_for(model, default_cache=out / "responses.sqlite")
    assert client is not None
    concurrency = concurrency_of(model)
    try:
        embedder = make_embedder(embed, cache=client.cache,
                                 base_url=model.base_url if isinstance(model, ModelSpec) else None)
        # one read, each trial dropped as it passes unless its prompt shows it
        stream = TrialStream([*map(Path, trials), *map(Path, tasks)])
        gathered = Teachers.gather(stream)
        loaded = stream.result
        if not gathered.read:
            raise NothingToDo("no trials were read", loaded.errors)
        teachers = gathered.for_tasks(loaded.tasks)
        if not teachers.usable:
            raise NothingToDo(f"none of the {gathered.read} trials has both steps and its "
                              "task among --tasks (give the folders of the trials' tasks)",
                              loaded.errors)
        options = BuildOptions(model=client, embedder=embedder, tau=tau,
                               budget_tokens=budget_tokens, concurrency=concurrency)
        report = await build_bank_async(teachers, loaded.tasks, out, options,
                                        progress=progress)
    finally:
        await _closing(client, client is not model)
    return BuildResult(report=report, read_errors=loaded.errors, trials=gathered.read,
                       tasks=len(loaded.tasks), model=client.model_id,
                       embedding=embedder.name, usage=client.ledger.summary(),
                       cache_path=client.cache.path if client.cache is not None else None)


def embedder_for(embed: str | Embedder, *, base_url: str | None = None,
                 cache: Path | str | None = None) -> Embedder:
    """The embedder an ``--embed`` name asks for; model-backed ones cache their vectors in
    ``cache`` (default: the shared response cache)."""
    if not isinstance(embed, str):
        return embed
    store = None if embed in ("lexical", "bm25") else ResponseCache(cache or default_cache_path())
    return make_embedder(embed, cache=store, base_url=base_url)


def retrieve(bank: SkillBank | Path | str, tasks: Sequence[Task | Path | str], *, k: int = 1,
             embed: str | Embedder = "lexical", base_url: str | None = None,
             cache: Path | str | None = None) -> list[Retrieval]:
    """The ``k`` best skills of ``bank`` (a bank or its folder) for each task (records, or
    folders and files to read them from). Term weights come from the bank alone.

    Examples:
        >>> import tempfile
        >>> bank = import_skills(["examples/skills"], tempfile.mkdtemp()).bank
        >>> for r in retrieve(bank, ["examples/tasks"]):
        ...     print(r.task_id, "->", r.best.skill_id)
        csv-sales-summary -> tabular-aggregation
        json-config-migrate -> config-schema-migration
        log-error-filter -> log-level-filtering
    """
    skills = bank if isinstance(bank, SkillBank) else load_bank(Path(bank))
    records = [t for t in tasks if isinstance(t, Task)]
    paths = [Path(t) for t in tasks if not isinstance(t, Task)]
    if paths:
        records += load(paths).tasks
    embedder = embedder_for(embed, base_url=base_url, cache=cache)
    return asyncio.run(retrieve_async(skills, records, embedder, k=k))
