"""YAML and TOML parsed safely: no alias expansion, no deep recursion, no giant integers.

Task files and skill front matter come from anyone. A few hundred bytes of YAML aliases
("billion laughs") expand to gigabytes once the value is used; a recursive alias or deeply
nested collections end in a RecursionError; a TOML integer of 100,000 digits is refused by
Python with a ValueError. Each of these becomes a one-line :class:`InputError` naming the
file, never a traceback and never a memory bomb.
"""

from __future__ import annotations

import tomllib
from typing import Any

import yaml

from agentcredit.errors import InputError

MAX_DEPTH = 100
"""Deepest nesting of mappings and lists accepted in a YAML or TOML document."""


class _NoAliasLoader(yaml.SafeLoader):
    """A safe loader that refuses aliases (``*name``) and nesting deeper than MAX_DEPTH."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
            raise yaml.YAMLError(f"YAML aliases (*name) are not accepted (line {mark.line + 1})")
        self._depth = getattr(self, "_depth", 0) + 1
        try:
            if self._depth > MAX_DEPTH:
                raise yaml.YAMLError(f"nested deeper than {MAX_DEPTH} levels")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def parse_yaml(text: str, where: str, what: str = "YAML") -> Any:
    """The value of a YAML document, or a one-line InputError.

    >>> parse_yaml("a: 1\\nb: [x, y]", "t.yaml")
    {'a': 1, 'b': ['x', 'y']}
    >>> try:
    ...     parse_yaml("a: &x [1, 2]\\nb: [*x, *x]", "t.yaml")
    ... except InputError as exc:
    ...     print(exc.reason)
    malformed YAML: YAML aliases (*name) are not accepted (line 2)
    """
    try:
        return yaml.load(text, Loader=_NoAliasLoader)
    except yaml.YAMLError as exc:
        raise InputError(where, f"malformed {what}: {str(exc).splitlines()[0]}") from None
    except RecursionError:
        raise InputError(where, f"malformed {what}: nested too deeply") from None


def parse_toml(text: str, where: str) -> dict[str, Any]:
    """The table of a TOML document, or a one-line InputError.

    >>> parse_toml("[task]\\nname = 'x'", "task.toml")
    {'task': {'name': 'x'}}
    >>> parse_toml("n = " + "9" * 5000, "task.toml")
    Traceback (most recent call last):
    ...
    agentcredit.errors.InputError: task.toml: malformed TOML: an integer with more than 4300 digits
    """
    if text.count("[") + text.count("{") > MAX_DEPTH and _depth(text) > MAX_DEPTH:
        raise InputError(where, f"malformed TOML: nested deeper than {MAX_DEPTH} levels")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(where, f"malformed TOML: {str(exc).splitlines()[0]}") from None
    except ValueError as exc:
        reason = "an integer with more than 4300 digits" if "digits" in str(exc) else \
            str(exc).splitlines()[0]
        raise InputError(where, f"malformed TOML: {reason}") from None
    except RecursionError:
        raise InputError(where, "malformed TOML: nested too deeply") from None


def _depth(text: str) -> int:
    """The deepest bracket nesting in ``text`` (strings not excluded: an upper bound)."""
    depth = deepest = 0
    for char in text:
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth = max(depth - 1, 0)
    return deepest
