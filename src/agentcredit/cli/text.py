"""Printing user text safely: file paths, ids, titles and reasons are never rich markup.

A path or skill title holding ``[/red]`` would crash the printer, and ``[embed]`` in an
install hint would vanish. Every value interpolated into a console line or a table cell goes
through :func:`q`, which escapes markup; the colours we write ourselves stay markup.
"""

from __future__ import annotations

from rich.markup import escape


def q(value: object) -> str:
    """``value`` as text that rich prints literally.

    >>> q("pip install 'agentcredit[embed]'")
    "pip install 'agentcredit\\\\[embed]'"
    >>> q("runs/[/red]x")
    'runs/\\\\[/red]x'
    """
    return escape(str(value))
