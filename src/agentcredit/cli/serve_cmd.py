"""``agentcredit serve``: the reward service for trainer workers (the ``serve`` extra)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from agentcredit.cli.console import fail
from agentcredit.cli.options import (
    BANK_CACHE,
    ChecklistsOpt,
    FloorOpt,
    RubricOpt,
    model_options,
)
from agentcredit.cli.text import q
from agentcredit.errors import AgentCreditError, PrerequisiteError
from agentcredit.llm.spec import ModelLike, ModelSpec


@model_options("cache", "no_cache", "rpm", "tpm", cache=BANK_CACHE, concurrency=64)
def serve(
    bank: Annotated[Path, typer.Option("--bank", help="Bank directory (holds bank.json).")],
    model: Annotated[str, typer.Option("--model", help="provider/model of the turn verifier.")],
    port: Annotated[int, typer.Option("--port", help="TCP port.")] = 8000,
    host: Annotated[str, typer.Option("--host", help="Interface to listen on.")] = "127.0.0.1",
    process_weight: Annotated[float, typer.Option(
        "--process-weight", help="λ in reward = outcome + λ·S.")] = 0.5,
    skill: Annotated[str | None, typer.Option(
        "--skill", help="Skill of samples that name none (default: top-1 retrieval).")] = None,
    rigging_penalty: Annotated[float, typer.Option(
        "--rigging-penalty", min=0.0, help="Subtracted from the reward of a sample whose "
        "actions rig the measurement (edits tests, shims a runner, ...); 0: only reported."
    )] = 0.0,
    unscored: Annotated[str, typer.Option(
        "--unscored", help="What /get_reward sends for a sample it cannot score: null, or "
        "fallback:<value> (OpenRLHF needs a number); the reason is in extra_logs.unscored."
    )] = "null",
    max_body_mb: Annotated[float, typer.Option(
        "--max-body-mb", min=0.001, help="Largest request body; bigger ones get 413.")] = 64.0,
    rubric: RubricOpt = "skill",
    checklists: ChecklistsOpt = None,
    floor: FloorOpt = None,
    spec: ModelSpec | None = None,
) -> None:
    """Serve SkillRubric rewards over HTTP: OpenRLHF's /get_reward, /turn_rewards, /health.
    The verifier's requests in flight (--concurrency, default 64) are shared by all requests."""
    console = Console()
    assert spec is not None
    try:
        app = build_app(bank, spec, process_weight=process_weight, skill=skill,
                        max_body_bytes=int(max_body_mb * 1e6), rigging_penalty=rigging_penalty,
                        unscored=unscored, rubric=rubric, checklists=checklists, floor=floor)
        import uvicorn
    except ImportError:
        raise fail(console, str(PrerequisiteError("uvicorn", "serve"))) from None
    except AgentCreditError as exc:
        raise fail(console, str(exc)) from None
    cache = app.state.cache_path
    console.print(f"serving {q(bank)} with {q(model)} on http://{q(host)}:{q(port)} "
                  "(POST /get_reward, POST /turn_rewards, GET /health, GET /openapi.json); "
                  f"a sample it cannot score gets {q(unscored)}, one whose process part "
                  "cannot be scored its outcome alone (extra_logs says why); "
                  + (f"response cache {q(cache)}: this node's own (replicas on other nodes "
                     "keep theirs; the cache key makes their answers alike)" if cache else
                     "no response cache") + "; Ctrl-C stops after the requests in flight",
                  soft_wrap=True)
    uvicorn.run(app, host=host, port=port, log_level="warning")


def build_app(bank: Path, model: ModelLike, *, process_weight: float = 0.5,
              skill: str | None = None, max_body_bytes: int | None = None,
              rigging_penalty: float = 0.0, unscored: str = "null", rubric: str = "skill",
              checklists: Path | None = None, floor: float | None = None) -> Any:
    """The service's ASGI app: one bank, the frozen checklists (``rubric`` checklist or
    both), one verifier client (cache, limits) for all; the cache defaults to the bank's
    ``responses.sqlite``."""
    try:
        from agentcredit.serve.app import make_app
    except ImportError:
        raise PrerequisiteError("starlette", "serve") from None
    from agentcredit.db import network_filesystem
    from agentcredit.llm.spec import client_for
    from agentcredit.rewards.hooks import SkillRubricReward, UnscoredPolicy, _checklists
    from agentcredit.skills.bank import load_bank

    if rubric != "skill" and checklists is None:
        raise AgentCreditError(f"--rubric {rubric} needs --checklists DIR (the folder "
                               "`agentcredit checklists build` froze them in)")
    frozen = _checklists(str(checklists)) if checklists is not None else {}

    loaded = load_bank(bank)
    if skill is not None and loaded.get(skill) is None:
        raise AgentCreditError(f"no skill {skill!r} in {bank}")
    client = client_for(model, default_cache=bank / "responses.sqlite")
    assert client is not None
    cache = client.cache.path if client.cache is not None else None
    if cache is not None and (shared := network_filesystem(cache)):
        raise AgentCreditError(
            f"the response cache {cache} is on {shared}, a network filesystem: SQLite cannot "
            "be shared between machines there; give each node a local --cache, or --no-cache")
    reward = SkillRubricReward(bank=loaded, verifier=client, process_weight=process_weight,
                               rigging_penalty=rigging_penalty, checklists=frozen,
                               rubric=rubric)  # type: ignore[arg-type]
    policy = UnscoredPolicy.parse(unscored)
    limits = {} if max_body_bytes is None else {"max_body_bytes": max_body_bytes}
    app = make_app(reward, skill=skill, unscored=policy, floor=floor, **limits)
    app.state.cache_path = cache
    return app
