"""Lenient coercions for fields of other tools' files, where any type may turn up."""

from __future__ import annotations

from typing import Any


def opt_str(value: Any) -> str | None:
    """None stays None; anything else becomes its string.

    >>> opt_str(None), opt_str(3)
    (None, '3')
    """
    return None if value is None else str(value)


def opt_int(value: Any) -> int | None:
    """An int, or None for anything else (booleans included).

    >>> opt_int(5), opt_int(True), opt_int("5")
    (5, None, None)
    """
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def opt_float(value: Any) -> float | None:
    """A number as float, or None for anything else (booleans included).

    >>> opt_float(2), opt_float("2")
    (2.0, None)
    """
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None
