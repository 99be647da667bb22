"""A deterministic share of a run's trials per machine (``run --shard K/N``)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from agentcredit.errors import ConfigError
from agentcredit.store.run_store import RunStore


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count`` (1-based): the trials whose id hashes to it."""

    index: int
    count: int

    @classmethod
    def parse(cls, value: str | Shard | None) -> Shard | None:
        """``K/N`` as a shard (ConfigError naming ``--shard`` when it is not one).

        >>> Shard.parse("2/3"), str(Shard.parse("1/1"))
        (Shard(index=2, count=3), '1/1')
        """
        if value is None or isinstance(value, Shard):
            return value
        index, _, count = str(value).partition("/")
        if not (index.isdigit() and count.isdigit() and 1 <= int(index) <= int(count)):
            raise ConfigError(f"--shard must be K/N with 1 <= K <= N (e.g. 1/4), not {value!r}")
        return cls(int(index), int(count))

    def takes(self, trial_id: str) -> bool:
        """Whether this shard judges ``trial_id`` (the same answer on every machine)."""
        digest = hashlib.sha256(trial_id.encode("utf-8", "surrogatepass")).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index - 1

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def check_shard(store: RunStore, shard: Shard | None) -> str | None:
    """``shard`` as the run's provenance records it; a run folder resumes only as the shard
    it started as."""
    meta = store.meta()
    if "command" in meta and meta.get("shard") != (str(shard) if shard else None):
        was = f"shard {meta['shard']}" if meta.get("shard") else "an unsharded run"
        raise ConfigError(f"{store.path.parent} holds {was}; resume it with the same --shard "
                          "or use another --out")
    return str(shard) if shard else None
