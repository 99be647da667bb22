"""``agentcredit skills show|retrieve|history``: reading a SkillBank."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from agentcredit.cli.console import fail, open_bank, print_read_errors
from agentcredit.cli.options import BankArg, BaseUrlOpt, EmbedOpt
from agentcredit.cli.text import q
from agentcredit.errors import AgentCreditError
from agentcredit.formats import load
from agentcredit.schema import Skill, SkillBank
from agentcredit.skills.agent_skills import FILES_DIR, export_skill_md, to_skillrl
from agentcredit.skills.jobs import embedder_for, retrieve
from agentcredit.skills.ranking import (
    Retrieval,
    expected_from_lineage,
    hit_rates,
    read_expected,
)


def show(bank_dir: BankArg,
         skill_id: Annotated[str | None, typer.Argument(help="One skill, in full.")] = None,
         ) -> None:
    """List a bank's skills, or show one skill's applicability, guidance, rubric, lineage."""
    console = Console()
    bank = open_bank(console, bank_dir)
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
        raise fail(console, f"no skill {skill_id!r} in {bank_dir}{hint}")
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
    """Rank a bank's skills for each task (BM25 for lexical and bm25, else the cosine of
    the embeddings)."""
    console = Console()
    bank = open_bank(console, bank_dir)
    loaded = load(tasks)
    print_read_errors(console, loaded.errors)
    try:
        embedder = embedder_for(embed, base_url=base_url, cache=cache)
        ranked = retrieve(bank, loaded.tasks, k=max(k, 3) if expect else k, embed=embedder)
    except AgentCreditError as exc:
        raise fail(console, str(exc)) from None
    name = embedder.name
    rates = _hit_rates(console, bank, ranked, expect)
    results = [Retrieval(r.task_id, r.matches[:k]) for r in ranked]
    if as_json:
        payload: dict[str, Any] = {
            "bank": bank.hash, "embedding": name, "k": k,
            "tasks": [{"task_id": r.task_id, "matches": [
                {"skill_id": m.skill_id, "score": m.score} for m in r.matches]}
                for r in results]}
        if rates is not None:
            payload["evaluation"] = rates
        typer.echo(json.dumps(payload, indent=2))
        return
    label = {"lexical-tfidf-1": "lexical (field-aware BM25)"}.get(
        name, name if "bm25" in name or "+" in name else f"{name} (cosine)")
    table = Table(title=f"top {k} by {label}")
    for column in ("task", "rank", "skill", "score"):
        table.add_column(column)
    for r in results:
        for rank, m in enumerate(r.matches, 1):
            table.add_row(q(r.task_id if rank == 1 else ""), q(str(rank)), q(m.skill_id),
                          f"{m.score:.3f}")
    console.print(table)
    if rates is not None:
        console.print(f"{label}: top-1 hit rate {rates['top1']}, top-3 "
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
        raise fail(console, f"--expect {expect}: {exc}") from None
    return hit_rates(results, expected)


def history(
    bank_dir: BankArg,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Versions, text diffs, gate numbers and decisions of a bank's co-evolution."""
    import difflib

    console = Console()
    bank = open_bank(console, bank_dir)
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


def export(
    bank_dir: BankArg,
    out: Annotated[Path, typer.Option("--out", help="Folder (skill-md) or file (skillrl).")],
    fmt: Annotated[str, typer.Option("--format", help="skill-md or skillrl.")] = "skill-md",
) -> None:
    """Write the actor view: SKILL.md folders or SkillRL JSON (never rubrics or lineage)."""
    console = Console()
    bank = open_bank(console, bank_dir)
    if fmt == "skill-md":
        try:
            written = export_skill_md(list(bank.skills), out, bank_dir / FILES_DIR)
        except (AgentCreditError, ValueError) as exc:
            raise fail(console, str(exc)) from None
        console.print(f"wrote {len(written)} SKILL.md folders → {q(out)}")
    elif fmt == "skillrl":
        target = out / "skills.json" if out.is_dir() or not out.suffix else out
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(to_skillrl(list(bank.skills)), indent=2,
                                     ensure_ascii=False) + "\n", encoding="utf-8")
        console.print(f"wrote {len(bank.skills)} skills → {q(target)}")
    else:
        raise fail(console, f"unknown format {fmt!r} (skill-md or skillrl)")
