"""``agentcredit serve``: the reward service for trainer workers (the ``serve`` extra)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from agentcredit.cli.console import fail
from agentcredit.cli.options import (
    BaseUrlOpt,
    ContextTokensOpt,
    MaxTokensOpt,
    RpmOpt,
    StructuredOpt,
    TimeoutOpt,
    TpmOpt,
)
from agentcredit.cli.text import q
from agentcredit.errors import AgentCreditError, PrerequisiteError
from agentcredit.llm.endpoint import EndpointSettings


def serve(
    bank: Annotated[Path, typer.Option("--bank", help="Bank directory (holds bank.json).")],
    model: Annotated[str, typer.Option("--model", help="provider/model of the turn verifier.")],
    port: Annotated[int, typer.Option("--port", help="TCP port.")] = 8000,
    host: Annotated[str, typer.Option("--host", help="Interface to listen on.")] = "127.0.0.1",
    process_weight: Annotated[float, typer.Option(
        "--process-weight", help="λ in reward = outcome + λ·S.")] = 0.5,
    skill: Annotated[str | None, typer.Option(
        "--skill", help="Skill of samples that name none (default: top-1 retrieval).")] = None,
    concurrency: Annotated[int, typer.Option(
        "--concurrency", min=1, help="Concurrent verifier requests, shared by all workers.")]
    = 64,
    base_url: BaseUrlOpt = None,
    cache: Annotated[Path | None, typer.Option(
        "--cache", help="Response cache (default: responses.sqlite in the bank directory).")]
    = None,
    rpm: RpmOpt = None,
    tpm: TpmOpt = None,
    timeout: TimeoutOpt = 120.0,
    max_tokens: MaxTokensOpt = None,
    structured: StructuredOpt = "auto",
    context_tokens: ContextTokensOpt = None,
    max_body_mb: Annotated[float, typer.Option(
        "--max-body-mb", min=0.001, help="Largest request body; bigger ones get 413.")] = 64.0,
) -> None:
    """Serve SkillRubric rewards over HTTP: OpenRLHF's /get_reward, /turn_rewards, /health."""
    console = Console()
    try:
        endpoint = EndpointSettings(timeout=timeout, max_tokens=max_tokens,
                                    structured=structured, context_tokens=context_tokens,
                                    concurrency=concurrency)
        app = build_app(bank, model, process_weight=process_weight, skill=skill,
                        concurrency=concurrency, base_url=base_url, cache=cache, rpm=rpm,
                        tpm=tpm, endpoint=endpoint,
                        max_body_bytes=int(max_body_mb * 1e6))
        import uvicorn
    except ImportError:
        raise fail(console, str(PrerequisiteError("uvicorn", "serve"))) from None
    except AgentCreditError as exc:
        raise fail(console, str(exc)) from None
    console.print(f"serving {q(bank)} with {q(model)} on http://{q(host)}:{q(port)} "
                  "(POST /get_reward, POST /turn_rewards, GET /health, GET /openapi.json); "
                  "Ctrl-C stops after the requests in flight")
    uvicorn.run(app, host=host, port=port, log_level="warning")


def build_app(bank: Path, model: str, *, process_weight: float = 0.5,
              skill: str | None = None, concurrency: int = 64, base_url: str | None = None,
              cache: Path | None = None, rpm: int | None = None,
              tpm: int | None = None, endpoint: EndpointSettings | None = None,
              max_body_bytes: int | None = None) -> Any:
    """The service's ASGI app: one bank, one verifier client (cache, limits) for all."""
    try:
        from agentcredit.serve.app import make_app
    except ImportError:
        raise PrerequisiteError("starlette", "serve") from None
    from agentcredit.llm.factory import model_client
    from agentcredit.rewards.hooks import SkillRubricReward
    from agentcredit.skills.bank import load_bank

    loaded = load_bank(bank)
    if skill is not None and loaded.get(skill) is None:
        raise AgentCreditError(f"no skill {skill!r} in {bank}")
    client = model_client(model, base_url=base_url, cache=cache or bank / "responses.sqlite",
                          no_cache=False, concurrency=concurrency, rpm=rpm, tpm=tpm,
                          endpoint=endpoint)
    reward = SkillRubricReward(bank=loaded, verifier=client, process_weight=process_weight)
    limits = {} if max_body_bytes is None else {"max_body_bytes": max_body_bytes}
    return make_app(reward, skill=skill, **limits)
