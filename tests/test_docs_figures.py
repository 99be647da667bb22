"""Issue 68: no page carries a number no command produces.

A *figure* is a measured number: a decimal with two or more places (an AUC, κ, a ratio), a
percentage, an ``N×`` ratio, an ``N of M`` count, or a quantity in a unit of time, size or
throughput. Every paragraph, list item or table of the README and the documentation site that
states one must name, in the same block (or in the fenced block or the lead-in paragraph right
beside it), the command that produces it: an existing ``benchmarks/*.py`` script, or an
``agentcredit`` command. Fenced blocks and inline code are not prose (they are commands,
options and example output); a number right after a bound (``≥ 0.6``, ``target 1.1``, ``at
most 5 min``) is a threshold the page defines, not a measurement. What is left over is the
short, explicit ``NOT_FIGURES`` list below.
"""

from __future__ import annotations

import re

import typer.main

from agentcredit.cli.app import app
from tests.conftest import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
UNIT = r"(?:ms|s|min|minutes|h|hours|KB|MB|GB|trials/s|calls/s|CPU-hours)"
NUMBER = r"\d[\d,]*(?:\.\d+)?"
FIGURE = re.compile(
    rf"(?<![\w.])(?:\d+\.\d{{2,}}(?![\d.])"          # 0.926, 1.071, κ 0.72
    rf"|{NUMBER}\s?%"                                 # 0.97%, 90%
    rf"|{NUMBER}\s?[x×](?!\w)"                         # 1.72x, 3.00×
    rf"|{NUMBER} of {NUMBER}(?![\w.])"                 # 12 of 8,081
    rf"|{NUMBER}(?:\s?(?:–|-|to)\s?{NUMBER})?\s?{UNIT}(?!\w))")  # 6.9 s, 253 MB
# A bound the page sets is a definition, not a measurement.
BOUND = re.compile(r"(?:[≤≥<>=±]|<=|>=|target|at most|at least|under|below|above|over|"
                   r"more than|less than|from|within|every|up to|default\W*(?:of)?)"
                   r"\s*[~(−-]?\s*$", re.I)
# Numbers that are names or settings, not measurements: the Python version, the confidence
# levels the methods fix, and a release's version (2.13.0).
NOT_FIGURES = re.compile(r"Python 3\.11|95% interval|one-sided 90%|\d+\.\d+\.\d+")
COMMAND = re.compile(r"benchmarks/(\w+)\.py|`agentcredit ([a-z-]+)|^\s*agentcredit ([a-z-]+)",
                     re.M)
COMMANDS = set(typer.main.get_command(app).commands)  # type: ignore[attr-defined]


