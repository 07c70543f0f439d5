"""The admin's task graph of one session: its tasks in waves (selectors.session_task_graph), drawn as
fixed-size boxes in flex columns (ralphsite/static/ralphsite/admin.css repeats the sizes below) with
the dependency edges as inline SVG curves computed here. Server-rendered, no JavaScript, no inline
style (the pages run under a strict Content-Security-Policy)."""

import re
from dataclasses import dataclass, field
from typing import Any

from django.urls import reverse

from sessions_app.models import TaskStatus

BOX_WIDTH, BOX_HEIGHT = 210, 86
COLUMN_GAP, ROW_GAP = 60, 14
HEADER_HEIGHT = 30  # the "Wave N" label above each column
# How far an edge's curve leaves its box horizontally before bending towards the other one.
CURVE = COLUMN_GAP * 0.6


@dataclass
class Box:
    task: dict[str, Any]
    url: str
    left: int
    top: int
    in_cycle: bool = False
    behind_failure: list[str] = field(default_factory=list)  # failed or cancelled tasks it waits for

    @property
    def status_label(self) -> str:
        status = self.task["status"]
        return dict(TaskStatus.choices).get(status, status)  # a status outside the enum shows as stored


@dataclass
class Column:
    label: str
    left: int
    boxes: list[Box] = field(default_factory=list)


@dataclass
class Edge:
    path: str
    title: str
    long: bool  # skips a column: drawn dashed, over the boxes it crosses, so it is not mistaken for theirs


@dataclass
class TaskGraphLayout:
    columns: list[Column]
    edges: list[Edge]
    width: int
    height: int
    cyclic_keys: list[str]
    task_count: int
    wave_count: int
    box_width: int = BOX_WIDTH
    box_height: int = BOX_HEIGHT

    @property
    def short_edges(self) -> list[Edge]:
        return [edge for edge in self.edges if not edge.long]

    @property
    def long_edges(self) -> list[Edge]:
        return [edge for edge in self.edges if edge.long]


def natural_key(key: str) -> tuple[tuple[int, int | str], ...]:
    """A task key as people count it: t-2 before t-10 (digits compare as numbers)."""
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", key) if part)


def task_graph_layout(graph: dict[str, Any]) -> TaskGraphLayout:
    """Wave N is column N; a task's row is its place in the wave (by key, naturally: t-2 before t-10).
    Tasks on or behind a cycle sit in a last column of their own. An edge is drawn from a dependency's right side to the
    dependent's left side when the dependency is in an earlier column; one between adjacent columns
    stays in the gap, a longer one crosses the columns between (the template draws it over them)."""
    groups = [(f"Wave {number}", layer, False) for number, layer in enumerate(graph["waves"], start=1)]
    if graph["cyclic"]:
        groups.append(("Cycle (no wave)", graph["cyclic"], True))
    columns: list[Column] = []
    placed: dict[str, tuple[int, Box]] = {}
    for index, (label, tasks, in_cycle) in enumerate(groups):
        column = Column(label=label, left=index * (BOX_WIDTH + COLUMN_GAP))
        for row, task in enumerate(sorted(tasks, key=lambda task: natural_key(task["key"]))):
            box = Box(task=task, url=reverse("admin:sessions_app_task_change", args=[task["id"]]),
                      left=column.left, top=HEADER_HEIGHT + row * (BOX_HEIGHT + ROW_GAP), in_cycle=in_cycle)
            column.boxes.append(box)
            placed[task["key"]] = (index, box)
        columns.append(column)
    edges = []
    for key, depends_on in graph["edges"]:
        (to_column, to), (from_column, start) = placed[key], placed[depends_on]
        if from_column >= to_column:  # inside the cycle column: listed on the boxes, not drawn
            continue
        x1, y1 = start.left + BOX_WIDTH, start.top + BOX_HEIGHT / 2
        x2, y2 = to.left, to.top + BOX_HEIGHT / 2
        edges.append(Edge(path=f"M{x1:g},{y1:g} C{x1 + CURVE:g},{y1:g} {x2 - CURVE:g},{y2:g} {x2 - 6:g},{y2:g}",
                          title=f"{key} depends on {depends_on}", long=to_column - from_column > 1))
    statuses = {key: box.task["status"] for key, (_column, box) in placed.items()}
    for _column, box in placed.values():
        if box.task["status"] in (TaskStatus.NOT_STARTED, TaskStatus.BLOCKED):
            box.behind_failure = [key for key in box.task["depends_on"]
                                  if statuses.get(key) in (TaskStatus.FAILED, TaskStatus.CANCELLED)]
    tallest = max((len(column.boxes) for column in columns), default=0)
    return TaskGraphLayout(
        columns=columns, edges=edges,
        width=max(len(columns) * (BOX_WIDTH + COLUMN_GAP) - COLUMN_GAP, 0),
        height=HEADER_HEIGHT + max(tallest * (BOX_HEIGHT + ROW_GAP) - ROW_GAP, 0),
        cyclic_keys=[task["key"] for task in graph["cyclic"]],
        task_count=len(placed),
        wave_count=len(graph["waves"]),
    )


def status_legend() -> list[tuple[str, str]]:
    """(value, label) of every task status, for the colour legend."""
    return list(TaskStatus.choices)
