"""A progress bar for long operator commands and the benchmark's seeding."""

import sys
import time
from typing import TextIO


class Progress:
    """A bar redrawn in place on a terminal; on anything else (a log, a pipe) a plain line per 10%."""

    def __init__(self, label: str, total: int, *, stream: TextIO | None = None, unit: str = "rows") -> None:
        self.label, self.total, self.unit = label, total, unit
        self.stream = stream or sys.stderr
        self.started = time.monotonic()
        self._last_draw = 0.0
        self._last_decile = -1
        self._tty = self.stream.isatty()

    def update(self, done: int) -> None:
        now = time.monotonic()
        fraction = min(done / self.total, 1.0) if self.total else 1.0  # nothing to do is done
        if self._tty:
            if now - self._last_draw < 0.1 and done < self.total:
                return
            self._last_draw = now
            bar = "#" * int(fraction * 30)
            rate = done / max(now - self.started, 1e-9)
            self.stream.write(f"\r{self.label:<24} [{bar:<30}] {fraction:6.1%} {done:>10,}/{self.total:,} "
                              f"{rate:>10,.0f} {self.unit}/s")
            if done >= self.total:
                self.stream.write("\n")
            self.stream.flush()
        else:
            decile = int(fraction * 10)
            if decile != self._last_decile:
                self._last_decile = decile
                self.stream.write(f"{self.label}: {fraction:.0%} ({done:,}/{self.total:,}) "
                                  f"{now - self.started:.1f}s\n")
                self.stream.flush()
