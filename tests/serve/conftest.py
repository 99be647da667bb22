"""A live ``agentcredit serve`` app on loopback, with any scripted verifier."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentcredit.llm import register_script
from agentcredit.llm.providers.scripted import ScriptFn
from agentcredit.schema import Lineage
from agentcredit.skills.bank import freeze_bank, make_bank
from tests.rewards import scripted_verifier
from tests.skills.helpers import make_skill


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def make_bank_dir(root: Path) -> Path:
    skill = make_skill("sums", lineage=Lineage(stage="import", sources=("x",)))
    freeze_bank(make_bank([skill], benchmark=None, embedding="lexical-tfidf-1",
                          rules_version="r", prompt_version="p"), root / "bank")
    return root / "bank"


@contextlib.contextmanager
def running(app: Any) -> Iterator[str]:
    """Serve ``app`` on a free loopback port in a thread; yield its URL; stop gracefully."""
    uvicorn = pytest.importorskip("uvicorn")
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            if httpx.get(f"{url}/health").status_code == 200:
                break
        except httpx.TransportError:
            time.sleep(0.05)
    try:
        yield url
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        assert not thread.is_alive()  # graceful shutdown


def serve_with(root: Path, name: str, script: ScriptFn, **options: Any) -> Any:
    """The service's app over a one-skill bank, its verifier answering from ``script``."""
    pytest.importorskip("starlette")
    from agentcredit.cli.serve_cmd import build_app
    from agentcredit.llm import ModelSpec
    from agentcredit.llm.endpoint import EndpointSettings

    register_script(name, script)
    spec = ModelSpec(f"scripted/{name}", cache=root / "cache.sqlite",
                     endpoint=EndpointSettings(concurrency=16))
    return build_app(make_bank_dir(root), spec, skill="sums", **options)


@pytest.fixture
def service(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The service with the scripted verifier that supports every criterion."""
    app = serve_with(tmp_path, "serve-verifier", scripted_verifier.answer)
    with running(app) as url:
        yield url, tmp_path / "bank"
