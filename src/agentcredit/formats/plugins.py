"""Loading what installed packages add through an entry point group (readers, trajectory
formats): a plugin that cannot be loaded, or is not what the group holds, is skipped with
the reason, so that one broken package never stops reading."""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any


def load_plugins(group: str, what: str, make: Callable[[Any], Any | None], needs: str = ""
                 ) -> tuple[tuple[Any, ...], tuple[str, ...]]:
    """(the plugins of ``group`` that ``make`` accepts, why each other one was skipped).
    ``make`` turns a loaded object into the plugin, or None when it is not ``what``
    (``needs`` says what one must have)."""
    found: list[Any] = []
    problems: list[str] = []
    for point in entry_points(group=group):
        try:
            plugin = make(point.load())
        except Exception as exc:  # a broken plugin must not stop reading
            problems.append(f"{what} {point.name!r} ({point.value}) could not be loaded: "
                            f"{type(exc).__name__}: {exc}")
            continue
        if plugin is None:
            problems.append(f"{what} {point.name!r} ({point.value}) is not a {what}"
                            + (f" ({needs})" if needs else ""))
            continue
        found.append(plugin)
    return tuple(found), tuple(problems)
