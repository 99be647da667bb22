"""Issue 66, generated bad input on the surfaces added since: labels files and served
requests. A labels file is read into labels of the allowed kinds or refused with one line
naming the file; a served request gets finite rewards (or null) or a one-line 4xx."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentcredit.analysis.labels import LABELS, read_labels, read_scores
from agentcredit.errors import InputError
from tests.rewards import scripted_verifier

CELLS = st.one_of(st.sampled_from(["t1", "t2", "C1", "C2", "yes", "no", "abstain", "YES",
                                   "maybe", "", "nan", "inf", "-inf", "0.5", "1e999", '"q,"',
                                   "\ufeff", "é"]),
                  st.text(max_size=8))
ROWS = st.lists(st.lists(CELLS, min_size=1, max_size=4), max_size=8)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=ROWS, bom=st.booleans(), junk=st.binary(max_size=6),
       suffix=st.sampled_from([".csv", ".jsonl"]))
def test_a_labels_file_is_labels_or_one_line(tmp_path_factory: pytest.TempPathFactory,
                                             rows: list[list[str]], bom: bool, junk: bytes,
                                             suffix: str) -> None:
    path = tmp_path_factory.mktemp("labels") / f"l{suffix}"
    if suffix == ".csv":
        text = "\n".join(",".join(r) for r in rows)
    else:
        text = "\n".join(json.dumps(dict(zip(["trial_id", "item_id", "label"], r,
                                             strict=False))) for r in rows)
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8", "surrogatepass")
                     + junk)
    for reader in (read_labels, read_scores):
        try:
            got = reader(path)
        except InputError as exc:
            assert exc.path == str(path) and "\n" not in exc.reason
            continue
        if reader is read_labels:
            assert all(v in LABELS for v in got.values())  # type: ignore[operator]
        else:
            assert all(math.isfinite(v) for v in got.values())  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from tests.serve.conftest import serve_with

    app = serve_with(tmp_path_factory.mktemp("served"), "property-verifier",
                     scripted_verifier.answer)
    with TestClient(app) as client:
        yield client


NUMBERS = st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999", "2", "0.5", "null",
                           '"2"', "true", "[]", "{}"])


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(label=NUMBERS, answer=st.sampled_from(["<answer>2</answer>", "2", "", "<answer>nan"
                                              "</answer>", "<answer>inf</answer>"]))
def test_served_rewards_are_finite_or_null_or_one_line(  # type: ignore[no-untyped-def]
        served, label: str, answer: str) -> None:
    query = json.dumps("Sum 1 and 1. " + answer)
    for path, body in (
            ("/get_reward", f'{{"query": [{query}], "prompts": ["Sum 1 and 1. "], '
                            f'"labels": [{label}]}}'),
            ("/turn_rewards", f'{{"trajectories": [{{"prompt": "Sum 1 and 1. ", '
                              f'"completion": {query}, "ground_truth": {label}}}]}}')):
        response = served.post(path, content=body,
                               headers={"content-type": "application/json"})
        if response.status_code >= 400:
            assert response.status_code < 500 and "\n" not in response.json()["error"]
            continue
        data = json.loads(response.text,  # strict JSON: no NaN or Infinity in the answer
                          parse_constant=lambda token: pytest.fail(f"{token} sent"))
        values = data["rewards"] + data["scores"] if path == "/get_reward" else [
            v for t in data["trajectories"] for v in (t["reward"], t["outcome"])]
        assert all(v is None or math.isfinite(v) for v in values)
