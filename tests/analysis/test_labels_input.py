"""A person's labels file for ``analyze --labels`` is read like every other input: one line
naming the file and the line for anything unusable, never a traceback, never a hang on a FIFO,
never a silent choice between two labels of one item, and in bounded memory."""

from __future__ import annotations

import json
import os
import threading
import tracemalloc
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcredit.analysis.labels import label_validation, read_labels, read_scores
from agentcredit.cli.app import app
from agentcredit.errors import InputError
from agentcredit.runs.pipeline import score
from agentcredit.store.run_store import RunStore
from tests.conftest import EXAMPLES

runner = CliRunner()
TRIAL, OTHER = "log-error-filter__Bf7kW1e", "csv-sales-summary__Qm4tR2a"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("labels") / "run"
    score(EXAMPLES / "tasks", EXAMPLES / "jobs", out)
    return out


def _analyze(run: Path, *args: str) -> tuple[int, str]:
    out = runner.invoke(app, ["analyze", str(run), "--bootstrap", "20", *args],
                        env={"COLUMNS": "300"})
    assert out.exception is None or isinstance(out.exception, SystemExit), out.output
    return out.exit_code, " ".join(out.output.split())


def test_invalid_utf8_is_one_line_naming_the_line(run: Path, tmp_path: Path) -> None:
    bad = tmp_path / "l.csv"
    bad.write_bytes(b"trial_id,item_id,label\n" + f"{TRIAL},C1,yes\n".encode()
                    + b"\xff\xfe\xfa,C2,no\n")
    code, text = _analyze(run, "--labels", str(bad))
    assert code == 2 and "invalid UTF-8" in text and "line 3" in text and str(bad) in text


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_a_200kb_field_is_refused_by_line(run: Path, tmp_path: Path, suffix: str) -> None:
    bad = tmp_path / f"l{suffix}"
    huge = "x" * 200_000
    bad.write_text(f"{TRIAL},C1,yes\n{TRIAL},C2,{huge}\n" if suffix == ".csv" else
                   json.dumps({"trial_id": TRIAL, "item_id": "C2", "label": huge}) + "\n")
    code, text = _analyze(run, "--labels", str(bad))
    assert code == 2 and "line" in text and str(bad) in text
    assert len(text) < 600  # the field is not echoed back


def test_json_into_a_missing_folder_is_written(run: Path, tmp_path: Path) -> None:
    labels = tmp_path / "l.csv"
    labels.write_text(f"{TRIAL},C1,yes\n")
    target = tmp_path / "not" / "yet" / "a.json"
    code, text = _analyze(run, "--labels", str(labels), "--json", str(target))
    assert code == 0, text
    assert json.loads(target.read_text())["labels"]["labels"] == 1


def test_a_byte_order_mark_is_skipped(tmp_path: Path) -> None:
    saved = tmp_path / "l.csv"
    saved.write_bytes(b"\xef\xbb\xbftrial_id,item_id,label\r\n" + f"{TRIAL},C1,Yes\r\n".encode())
    assert read_labels(saved) == {(TRIAL, "C1"): "yes"}
    scores = tmp_path / "s.csv"
    scores.write_bytes(b"\xef\xbb\xbftrial_id,score\n" + f"{TRIAL},0.5\n".encode())
    assert read_scores(scores) == {TRIAL: 0.5}


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN", "1e999"])
def test_non_finite_scores_are_refused(run: Path, tmp_path: Path, value: str) -> None:
    bad = tmp_path / "s.csv"
    bad.write_text(f"trial_id,score\n{TRIAL},0.5\n{OTHER},{value}\n")
    code, text = _analyze(run, "--labels", str(bad))
    assert code == 2 and "line 3" in text and "finite" in text


@pytest.mark.parametrize("first,second", [("yes", "no"), ("no", "abstain")])
def test_contradicting_labels_name_the_item(run: Path, tmp_path: Path, first: str,
                                            second: str) -> None:
    for order in ((first, second), (second, first)):
        bad = tmp_path / "l.csv"
        bad.write_text(f"{TRIAL},C2,{order[0]}\n{OTHER},C1,yes\n{TRIAL},C2,{order[1]}\n")
        code, text = _analyze(run, "--labels", str(bad))
        assert code == 2 and TRIAL in text and "C2" in text and "line 3" in text, text
    same = tmp_path / "same.csv"
    same.write_text(f"{TRIAL},C2,yes\n{TRIAL},C2,YES\n")  # said twice alike: one label
    assert read_labels(same) == {(TRIAL, "C2"): "yes"}
    twice = tmp_path / "s.csv"
    twice.write_text(f"trial_id,score\n{TRIAL},0.5\n{TRIAL},0.7\n")
    with pytest.raises(InputError, match=r"line 3.*scored 0.7 here and 0.5 on line 2"):
        read_scores(twice)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_refused_without_waiting(run: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "l.csv"
    os.mkfifo(fifo)
    done: list[tuple[int, str]] = []
    worker = threading.Thread(target=lambda: done.append(_analyze(run, "--labels", str(fifo))),
                              daemon=True)
    worker.start()
    worker.join(60)
    if not done:  # unblock the reader, then fail: it waited for a writer
        with open(fifo, "w"):
            pass
        worker.join(10)
    assert done and done[0][0] == 2 and "not a regular file" in done[0][1]


def test_a_large_file_is_streamed(run: Path, tmp_path: Path) -> None:
    big = tmp_path / "big.csv"
    rows = 200_000  # ~7 MB of rows with ids that repeat as in real label sets
    with big.open("w") as fh:
        fh.write("trial_id,item_id,label\n")
        for n in range(rows):
            fh.write(f"trial-{n % 2000:05d},item-{n // 2000:05d},{'yes' if n % 3 else 'no'}\n")
    size = big.stat().st_size
    tracemalloc.start()
    try:
        result = label_validation(RunStore(run), big)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result["labels"] == rows and result["not_in_run"] == rows
    assert peak < 8 * size, (peak, size)  # the labels kept, never the text and its copies


def test_analyze_of_nothing_says_so(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    for where, reason in ((tmp_path / "empty", "no trial read"),
                          (tmp_path / "nowhere", "no such file or folder")):
        code, text = _analyze(where)
        assert code == 2 and reason in text and "AUC" not in text, text
