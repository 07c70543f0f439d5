"""Every operation that changes orchestration state: one function per domain verb, one transaction, one
module per area (sessions, tasks, usage, questions, devteam; base: what they share). Callers import
from the area module."""
