"""The jobs apps hand to every server process's upkeep thread (`ralphsite.server.upkeep` runs them).

Apps register their jobs here, in the base layer, from their AppConfig.ready(); the thread that runs
them belongs to the server, which apps do not import.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class UpkeepJob:
    """A callable run on the upkeep thread's own database connection."""

    name: str
    run: Callable[[], Any]
    every_seconds: float = 0.0  # 0: at every tick
    idle_only: bool = True
    exclusive: bool = False


_jobs: dict[str, UpkeepJob] = {}


def upkeep_job_register(job: UpkeepJob) -> None:
    """Add (or replace, by name) a job that every server process's upkeep thread runs."""
    _jobs[job.name] = job


def upkeep_jobs() -> list[UpkeepJob]:
    """The registered jobs, in registration order (a copy: a job may be registered while they run)."""
    return list(_jobs.values())
