"""One exception tree for everything agentcredit raises on purpose.

Readers do not raise these for a single bad file: they turn the problem into a
:class:`agentcredit.schema.ReadError` record and go on. The exceptions exist for
callers that ask to stop at the first problem (``--strict``) and for
configuration mistakes that make a whole run meaningless.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class AgentCreditError(Exception):
    """Base class of every error agentcredit raises deliberately."""


class InputError(AgentCreditError):
    """A file or folder could not be read as any known format.

    Attributes:
        path: the file or folder that could not be read.
        reason: one line saying why.
    """

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class ConfigError(AgentCreditError):
    """A setting or command-line option that cannot work."""


class PrerequisiteError(AgentCreditError):
    """An optional package is missing; the message names the pip extra."""

    def __init__(self, package: str, extra: str) -> None:
        super().__init__(
            f"{package} is not installed; install it with: pip install 'agentcredit[{extra}]'"
        )
        self.package = package
        self.extra = extra


class StoreError(AgentCreditError):
    """A run store or response cache that cannot be opened (not SQLite, truncated, a folder).

    The file is left exactly as it was; the message names it and says what to do.
    """


def open_sqlite_error(path: object, exc: Exception) -> StoreError:
    """The one-line StoreError for a SQLite file that would not open."""
    detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    from pathlib import Path

    what = "is a folder, not a SQLite file" if Path(str(path)).is_dir() else \
        f"is not a usable SQLite database ({detail})"
    return StoreError(f"{path} {what}; it was left as it is: move it aside, or point "
                      "--out / --cache elsewhere, and run again")


class NothingToDo(ConfigError):
    """The inputs hold nothing the job could work on (no trial read, no sample with the
    asked scorer, ...); ``read_errors`` are the inputs that could not be read, the likely
    cause, for the caller to show."""

    def __init__(self, message: str, read_errors: Sequence[Any] = ()) -> None:
        super().__init__(message)
        self.read_errors: list[Any] = list(read_errors)
