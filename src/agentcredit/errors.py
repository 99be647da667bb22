"""One exception tree for everything agentcredit raises on purpose; every class is here.

Readers do not raise these for a single bad file: they turn the problem into a
:class:`agentcredit.schema.ReadError` record and go on. The exceptions exist for
callers that ask to stop at the first problem (``--strict``) and for
configuration mistakes that make a whole run meaningless::

    AgentCreditError
    ├── InputError            a file or folder that could not be read
    │   ├── TooLarge          over the size limit, refused before reading
    │   └── Missing           nothing at the path
    ├── ConfigError           a setting or option that cannot work
    │   ├── NothingToDo       the inputs hold nothing to work on
    │   │   ├── NothingToScore    nothing a run could score
    │   │   └── NoTrialToVerify   no trial the turn verifier could verify
    │   └── IdConflict        skills whose source changed since their import
    ├── PrerequisiteError     an optional package is missing (names the extra)
    ├── StoreError            a run store or cache that cannot be opened
    ├── IntegrityError        a frozen checklist or bank edited after freezing
    ├── AlreadyFrozenError    freezing would overwrite a frozen checklist
    ├── ProviderError         one failed model call, classified (FailureKind)
    ├── ModelCallError        a ModelFailure, raised for callers that want exceptions
    ├── BadRequest            a request the reward service refuses (also a ValueError)
    └── WorkerError           a process judging part of a run failed or stopped
    Terminated                SIGTERM delivered as an interrupt (a KeyboardInterrupt)
    StreamStopped             a trial stream closed before its reader finished (a
                              BaseException: no reader's error handler may swallow it)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Protocol


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
    """An optional package is missing; the message names the pip extra (agentcredit is
    installed from a clone: it is not on PyPI yet)."""

    def __init__(self, package: str, extra: str) -> None:
        super().__init__(f"not installed: {package}; in agentcredit's clone, install "
                         f"with: pip install -e '.[{extra}]'")
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


def env_value(name: str, default: Any, kind: Literal["number", "positive", "count", "url"]
              = "number", *, low: float | None = None) -> Any:
    """The environment variable ``name`` read as a ``kind``: a finite ``number`` (at least
    ``low``), a ``positive`` one, a whole ``count`` of 1 or more, or an http(s) ``url``;
    ``default`` when unset or blank. Anything else is a ConfigError naming the variable,
    raised when the setting is used (never at import).

    >>> import os; os.environ["EXAMPLE_WEIGHT"] = "nan"
    >>> env_value("EXAMPLE_WEIGHT", 0.5)
    Traceback (most recent call last):
    agentcredit.errors.ConfigError: EXAMPLE_WEIGHT='nan' is not a finite number
    >>> del os.environ["EXAMPLE_WEIGHT"]; env_value("EXAMPLE_WEIGHT", 0.5)
    0.5
    """
    import math
    import os

    text = os.environ.get(name, "").strip()
    if not text:
        return default
    if kind == "url":
        from urllib.parse import urlsplit

        try:
            parts = urlsplit(text)
            ok = parts.scheme in ("http", "https") and bool(parts.hostname) and (parts.port or 1)
        except ValueError:
            ok = False
        if not ok:
            raise ConfigError(f"{name}={text[:80]!r} is not an http(s) URL "
                              "(e.g. http://rewards:8000)")
        return text
    try:
        number = float(text)
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        raise ConfigError(f"{name}={text[:80]!r} is not a finite number")
    if kind == "count" and (number != int(number) or number < 1):
        raise ConfigError(f"{name}={text!r} must be a whole number of 1 or more")
    if kind == "positive" and number <= 0:
        raise ConfigError(f"{name}={text!r} must be more than 0")
    if low is not None and number < low:
        raise ConfigError(f"{name}={text!r} must be at least {low:g}")
    return int(number) if kind == "count" else number


class NothingToDo(ConfigError):
    """The inputs hold nothing the job could work on (no trial read, no sample with the
    asked scorer, ...); ``read_errors`` are the inputs that could not be read, the likely
    cause, for the caller to show."""

    def __init__(self, message: str, read_errors: Sequence[Any] = ()) -> None:
        super().__init__(message)
        self.read_errors: list[Any] = list(read_errors)


class NothingToScore(NothingToDo):
    """The inputs hold nothing a run could score (e.g. no sample has the asked scorer);
    ``read_errors`` says which files and why."""


class NoTrialToVerify(NothingToDo):
    """No trial could be verified; ``choices`` and ``skipped`` say what was chosen and why
    each trial was left out."""

    def __init__(self, message: str, read_errors: Sequence[Any], choices: dict[str, str],
                 skipped: dict[str, str]) -> None:
        super().__init__(message, read_errors)
        self.choices = choices
        self.skipped = skipped


class IdConflict(ConfigError):
    """Skills whose source file changed since they were imported (``force`` replaces them);
    ``table`` and ``read_errors`` say what the import read."""

    def __init__(self, message: str, table: list[tuple[str, str, str]],
                 read_errors: list[tuple[str, str]]) -> None:
        super().__init__(message)
        self.table = table
        self.read_errors = read_errors


class TooLarge(InputError):
    """A file over the size limit (``size`` in bytes), refused before it was read."""

    def __init__(self, path: str, size: int, max_bytes: int) -> None:
        super().__init__(
            path,
            f"file is {size / 1e6:.1f} MB, over the {max_bytes / 1e6:.0f} MB limit "
            "(set AGENTCREDIT_MAX_FILE_MB to raise it)",
        )
        self.size = size


class Missing(InputError):
    """Nothing at the path (not even a dangling link)."""


class IntegrityError(AgentCreditError):
    """A frozen checklist or bank whose content no longer matches its recorded hash or its
    lock file (edited after freezing); see :mod:`agentcredit.integrity`."""


class AlreadyFrozenError(AgentCreditError):
    """Freezing would overwrite a frozen checklist and ``force`` was not given."""


FailureKind = Literal[
    "rate_limit",
    "server_error",
    "timeout",
    "connection",
    "bad_request",
    "auth",
    "malformed_response",
    "schema_validation",
    "too_long",
    "deferred",
    "unknown",
]
"""What went wrong with a model call (the vocabulary of ProviderError and ModelFailure)."""


class ProviderError(AgentCreditError):
    """A failed call, classified so the client can decide to retry."""

    def __init__(self, kind: FailureKind, message: str, *, status: int | None = None,
                 retry_after: float | None = None, detail: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status = status
        self.retry_after = retry_after
        self.detail = detail or message
        """The whole error text (bounded), for telling a refused request field apart."""


class _Failure(Protocol):
    @property
    def model(self) -> str: ...
    @property
    def kind(self) -> FailureKind: ...
    @property
    def message(self) -> str: ...


class ModelCallError(AgentCreditError):
    """Raised instead of returning a ModelFailure when the caller asks for exceptions."""

    def __init__(self, failure: _Failure) -> None:
        super().__init__(f"{failure.model}: {failure.kind}: {failure.message}")
        self.failure = failure


class BadRequest(AgentCreditError, ValueError):
    """A request the reward service cannot serve: its message is the one-line reason,
    ``status`` the HTTP status (400, or 413 for a body over the size bound)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class WorkerError(AgentCreditError):
    """A worker process judging part of a run failed (its traceback is the message) or
    stopped without finishing. What every process recorded stays; a rerun resumes."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, delivered as an interrupt (exit status 143 instead of 130)."""


class StreamStopped(BaseException):
    """A :class:`~agentcredit.formats.TrialStream` was closed before every input was read:
    it ends the reader thread, through any reader's ``except Exception``."""
