"""One writer per run directory: a lock file holding the writer's pid.

A second ``run``/``judge`` on the same directory exits at once with a clear message. The
lock is written whole before it appears (a temporary file linked into place), so no process
ever reads a lock without its holder. A lock whose process no longer exists (killed, machine
restarted) is stale and taken over by exactly one process; one that names no process is
left alone, and the message says what to do.
"""

from __future__ import annotations

import contextlib
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
        mine = self.path.with_name(f"{LOCK_NAME}.{os.getpid()}.{time.monotonic_ns()}")
        mine.write_text(json.dumps({"pid": os.getpid(), "since": time.time()}),
                        encoding="utf-8")
        try:
            for _ in range(3):
                try:  # the lock appears whole, with its holder, or not at all
                    os.link(mine, self.path)
                    return self
                except FileExistsError:
                    self._take_over_stale()
            raise ConfigError(f"could not take the lock {self.path}")
        finally:
            mine.unlink(missing_ok=True)

    def _take_over_stale(self) -> None:
        """Remove the lock when its holder is provably gone, else say who holds it."""
        holder = self._holder()
        pid = holder.get("pid")
        if not isinstance(pid, int):
            raise ConfigError(f"{self.path} exists but names no process; if no agentcredit "
                              "command is using the folder, delete it and run again")
        if pid != os.getpid() and _alive(pid):
            since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(
                float(str(holder.get("since", 0)))))
            raise ConfigError(
                f"{self.path.parent} is in use by another agentcredit process (pid "
                f"{pid}, since {since}); wait for it to finish or stop it") from None
        moved = self.path.with_name(f"{LOCK_NAME}.stale.{os.getpid()}")
        try:
            os.rename(self.path, moved)  # one taker wins; check it moved the dead one
        except FileNotFoundError:
            return
        if self._holder(moved).get("pid") != pid:  # a live taker's fresh lock: put it back
            with contextlib.suppress(FileExistsError):
                os.link(moved, self.path)
            moved.unlink(missing_ok=True)
            raise ConfigError(f"{self.path.parent} was just taken by another agentcredit "
                              "process; wait for it to finish")
        self.stale = holder
        moved.unlink(missing_ok=True)

    def _holder(self, path: Path | None = None) -> dict[str, object]:
        try:
            value = json.loads((path or self.path).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return value if isinstance(value, dict) else {}

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if self._holder().get("pid") == os.getpid():
            self.path.unlink(missing_ok=True)
