"""agentcredit: evidence-grounded partial credit for AI-agent runs."""

from agentcredit.errors import AgentCreditError, ConfigError, InputError, PrerequisiteError
from agentcredit.formats import LoadResult, join_warnings, load, read_trajectory_file
from agentcredit.schema import Oracle, ReadError, Step, Task, Trial

__version__ = "0.1.0"

__all__ = [
    "AgentCreditError",
    "ConfigError",
    "InputError",
    "LoadResult",
    "Oracle",
    "PrerequisiteError",
    "ReadError",
    "Step",
    "Task",
    "Trial",
    "__version__",
    "join_warnings",
    "load",
    "read_trajectory_file",
]
