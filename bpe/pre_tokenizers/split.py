"""Regex-driven pre-tokenizers: ``Pattern`` (our ``pattern=``), HF's ``Split``, ``ByteLevel``
and ``Sequence``.

Each stage is immutable and has ``pre_tokenize(text) -> list[str]`` (the pieces, in order;
stages that only cut add up to the text) and ``to_hf()``.  ``Pattern`` is the split of
tiktoken-style tokenizers: a named pattern (run by the compiled scanners on the fast path)
or a regex in tiktoken's syntax.  ``Split`` follows Hugging Face: the regex has Oniguruma's
meaning (see ``patterns.from_oniguruma``), the matches and the text between them become
pieces according to ``behavior``, and ``invert`` swaps their roles.  ``ByteLevel`` optionally
adds a leading space and splits with the GPT-2 regex; its byte-to-character mapping belongs
to the model (``bpe.models.bpe``), which works on UTF-8 bytes.

This module does not merge anything and does not know special tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import regex

from . import patterns

BEHAVIORS = ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous")

# the regex HF's ByteLevel pre-tokenizer splits with (use_regex=true); same splits as the
# "gpt2" pattern (its source is written differently: \s+(?!\S)|\s+ for \s++$|\s+(?!\S)|\s)
HF_BYTE_LEVEL_REGEX = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


class PreTokenizer:
    """Base of the pre-tokenizers."""

    def pre_tokenize(self, text: str) -> list[str]:  # pragma: no cover
        raise NotImplementedError

    def to_hf(self) -> dict:  # pragma: no cover
        raise NotImplementedError


@dataclass(frozen=True)
class Pattern(PreTokenizer):
    """The ``pattern=`` split: ``name`` (a named pattern, run by the scanners) or ``source``
    (a regex in tiktoken's syntax on the ``regex`` module); ``source=None``: no split."""

    source: Optional[str]
    name: Optional[str] = None

    @classmethod
    def from_argument(cls, pattern) -> "Pattern":
        name, source = patterns.resolve(pattern)
        if source is not None and name is None:
            patterns.compile_pattern(source)  # an invalid regex fails here
        return cls(source, name)

    def pre_tokenize(self, text: str) -> list[str]:
        if self.source is None:
            return [text] if text else []
        if self.name is not None:
            from .. import _reference_scan

            return _reference_scan.split(text, self.name)
        return patterns.split(patterns.compile_pattern(self.source), text)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where :meth:`pre_tokenize`'s pieces lie in ``text`` (they tile it)."""
        return _tiling(self.pre_tokenize(text))

    def to_hf(self) -> Optional[dict]:
        """Split (Oniguruma source) + ByteLevel without regex; ``None`` pattern: ByteLevel only."""
        byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
        if self.source is None:
            return byte_level
        split = {"type": "Split", "pattern": {"Regex": patterns.to_oniguruma(self.source)},
                 "behavior": "Isolated", "invert": False}
        return {"type": "Sequence", "pretokenizers": [split, byte_level]}


def cut(text: str, spans: list[tuple[int, int, bool]], behavior: str) -> list[str]:
    """HF's split of ``text`` given ``spans`` that tile it, ``(start, end, is_match)``."""
    return [text[s:e] for s, e in cut_spans(spans, behavior)]


def cut_spans(spans: list[tuple[int, int, bool]], behavior: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` of each piece of :func:`cut` (empty pieces left out)."""
    out: list[list[int]] = []  # [start, end] of each piece
    if behavior == "Removed":
        out = [[s, e] for s, e, m in spans if not m]
    elif behavior == "Isolated":
        out = [[s, e] for s, e, _ in spans]
    elif behavior == "MergedWithPrevious":
        previous_match = False
        for s, e, m in spans:
            if m and not previous_match and out:
                out[-1][1] = e
            else:
                out.append([s, e])
            previous_match = m
    elif behavior == "MergedWithNext":
        previous_match = False
        for s, e, m in reversed(spans):
            if m and not previous_match and out:
                out[-1][0] = s
            else:
                out.append([s, e])
            previous_match = m
        out.reverse()
    elif behavior == "Contiguous":
        previous_match = False
        for s, e, m in spans:
            if m == previous_match and out:
                out[-1][1] = e
            else:
                out.append([s, e])
            previous_match = m
    else:  # pragma: no cover - checked when the stage is built
        raise ValueError(behavior)
    return [(s, e) for s, e in out if e > s]


def _tiling(pieces: list[str]) -> list[tuple[int, int]]:
    """The spans of pieces that follow one another."""
    out, pos = [], 0
    for piece in pieces:
        out.append((pos, pos + len(piece)))
        pos += len(piece)
    return out


def match_spans(text: str, finder, invert: bool) -> list[tuple[int, int, bool]]:
    """The matches of ``finder(text)`` (an iterator of (start, end)) and the stretches
    between them, tiling ``text``; ``invert`` swaps which are the matches."""
    spans: list[tuple[int, int, bool]] = []
    prev = 0
    for s, e in finder(text):
        if s > prev:
            spans.append((prev, s, invert))
        spans.append((s, e, not invert))
        prev = e
    if prev < len(text):
        spans.append((prev, len(text), invert))
    return spans


@dataclass(frozen=True)
class Split(PreTokenizer):
    """HF's ``Split``: ``pattern`` a literal string, or an Oniguruma regex when ``is_regex``."""

    pattern: str
    behavior: str = "Isolated"
    invert: bool = False
    is_regex: bool = True

    def __post_init__(self):
        if self.behavior not in BEHAVIORS:
            raise ValueError(f"Split behavior must be one of {BEHAVIORS}, got {self.behavior!r}")
        if self.is_regex:
            patterns.compile_hf_regex(self.pattern)
        elif not self.pattern:  # HF splits around every character there; not reproduced
            raise ValueError("an empty literal pattern is not supported; pass the characters to split on")

    def _find(self, text: str):
        if self.is_regex:
            return ((m.start(), m.end()) for m in patterns.compile_hf_regex(self.pattern).finditer(text))
        return ((m.start(), m.end()) for m in regex.finditer(regex.escape(self.pattern), text))

    def pre_tokenize(self, text: str) -> list[str]:
        if not text:
            return []
        return cut(text, match_spans(text, self._find, self.invert), self.behavior)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where :meth:`pre_tokenize`'s pieces lie in ``text``."""
        return cut_spans(match_spans(text, self._find, self.invert), self.behavior) if text else []

    def named_pattern(self) -> Optional[str]:
        """The named pattern this split equals (Isolated, not inverted, a known source)."""
        if not self.is_regex or self.invert or self.behavior != "Isolated":
            return None
        return patterns.name_of_oniguruma_source(self.pattern)

    def to_hf(self) -> dict:
        key = "Regex" if self.is_regex else "String"
        return {"type": "Split", "pattern": {key: self.pattern}, "behavior": self.behavior,
                "invert": self.invert}


@dataclass(frozen=True)
class ByteLevel(PreTokenizer):
    """HF's ``ByteLevel``: a space before text that does not start with one
    (``add_prefix_space``), then the GPT-2 split (``use_regex``).  ``trim_offsets`` only
    concerns offsets."""

    add_prefix_space: bool = False
    use_regex: bool = True
    trim_offsets: bool = True

    def pre_tokenize(self, text: str) -> list[str]:
        if self.add_prefix_space and not text.startswith(" "):
            text = " " + text
        if not self.use_regex:
            return [text] if text else []
        return [m.group() for m in patterns.compile_hf_regex(HF_BYTE_LEVEL_REGEX).finditer(text)]

    def spans(self, text: str) -> list[tuple[int, int]]:
        """The pieces of the GPT-2 split (``use_regex``) in ``text``, a prefix space already
        added (see ``bpe.alignments``)."""
        if not self.use_regex:
            return [(0, len(text))] if text else []
        return [m.span() for m in patterns.compile_hf_regex(HF_BYTE_LEVEL_REGEX).finditer(text)]

    def to_hf(self) -> dict:
        return {"type": "ByteLevel", "add_prefix_space": self.add_prefix_space,
                "trim_offsets": self.trim_offsets, "use_regex": self.use_regex}


@dataclass(frozen=True)
class Sequence(PreTokenizer):
    """The pre-tokenizers one after the other, each on every piece of the one before."""

    pretokenizers: tuple

    def pre_tokenize(self, text: str) -> list[str]:
        pieces = [text] if text else []
        for stage in self.pretokenizers:
            pieces = [p for piece in pieces for p in stage.pre_tokenize(piece)]
        return pieces

    def to_hf(self) -> dict:
        return {"type": "Sequence", "pretokenizers": [p.to_hf() for p in self.pretokenizers]}
