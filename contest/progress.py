"""A progress line on a terminal, silence elsewhere (logs stay clean)."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    def __init__(self, total: int, label: str, unit: str = "rows",
                 stream: TextIO | None = None, enabled: bool | None = None):
        self.total = max(total, 1)
        self.label = label
        self.unit = unit
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.done = 0
        self.started = time.perf_counter()
        self._last = 0.0

    def advance(self, n: int, note: str = "") -> None:
        self.done += n
        now = time.perf_counter()
        if self.enabled and (now - self._last > 0.2 or self.done >= self.total):
            self._last = now
            frac = min(self.done / self.total, 1.0)
            elapsed = now - self.started
            eta = elapsed / frac - elapsed if frac > 0 else 0.0
            bar = "#" * int(frac * 30)
            self.stream.write(
                f"\r{self.label} [{bar:<30}] {frac:6.1%} {self.done:,}/{self.total:,} {self.unit}"
                f" {elapsed:5.0f}s elapsed, {eta:5.0f}s left {note}\x1b[K"
            )
            self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()
