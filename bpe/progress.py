"""A one-line progress display on stderr, with no dependency.

Used by training (bytes counted, merges learned): off by default in library calls, on in the
command line.  On a terminal it redraws one line at most every 0.2 s and finishes it on
``close``; elsewhere (a log file, CI) it writes a plain line at most every 10 s, with no
control characters.  It knows nothing about what it measures.
"""

from __future__ import annotations

import sys
import time
from typing import Optional, TextIO


class Progress:
    def __init__(self, enabled: bool = True, stream: Optional[TextIO] = None, interval: Optional[float] = None):
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.terminal = bool(isatty and isatty())
        self.interval = interval if interval is not None else (0.2 if self.terminal else 10.0)
        self._last = 0.0
        self._start = time.perf_counter()
        self._shown = False

    def update(self, message: str, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if force or now - self._last >= self.interval:
            self._last = now
            if self.terminal:
                self.stream.write(f"\r{message} [{now - self._start:.1f} s]\033[K")
                self._shown = True
            else:
                self.stream.write(f"{message} [{now - self._start:.1f} s]\n")
            self.stream.flush()

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
