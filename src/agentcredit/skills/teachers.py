"""The teacher trials a bank is built from, gathered in one read with bounded memory.

A build shows each teacher (agent + model) its own trials of a task in one stage-1 prompt.
GRPO rollouts and benchmark sweeps give a teacher hundreds of trials of one task: more than
any prompt can show (each trial's view gets at least 300 tokens). So at most
:data:`TEACHER_TRIALS` of them are kept per task and teacher while the trials stream by:
the successes, the failures and the trials without an outcome take turns, each class in
the order of a hash of the trial ids (the same choice every run, whatever order the trials
are read in), and the kept trials are shown in the order they were read. A group of at
most that many trials is kept whole, in order: its prompt is the one it always was.

What the gates need of every trial (the tool names seen, the trial ids) is gathered from
all of them; the trials themselves are dropped as they pass, except the kept ones.
"""

from __future__ import annotations

import hashlib
import heapq
from collections.abc import Iterable
from dataclasses import dataclass, field

from agentcredit.schema import Task, Trial
from agentcredit.skills.tool_names import ToolOrigin, seen_tools

TEACHER_TRIALS = 32
"""Trials of one teacher on one task that its stage-1 prompt shows at most."""
_CLASSES = ("pass", "fail", "none")


def teacher_of(trial: Trial) -> str:
    """``agent+model`` of a trial (``unknown`` parts where not recorded)."""
    agent = trial.agent.name if trial.agent else "unknown-agent"
    return f"{agent}+{trial.model or 'unknown-model'}"


def _rank(trial_id: str) -> int:
    return int.from_bytes(hashlib.sha256(trial_id.encode("utf-8", "surrogatepass")).digest()[:8])


@dataclass
class _Group:
    """One task and teacher: per outcome class, the kept trials as a heap whose top is the
    one to drop next (the largest hash rank), with each one's place in the read order."""

    heaps: dict[str, list[tuple[int, int, Trial]]] = field(
        default_factory=lambda: {c: [] for c in _CLASSES})
    size: int = 0

    def offer(self, trial: Trial, order: int, keep: int) -> None:
        self.size += 1
        heap = self.heaps[trial.outcome if trial.outcome in _CLASSES else "none"]
        entry = (-_rank(trial.id), order, trial)
        if len(heap) < keep:
            heapq.heappush(heap, entry)
        elif entry[0] > heap[0][0]:
            heapq.heapreplace(heap, entry)

    def chosen(self, keep: int) -> list[Trial]:
        """Up to ``keep`` trials, the classes taking turns, in the order they were read."""
        queues = [sorted(self.heaps[c], reverse=True) for c in _CLASSES]  # best rank first
        taken: list[tuple[int, Trial]] = []
        while len(taken) < keep and any(queues):
            for queue in queues:
                if queue and len(taken) < keep:
                    _, order, trial = queue.pop(0)
                    taken.append((order, trial))
        return [trial for _, trial in sorted(taken, key=lambda pair: pair[0])]


@dataclass
class Teachers:
    """What a build learns from: per task and teacher the chosen trials, every trial id and
    tool name seen, and the trials that cannot teach (with why)."""

    groups: dict[str, dict[str, list[Trial]]]
    """task id -> teacher -> the chosen trials, in read order."""
    sizes: dict[str, dict[str, int]]
    """task id -> teacher -> how many usable trials the teacher had."""
    tools: dict[str, dict[str, ToolOrigin]]
    """task id -> the tool names seen in its usable trials (first place seen)."""
    ids: dict[str, set[str]]
    """task id -> the ids of its usable trials."""
    skipped: list[tuple[str, str]]
    read: int

    @classmethod
    def gather(cls, trials: Iterable[Trial], tasks: Iterable[Task] | None = None, *,
               keep: int = TEACHER_TRIALS) -> Teachers:
        """One read of ``trials`` (a list or a stream). ``tasks``: the tasks a trial must
        belong to; None: any task, filtered later with :meth:`for_tasks` (a stream learns
        its tasks as it reads)."""
        known = None if tasks is None else {t.id for t in tasks}
        groups: dict[str, dict[str, _Group]] = {}
        found = cls({}, {}, {}, {}, [], 0)
        for order, trial in enumerate(trials):
            found.read += 1
            task_id = trial.task_id
            if task_id is None or (known is not None and task_id not in known):
                found.skipped.append((trial.id, f"task {task_id!r} not among the tasks"))
            elif not trial.steps:
                found.skipped.append((trial.id, "no trajectory steps"))
            else:
                found.ids.setdefault(task_id, set()).add(trial.id)
                tools = found.tools.setdefault(task_id, {})
                for name, origin in seen_tools([trial]).items():
                    tools.setdefault(name, origin)
                groups.setdefault(task_id, {}).setdefault(
                    teacher_of(trial), _Group()).offer(trial, order, keep)
        found.groups = {task: {name: g.chosen(keep) for name, g in teachers.items()}
                        for task, teachers in groups.items()}
        found.sizes = {task: {name: g.size for name, g in teachers.items()}
                       for task, teachers in groups.items()}
        return found

    def for_tasks(self, tasks: Iterable[Task]) -> Teachers:
        """Only the groups of ``tasks``; the trials of other tasks become skipped ones (the
        ones not kept, counted in one line per teacher)."""
        known = {t.id for t in tasks}
        skipped = list(self.skipped)
        for task_id in sorted(set(self.groups) - known):
            reason = f"task {task_id!r} not among the tasks"
            for teacher, group in sorted(self.groups[task_id].items()):
                skipped += [(trial.id, reason) for trial in group]
                if (more := self.sizes[task_id][teacher] - len(group)) > 0:
                    skipped.append((f"{more} more of {teacher}", reason))
        kept = sorted(set(self.groups) & known)
        return Teachers({t: self.groups[t] for t in kept}, {t: self.sizes[t] for t in kept},
                        {t: self.tools[t] for t in kept}, {t: self.ids[t] for t in kept},
                        skipped, self.read)

    @property
    def usable(self) -> int:
        """Usable trials (steps, and a task among the tasks), kept or not."""
        return sum(n for teachers in self.sizes.values() for n in teachers.values())

    def all_tools(self) -> dict[str, ToolOrigin]:
        """The tool names seen in every group's trials (the first place, by task)."""
        merged: dict[str, ToolOrigin] = {}
        for task_id in sorted(self.tools):
            for name, origin in self.tools[task_id].items():
                merged.setdefault(name, origin)
        return merged

    def notes(self) -> list[str]:
        """One line per task and teacher whose trials were more than a prompt shows."""
        return [f"{task} / {teacher}: {size} trials, the prompt shows "
                f"{len(self.groups[task][teacher])} (successes and failures in turn)"
                for task, teachers in sorted(self.sizes.items())
                for teacher, size in sorted(teachers.items())
                if size > len(self.groups[task][teacher])]
