"""A one-line progress display on stderr, with no dependency.

Used by training (bytes counted, merges learned): off by default in library calls, on in the
command line.  It redraws at most every 0.2 s and finishes the line on ``close``.  It knows
nothing about what it measures.
"""

from __future__ import annotations

import sys
import time
from typing import Optional, TextIO


class Progress:
    def __init__(self, enabled: bool = True, stream: Optional[TextIO] = None, interval: float = 0.2):
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self._last = 0.0
        self._start = time.perf_counter()
        self._shown = False

    def update(self, message: str, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if force or now - self._last >= self.interval:
            self._last = now
            self.stream.write(f"\r{message} [{now - self._start:.1f} s]\033[K")
            self.stream.flush()
            self._shown = True

    def close(self, message: Optional[str] = None) -> None:
        if not self.enabled:
            return
        if message is not None:
            self.update(message, force=True)
        if self._shown:
            self.stream.write("\n")
            self.stream.flush()
        self._shown = False


def bar(done: int, total: int, width: int = 24) -> str:
    filled = int(width * done / total) if total else width
    return "[" + "#" * filled + "." * (width - filled) + f"] {done:,}/{total:,}"
