"""Replicas on several nodes keep a response cache each: a cache file on a network
filesystem (where SQLite's WAL cannot be shared between machines) is refused with its
reason, and the service says which cache it uses."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcredit import db
from agentcredit.cli.app import app
from agentcredit.cli.serve_cmd import build_app
from agentcredit.errors import AgentCreditError
from agentcredit.llm import ModelSpec, register_script
from tests.serve.conftest import make_bank_dir

pytest.importorskip("starlette")


@pytest.fixture
def shared_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``tmp_path/shared`` mounted (as the mount table says) from an NFS server."""
    mounts = tmp_path / "mounts"
    mounts.write_text("/dev/sda1 / ext4 rw 0 0\n"
                      f"server:/export {tmp_path / 'shared'} nfs4 rw,relatime 0 0\n")
    monkeypatch.setattr(db, "MOUNTS", mounts)
    return tmp_path / "shared"


def test_a_cache_on_a_network_filesystem_is_refused(shared_disk: Path, tmp_path: Path) -> None:
    register_script("per-node", [])
    bank = make_bank_dir(tmp_path)
    with pytest.raises(AgentCreditError, match="on nfs4, a network filesystem"):
        build_app(bank, ModelSpec("scripted/per-node", cache=shared_disk / "c.sqlite"))
    out = CliRunner().invoke(app, ["serve", "--bank", str(bank), "--model", "scripted/per-node",
                                   "--cache", str(shared_disk / "c.sqlite")])
    assert out.exit_code == 2 and "Traceback" not in out.output
    [line] = [x for x in out.output.splitlines() if x.startswith("error")]
    assert "give each node a local --cache" in line


def test_a_local_cache_is_this_nodes_own(shared_disk: Path, tmp_path: Path) -> None:
    register_script("per-node", [])
    bank = make_bank_dir(tmp_path)
    local = build_app(bank, ModelSpec("scripted/per-node", cache=tmp_path / "local.sqlite"))
    assert local.state.cache_path == tmp_path / "local.sqlite"
    assert db.network_filesystem(shared_disk / "deeper" / "x.sqlite") == "nfs4"
    assert db.network_filesystem(tmp_path / "sharedX" / "x.sqlite") is None