def blocks(text: str) -> list[tuple[int, str, str]]:
    """(line, kind, text) of each fenced block, heading, paragraph, list item and table."""
    out: list[tuple[int, str, list[str]]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line, stripped = lines[i], lines[i].strip()
        if stripped.startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith("```"):
                j += 1
            out.append((i + 1, "fence", lines[i:j + 1]))
            i = j + 1
            continue
        last = out[-1] if out else None
        if not stripped:
            out.append((i + 1, "blank", []))
        elif stripped.startswith("#"):
            out.append((i + 1, "heading", [line]))
        elif stripped.startswith("|"):
            if last and last[1] == "table":
                last[2].append(line)
            else:
                out.append((i + 1, "table", [line]))
        elif re.match(r"\s*(?:[-*+] |\d+\. )", line):
            out.append((i + 1, "item", [line]))
        elif not last or last[1] in ("blank", "fence", "heading", "table"):
            out.append((i + 1, "prose", [line]))
        else:
            last[2].append(line)
        i += 1
    return [(n, kind, "\n".join(b)) for n, kind, b in out if kind != "blank"]


def context(found: list[tuple[int, str, str]], k: int) -> str:
    """A block with what sits right beside it: the fenced block after or before it; for a
    table, the paragraph before it (its caption); for a list item, the lead-in of its list
    when that ends in ':'."""
    kind, text = found[k][1], found[k][2]
    parts = [text]
    if k + 1 < len(found) and found[k + 1][1] == "fence":
        parts.append(found[k + 1][2])
    if k > 0 and found[k - 1][1] == "fence":
        parts.append(found[k - 1][2])
    if kind == "table" and k > 0 and found[k - 1][1] in ("prose", "item"):
        parts.append(found[k - 1][2])
    if kind == "item":
        j = k - 1
        while j >= 0 and found[j][1] == "item":
            j -= 1
        lead = [found[m][2] for m in range(max(j, 0), k)]
        if lead and lead[0].rstrip().endswith(":"):
            parts.extend(lead)
    return "\n".join(parts)


def figures(prose: str) -> list[str]:
    """The measured numbers of a block's prose (inline code, link targets and the
    ``NOT_FIGURES`` taken out; a number right after a bound is a threshold)."""
    prose = re.sub(r"`[^`]*`", " ", prose)
    prose = re.sub(r"\]\([^)]*\)", "]", prose)
    prose = NOT_FIGURES.sub(" ", re.sub(r"\s+", " ", prose))
    return [m.group(0) for m in FIGURE.finditer(prose)
            if not BOUND.search(prose[max(0, m.start() - 16):m.start()])]


def names_a_command(text: str) -> bool:
    for match in COMMAND.finditer(text):
        script, command = match.group(1), match.group(2) or match.group(3)
        if script and (ROOT / "benchmarks" / f"{script}.py").is_file():
            return True
        if command and command in COMMANDS:
            return True
    return False


def unsourced(text: str) -> list[str]:
    """'line: figures' of every block that states a figure and names no command."""
    found = blocks(text)
    bad = []
    for k, (n, kind, block) in enumerate(found):
        if kind not in ("prose", "item", "table"):
            continue
        around = context(found, k)
        # A table row answers for itself: its own cells, the header or the caption.
        rows = block.splitlines() if kind == "table" else [block]
        for offset, row in enumerate(rows):
            shared = around.replace(block, "\n".join(rows[:2])) if kind == "table" else around
            if (figs := figures(row)) and not names_a_command(row + "\n" + shared):
                bad.append(f"{n + (offset if kind == 'table' else 0)}: {', '.join(figs)}")
    return bad


def test_every_figure_on_every_page_names_the_command_that_produces_it() -> None:
    bad = [f"{page.relative_to(ROOT)}:{where}" for page in PAGES
           for where in unsourced(page.read_text(encoding="utf-8"))]
    assert not bad, "figures with no command beside them:\n" + "\n".join(bad)


PLANTED = """\
Intro with no figure.

Top-1 is 0.926 on the corpus.

Top-1 is 0.926 on the corpus (`python benchmarks/retrieval_quality.py`).

Top-1 is 0.926 (`python benchmarks/no_such_script.py`).

- 12 of 80 lines change.
- 3.2x faster, 250 MB less (target <= 5 MB, at most 3 s, κ ≥ 0.6).

Measured by `agentcredit analyze RUN`:

| scorer | AUC |
|---|---|
| GCPC | 0.810 |

| scorer | AUC |
|---|---|
| GCPC | 0.810 |
| verifier | 0.75 (`python benchmarks/checklist_rubric.py`) |

Python 3.11, torch 2.13.0, `--unscored fallback:0.5`, a 95% interval.

```text
ratio 1.071
```
"""


def test_the_check_flags_each_unsourced_figure_and_nothing_else() -> None:
    assert unsourced(PLANTED) == [
        "3: 0.926",            # no command
        "7: 0.926",            # a script that does not exist
        "9: 12 of 80",         # a list item answers for itself
        "10: 3.2x, 250 MB",    # the bounds after it are definitions
        "20: 0.810",           # a row of a table with no command in its caption or row
    ]
