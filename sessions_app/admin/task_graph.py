"""The admin's task graph of one session: its tasks in waves (selectors.session_task_graph), drawn as a
list of waves, each a fold of fixed-size boxes that wrap to the page's width (ralphsite/static/ralphsite/
admin.css). The waves that need the operator come first and open (the current one and the next); the
later ones and the finished ones are folded, so a graph of a thousand tasks reads as a few boxes and a
list of summaries. Tasks filter by status and agent. Server-rendered, no inline script or style (the
pages run under a strict Content-Security-Policy); what runs in the browser only keeps folds open
across the console's live redraws (ralphsite/static/ralphsite/live.js)."""

import re
from dataclasses import dataclass, field
from typing import Any

from django.urls import reverse

from sessions_app.models import TASK_ENDED_STATUSES, TaskStatus

# A wave whose tasks all ended this way needs nobody: it is folded. A failed task keeps its wave open.
SETTLED_STATUSES = TASK_ENDED_STATUSES - {TaskStatus.FAILED}


@dataclass
class Box:
    task: dict[str, Any]
    url: str
    in_cycle: bool = False
    behind_failure: list[str] = field(default_factory=list)  # failed or cancelled tasks it waits for

    @property
    def status_label(self) -> str:
        status = self.task["status"]
        return dict(TaskStatus.choices).get(status, status)  # a status outside the enum shows as stored


@dataclass
class Wave:
    number: int | None  # None: the tasks on or behind a cycle
    boxes: list[Box]  # the tasks the filters let through, in natural key order
    counts: list[tuple[str, str, int]]  # (status, label, how many) of all its tasks, whatever the filters
    total: int
    place: str = ""  # "current", "next" or "" (later, finished or the cycle)
    settled: bool = False  # every task completed, cancelled or skipped
    open: bool = False

    @property
    def label(self) -> str:
        return f"Wave {self.number}" if self.number is not None else "Cycle (no wave)"

    @property
    def anchor(self) -> str:
        return f"tg-wave-{self.number}" if self.number is not None else "tg-wave-cycle"


@dataclass
class TaskGraphLayout:
    waves: list[Wave]  # in reading order: current, next, the later ones, the cycle, the finished ones
    cyclic_keys: list[str]
    task_count: int
    wave_count: int
    shown_count: int  # the tasks the filters let through
    agents: list[str]  # every agent a task is assigned to, for the agent filter
    status: str = ""
    agent: str = ""

    @property
    def filtered(self) -> bool:
        return bool(self.status or self.agent)


def natural_key(key: str) -> tuple[tuple[int, int | str], ...]:
    """A task key as people count it: t-2 before t-10 (digits compare as numbers)."""
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", key) if part)


def _counts(tasks: list[dict[str, Any]]) -> list[tuple[str, str, int]]:
    labels = dict(TaskStatus.choices)
    counted: dict[str, int] = {}
    for task in tasks:
        counted[task["status"]] = counted.get(task["status"], 0) + 1
    return [(status, labels.get(status, status), count) for status, count in counted.items()]


def task_graph_layout(graph: dict[str, Any], *, status: str = "", agent: str = "") -> TaskGraphLayout:
    """Wave N holds the tasks of Kahn layer N (by key, naturally: t-2 before t-10); the tasks on or behind
    a cycle are a group of their own. The first wave not settled is the current one; it and the next are
    open, the others folded. With a filter (a status, an agent), only matching tasks are drawn, in open
    waves; a wave with none is left out."""
    statuses = {task["key"]: task["status"] for layer in (*graph["waves"], graph["cyclic"]) for task in layer}
    groups = [(number, layer) for number, layer in enumerate(graph["waves"], start=1)]
    if graph["cyclic"]:
        groups.append((None, graph["cyclic"]))
    waves: list[Wave] = []
    for number, tasks in groups:
        boxes = []
        for task in sorted(tasks, key=lambda task: natural_key(task["key"])):
            if (status and task["status"] != status) or (agent and task["assigned_agent"] != agent):
                continue
            box = Box(task=task, url=reverse("admin:sessions_app_task_change", args=[task["id"]]),
                      in_cycle=number is None)
            if task["status"] in (TaskStatus.NOT_STARTED, TaskStatus.BLOCKED):
                box.behind_failure = [key for key in task["depends_on"]
                                      if statuses.get(key) in (TaskStatus.FAILED, TaskStatus.CANCELLED)]
            boxes.append(box)
        waves.append(Wave(number=number, boxes=boxes, counts=_counts(tasks), total=len(tasks),
                          settled=all(task["status"] in SETTLED_STATUSES for task in tasks)))
    waiting = [wave for wave in waves if not wave.settled and wave.number is not None]
    for wave, place in zip(waiting, ("current", "next"), strict=False):
        wave.place, wave.open = place, True
    filtered = bool(status or agent)
    if filtered:
        waves = [wave for wave in waves if wave.boxes]
        for wave in waves:
            wave.open = True
    order = {"current": 0, "next": 1}
    waves.sort(key=lambda wave: (order.get(wave.place, 3 if wave.settled else 2),
                                 wave.number if wave.number is not None else len(groups)))
    return TaskGraphLayout(
        waves=waves,
        cyclic_keys=[task["key"] for task in graph["cyclic"]],
        task_count=len(statuses),
        wave_count=len(graph["waves"]),
        shown_count=sum(len(wave.boxes) for wave in waves),
        agents=sorted({task["assigned_agent"] for layer in (*graph["waves"], graph["cyclic"])
                       for task in layer if task["assigned_agent"]}),
        status=status, agent=agent,
    )


def status_legend() -> list[tuple[str, str]]:
    """(value, label) of every task status, for the colour legend and the status filter."""
    return list(TaskStatus.choices)
