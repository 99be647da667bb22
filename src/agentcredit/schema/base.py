"""The base of every persisted record: frozen, unknown fields refused."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, ValidationError


class Record(BaseModel):
    """A persisted record: frozen and ``extra="forbid"``."""

    model_config = ConfigDict(frozen=True, extra="forbid")


def first_error(exc: ValidationError, sep: str = ".") -> str:
    """The first validation problem in one line: ``where: what``."""
    first = exc.errors()[0]
    return f"{sep.join(str(p) for p in first['loc'])}: {first['msg']}"
