"""The base of every persisted record: frozen, unknown fields refused."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Record(BaseModel):
    """A persisted record: frozen and ``extra="forbid"``."""

    model_config = ConfigDict(frozen=True, extra="forbid")
