"""Printing user text safely: file paths, ids, titles and reasons are never rich markup.

A path or skill title holding ``[/red]`` would crash the printer, and ``[embed]`` in an
install hint would vanish. Every value interpolated into a console line or a table cell goes
through :func:`q`, which escapes markup; the colours we write ourselves stay markup.
"""

from __future__ import annotations

import json
from typing import Any

from rich.markup import escape


def q(value: object) -> str:
    """``value`` as text that rich prints literally.

    >>> q("pip install 'agentcredit[embed]'")
    "pip install 'agentcredit\\\\[embed]'"
    >>> q("runs/[/red]x")
    'runs/\\\\[/red]x'
    """
    return escape(str(value))


def count(n: object, noun: str) -> str:
    """``n`` and ``noun``, plural unless ``n`` is one.

    >>> count(1, "task"), count(0, "trial"), count(8, "trial")
    ('1 task', '0 trials', '8 trials')
    """
    return f"{q(n)} {noun}{'' if n == 1 else 's'}"


def usage_line(usage: dict[str, object] | None) -> str:
    """A model ledger's summary as one line: requests as the server saw them, then the rest.

    >>> usage_line({"calls": 4, "retries": 1, "cache_hits": 2, "failures": {"timeout": 1},
    ...             "replayed_failures": 0, "input_tokens": 10, "output_tokens": 3})[:60]
    'model requests sent 4 (retries 1), answers from the cache 2,'
    """
    if usage is None:
        return "model: none"
    failures = usage.get("failures") or {}
    assert isinstance(failures, dict)
    told = ", ".join(f"{kind} {n}" for kind, n in sorted(failures.items())) or "0"
    line = (f"model requests sent {usage.get('calls', 0)} (retries {usage.get('retries', 0)}), "
            f"answers from the cache {usage.get('cache_hits', 0)}, failures {told}")
    if usage.get("replayed_failures"):
        line += (f" ({usage['replayed_failures']} replayed from an earlier run; "
                 "--retry-failed asks again)")
    return line + f", tokens in / out {usage.get('input_tokens', 0)} / " \
        f"{usage.get('output_tokens', 0)}"


def usage_rows(usage: dict[str, Any] | None) -> list[tuple[str, str]]:
    """The summary's lines on the model: requests as the server saw them, tokens, failures."""
    if usage is None:
        return []
    rows = [("model requests sent (retries among them)",
             f"{usage['calls']} ({usage.get('retries', 0)})"),
            ("model requests answered (the rest timed out)",
             str(usage.get("answered", usage["calls"]))),
            ("model requests given up at the timeout", str(usage.get("abandoned", 0))),
            ("answers from the cache", str(usage["cache_hits"])),
            ("tokens in / cached / out", f"{usage['input_tokens']} / "
             f"{usage['cached_input_tokens']} / {usage['output_tokens']}"),
            ("failures", json.dumps(usage["failures"]) if usage["failures"] else "0")]
    if usage.get("replayed_failures"):
        rows.append(("failures replayed from an earlier run (--retry-failed asks again)",
                     str(usage["replayed_failures"])))
    rows.append(("secrets redacted", str(usage["redactions"])))
    if usage.get("task_owned_kept"):
        rows.append(("values kept: the task's own (instruction or verifier)",
                     str(usage["task_owned_kept"])))
    return rows
