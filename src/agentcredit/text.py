"""Text helpers every layer uses (pure, no agentcredit imports): below the readers, the
judge, the checklists and the reports, so that none of them borrows from another."""

from __future__ import annotations


def shorten(text: str, limit: int) -> str:
    """Head and tail of a long text with an explicit marker in between.

    >>> shorten("a" * 50 + "b" * 50, 40)
    'aaaaaaaaaaaaaaaaaaaaaaaa\\n[... 60 characters omitted ...]\\nbbbbbbbbbbbbbbbb'
    """
    if len(text) <= limit:
        return text
    head = int(limit * 0.6)
    tail = max(limit - head, 0)
    omitted = len(text) - head - tail
    return f"{text[:head]}\n[... {omitted} characters omitted ...]\n{text[len(text) - tail:]}"
