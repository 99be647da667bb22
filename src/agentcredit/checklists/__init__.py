"""GCPC checklists: rules, derivation, synthesis, gates and freezing."""

from agentcredit.checklists.build import BuildReport, build_checklists, derive_checklist
from agentcredit.checklists.freeze import freeze, load_checklist, load_checklists
from agentcredit.checklists.gates import run_gates
from agentcredit.checklists.rules import Rules, load_rules
from agentcredit.checklists.synthesize import PROMPT_VERSION, Rejection, synthesize
from agentcredit.errors import IntegrityError
from agentcredit.schema.checklist import checklist_hash
from agentcredit.schema.outcomes import GateFailure

__all__ = [
    "PROMPT_VERSION",
    "BuildReport",
    "GateFailure",
    "IntegrityError",
    "Rejection",
    "Rules",
    "build_checklists",
    "checklist_hash",
    "derive_checklist",
    "freeze",
    "load_checklist",
    "load_checklists",
    "load_rules",
    "run_gates",
    "synthesize",
]
