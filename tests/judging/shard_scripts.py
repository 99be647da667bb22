"""Scripted judges that judging workers import (a worker makes its own client from the
function's module and name, so these live in a module, not in a test)."""

from __future__ import annotations

import multiprocessing
import os
import signal
import tempfile
from pathlib import Path
from typing import Any

from tests.judging import scripted_judge

KILL_FLAG = Path(tempfile.gettempdir()) / f"agentcredit-kill-a-worker-{os.getuid()}"
"""While this file exists, the first worker to answer a request removes it and kills
itself (SIGKILL: nothing of it is cleaned up)."""


def answer(messages: list[dict[str, Any]], schema: dict[str, Any] | None) -> str:
    """The scripted judge's answer (the process it runs in does not matter)."""
    return scripted_judge.answer(messages, schema)


def killing(messages: list[dict[str, Any]], schema: dict[str, Any] | None) -> str:
    """:func:`answer`, except that a worker that finds :data:`KILL_FLAG` dies first."""
    if multiprocessing.parent_process() is not None:
        try:
            KILL_FLAG.unlink()
        except FileNotFoundError:
            pass
        else:
            os.kill(os.getpid(), signal.SIGKILL)
    return scripted_judge.answer(messages, schema)
