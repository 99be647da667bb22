"""The human-written rules checklists are synthesized from and checked against."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentcredit.checklists.units import UNIT_KINDS
from agentcredit.errors import ConfigError, InputError
from agentcredit.formats.structured import parse_yaml
from agentcredit.schema import EvidenceRules
from agentcredit.schema.base import first_error


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Coverage(_Strict):
    """What the coverage audit demands."""

    every_check_referenced: bool = True
    every_requirement_covered: bool = True
    requirement_cues: tuple[str, ...] = ()
    imperative_verbs: tuple[str, ...] = ()
    unit_kinds: dict[str, bool] = Field(
        default_factory=lambda: dict.fromkeys(UNIT_KINDS, True),
        description="Which requirement-unit kinds the audit asks for (cue, imperative, "
        "list_item, field, note, table_row); a kind set to false is not asked for.")
    boilerplate: tuple[str, ...] = Field(
        default=(), description="Texts every task of a benchmark repeats (its own harness "
        "notes); a unit whose text is one of them is not asked for.")

    def kinds(self) -> tuple[str, ...]:
        """The unit kinds switched on."""
        return tuple(k for k in UNIT_KINDS if self.unit_kinds.get(k, True))


class Bounds(_Strict):
    """How many items a checklist may have."""

    min_items: int = Field(default=1, ge=0)
    max_items: int = Field(default=25, ge=1)


class GateSettings(_Strict):
    """Parameters of the deterministic gates."""

    procedural_verbs: tuple[str, ...] = ()
    near_duplicate_jaccard: float = Field(default=0.85, gt=0.0, le=1.0)


class Rules(_Strict):
    """A versioned rules file (YAML)."""

    id: str = Field(description="Stable name of this rule set.")
    version: str = Field(description="Changed whenever a rule changes.")
    item_contract: str = Field(description="What one item must be.")
    provenance: str = Field(description="How items are grounded.")
    routes: dict[str, str] = Field(description="Route name -> meaning.")
    coverage: Coverage = Field(default_factory=Coverage)
    bounds: Bounds = Field(default_factory=Bounds)
    gates: GateSettings = Field(default_factory=GateSettings)
    evidence: EvidenceRules = Field(default_factory=EvidenceRules)

    def ref(self) -> dict[str, str]:
        """``{"id", "version"}``, as frozen checklists record it."""
        return {"id": self.id, "version": self.version}


def load_rules(path: str | Path | None = None) -> Rules:
    """The default rules, or those of a YAML file; ConfigError with the reason otherwise."""
    if path is None:
        text = resources.files("agentcredit.checklists").joinpath("default_rules.yaml")
        source = "default rules"
        raw = text.read_text(encoding="utf-8")
    else:
        source = str(path)
        try:
            raw = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"{source}: cannot read rules: {exc.strerror or exc}") from None
    try:
        rules = Rules.model_validate(parse_yaml(raw, source))
    except InputError as exc:
        raise ConfigError(str(exc)) from None
    except ValidationError as exc:
        raise ConfigError(f"{source}: {first_error(exc)}") from None
    unknown = set(rules.coverage.unit_kinds) - set(UNIT_KINDS)
    if unknown:
        raise ConfigError(f"{source}: unknown unit kind {sorted(unknown)[0]!r} in "
                          f"coverage.unit_kinds (known: {', '.join(UNIT_KINDS)})")
    missing = {"assertion", "generated", "judge"} - set(rules.routes)
    if missing:
        raise ConfigError(f"{source}: routes must define {', '.join(sorted(missing))}")
    return rules
