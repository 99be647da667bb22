"""One writer per run directory: a lock file holding the writer's pid.

A second ``run``/``judge`` on the same directory exits at once with a clear message. A lock
left by a process that no longer exists (killed, machine restarted) is stale and taken over.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from types import TracebackType

from agentcredit.errors import ConfigError

LOCK_NAME = "run.lock"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    return True


class RunLock:
    """``with RunLock(run_dir):`` — held for the life of one command."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / LOCK_NAME
        self.stale: dict[str, object] | None = None

    def __enter__(self) -> RunLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(2):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                holder = self._holder()
                pid = holder.get("pid")
                if isinstance(pid, int) and pid != os.getpid() and _alive(pid):
                    since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(
                        float(str(holder.get("since", 0)))))
                    raise ConfigError(
                        f"{self.path.parent} is in use by another agentcredit process (pid "
                        f"{pid}, since {since}); wait for it to finish or stop it") from None
                self.stale = holder
                self.path.unlink(missing_ok=True)  # stale: its process is gone
                continue
            with os.fdopen(fd, "w") as handle:
                json.dump({"pid": os.getpid(), "since": time.time()}, handle)
            return self
        raise ConfigError(f"could not take the lock {self.path}")

    def _holder(self) -> dict[str, object]:
        try:
            value = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return value if isinstance(value, dict) else {}

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if self._holder().get("pid") == os.getpid():
            self.path.unlink(missing_ok=True)
