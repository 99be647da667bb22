"""The labelled gate corpus: the skill gates' precision and recall on real skills' rubrics."""

from __future__ import annotations

from pathlib import Path

from tests.skills import gate_corpus


def _check(tally: gate_corpus.Tally, at_least: int, rate: float) -> None:
    assert tally.total >= at_least, tally.line()
    assert tally.rate >= rate, tally.line() + "\n" + "\n".join(tally.misses)


def test_imported_rubrics_natural_accepted_planted_tools_and_unobservables_caught() -> None:
    scores = gate_corpus.score_imported()
    assert len(gate_corpus.imported_entries()) >= 20
    _check(scores["natural"], 80, 0.95)
    _check(scores["tool"], 40, 0.95)
    _check(scores["unobservable"], 20, 0.90)


def test_the_stored_guidance_tools_are_what_the_real_skills_invoke(corpus: Path) -> None:
    paths = [entry["path"] for entry in gate_corpus.imported_entries()]
    fresh = gate_corpus.extract_tools(paths, corpus / "skillsbench" / "skills")
    assert fresh == gate_corpus.stored_tools()  # else: benchmarks/gate_corpus.py --refresh
    assert {"nmap", "hydra", "ssh"} <= set(fresh["fix-erlang-ssh-cve/ssh-penetration-testing"])
    pymatgen = fresh["crystallographic-wyckoff-position-analysis/pymatgen"]
    assert "pymatgen" in pymatgen and not {"analysis", "additional", "export"} & set(pymatgen)
