"""SkillRubric's SkillBank: build one from teacher trials, import skill libraries, retrieve.

The jobs (sync wrappers over async cores, loaded on first use):
:func:`build_bank`, :func:`import_skills`, :func:`retrieve` (see :mod:`agentcredit.skills.jobs`).
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentcredit.errors import IdConflict
    from agentcredit.skills.jobs import (
        BuildResult,
        ImportResult,
        build_bank,
        build_bank_from_paths,
        import_skills,
        import_skills_async,
        retrieve,
    )

__all__ = ["BuildResult", "IdConflict", "ImportResult", "build_bank", "build_bank_from_paths",
           "import_skills", "import_skills_async", "retrieve"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from agentcredit.skills import jobs

        return getattr(jobs, name)
    raise AttributeError(f"module 'agentcredit.skills' has no attribute {name!r}")
