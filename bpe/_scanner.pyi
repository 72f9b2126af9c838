"""Type stubs for the compiled pre-tokenizer (bpe/_scanner.pyx)."""

from __future__ import annotations

PATTERN_IDS: dict[str, int]

def split(text: str, pattern: str) -> list[str]: ...
def count(text: str, pattern: str) -> int: ...
