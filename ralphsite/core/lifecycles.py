"""Declared lifecycles: which value of a status field may follow which.

Each lifecycle is one table, declared once next to its enum in the domain (a model module) and applied by
the service verb every door calls; the schema descriptions and docs/resources.md print the same table.
A change the table does not allow is a 409 `invalid_transition` naming the allowed next values.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ralphsite.core.errors import Conflict


@dataclass(frozen=True)
class Lifecycle:
    """`moves[a]` is the values `a` may become. Staying at a value is no change and always allowed
    (an annotation or a note may be written with the same status)."""

    name: str
    moves: Mapping[str, frozenset[str]]

    def __post_init__(self) -> None:
        known = set(self.moves)
        unknown = {target for targets in self.moves.values() for target in targets} - known
        if unknown:  # a table naming a value it does not declare is a programming error
            raise ValueError(f"{self.name}: moves to undeclared values {sorted(unknown)}")

    def allowed(self, current: str) -> list[str]:
        return sorted(self.moves.get(current, frozenset()))

    def allows(self, current: str, new: str) -> bool:
        return current == new or new in self.moves.get(current, frozenset())

    def check(self, *, current: str, new: str, subject: str) -> None:
        """Raise 409 `invalid_transition` when `current` may not become `new`."""
        if self.allows(current, new):
            return
        allowed = self.allowed(current)
        raise Conflict(f"{subject} cannot go from {current or '(none)'} to {new}: {self.name} allows "
                       + (f"{', '.join(allowed)} next." if allowed else "nothing next."),
                       code="invalid_transition",
                       details={"lifecycle": self.name, "from": current, "to": new, "allowed": allowed})

    def refused(self) -> Iterable[tuple[str, str]]:
        """Every (from, to) pair the table refuses: the walker tests walk them all."""
        for current in self.moves:
            for new in self.moves:
                if not self.allows(current, new):
                    yield current, new

    def describe(self) -> str:
        """The table as one line per value, for the schema's descriptions and the docs."""
        return "; ".join(f"{current or '(none)'} → {', '.join(self.allowed(current)) or 'nothing (final)'}"
                         for current in self.moves)
