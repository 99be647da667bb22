"""What gated model work returns instead of a record, and one gate's failure: pure values
shared by the gates (pure cores), the gated generation routine (:mod:`agentcredit.gating`)
and the jobs that record them."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class GateFailure:
    """One gate failing for one item (or for the whole record when ``item_id`` is None)."""

    code: str
    item_id: str | None
    message: str
    scope: str = "checklist"

    def __str__(self) -> str:
        where = f"item {self.item_id}" if self.item_id else self.scope
        return f"[{self.code}] {where}: {self.message}"


@dataclass(frozen=True)
class Deferred:
    """The call was queued for a batch file (``--batch``); a later run gets its answer."""

    key: str | None = None
    stage: str = ""


@dataclass(frozen=True)
class Failed:
    """The call failed after its retries; the reason is kept for the report."""

    reason: str


@dataclass(frozen=True)
class Rejected:
    """The gates still failed after the repairs."""

    failures: list[GateFailure] = field(default_factory=list)
    attempts: int = 0

    def as_dict(self, unit: str) -> dict[str, object]:
        return {"unit": unit, "attempts": self.attempts,
                "failures": [{"code": f.code, "item_id": f.item_id, "message": f.message}
                             for f in self.failures]}


Outcome = Deferred | Failed | Rejected


__all__ = ["Deferred", "Failed", "GateFailure", "Outcome", "Rejected"]
