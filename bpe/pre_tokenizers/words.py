"""Word-level pre-tokenizers of Hugging Face: ``Whitespace``, ``WhitespaceSplit``,
``Punctuation``, ``Digits`` and ``Metaspace`` (SentencePiece's ``▁`` for spaces).

Immutable stages with ``pre_tokenize(text) -> list[str]`` and ``to_hf()``, with HF's
semantics (see ``split.cut`` for the behaviors).  They do not merge or know special tokens.
"""

from __future__ import annotations

import string
import unicodedata
from dataclasses import dataclass

import regex

from ..normalizers import WHITE_SPACE
from .split import BEHAVIORS, PreTokenizer, cut, cut_spans, match_spans

_WORDS = regex.compile(r"\w+|[^\w\s]+")
_WHITE = frozenset(WHITE_SPACE)
_ASCII_PUNCTUATION = frozenset(string.punctuation)


def _char_finder(test):
    def finder(text: str):
        return ((i, i + 1) for i, c in enumerate(text) if test(c))
    return finder


def _is_punctuation(c: str) -> bool:
    return c in _ASCII_PUNCTUATION or unicodedata.category(c).startswith("P")


def _is_numeric(c: str) -> bool:
    return unicodedata.category(c) in ("Nd", "Nl", "No")


@dataclass(frozen=True)
class Whitespace(PreTokenizer):
    """Runs of word characters and runs of other non-space characters (``\\w+|[^\\w\\s]+``)."""

    def pre_tokenize(self, text: str) -> list[str]:
        return _WORDS.findall(text)

    def spans(self, text: str) -> list[tuple[int, int]]:
        return [m.span() for m in _WORDS.finditer(text)]

    def to_hf(self) -> dict:
        return {"type": "Whitespace"}


@dataclass(frozen=True)
class WhitespaceSplit(PreTokenizer):
    """The text cut at white space, which is dropped."""

    def pre_tokenize(self, text: str) -> list[str]:
        return cut(text, match_spans(text, _char_finder(_WHITE.__contains__), False), "Removed")

    def spans(self, text: str) -> list[tuple[int, int]]:
        return cut_spans(match_spans(text, _char_finder(_WHITE.__contains__), False), "Removed")

    def to_hf(self) -> dict:
        return {"type": "WhitespaceSplit"}


@dataclass(frozen=True)
class Punctuation(PreTokenizer):
    """Each punctuation character a match, placed by ``behavior``."""

    behavior: str = "Isolated"

    def __post_init__(self):
        if self.behavior not in BEHAVIORS:
            raise ValueError(f"Punctuation behavior must be one of {BEHAVIORS}, got {self.behavior!r}")

    def pre_tokenize(self, text: str) -> list[str]:
        return cut(text, match_spans(text, _char_finder(_is_punctuation), False), self.behavior)

    def spans(self, text: str) -> list[tuple[int, int]]:
        return cut_spans(match_spans(text, _char_finder(_is_punctuation), False), self.behavior)

    def to_hf(self) -> dict:
        return {"type": "Punctuation", "behavior": self.behavior}


@dataclass(frozen=True)
class Digits(PreTokenizer):
    """Numeric characters apart from the rest: one piece each (``individual_digits``) or
    one piece per run."""

    individual_digits: bool = False

    def pre_tokenize(self, text: str) -> list[str]:
        return cut(text, match_spans(text, _char_finder(_is_numeric), False), self._behavior)

    def spans(self, text: str) -> list[tuple[int, int]]:
        return cut_spans(match_spans(text, _char_finder(_is_numeric), False), self._behavior)

    @property
    def _behavior(self) -> str:
        return "Isolated" if self.individual_digits else "Contiguous"

    def to_hf(self) -> dict:
        return {"type": "Digits", "individual_digits": self.individual_digits}


def check_metaspace(replacement: str, prepend_scheme: str) -> None:
    """Metaspace's options, as the pre-tokenizer and the decoder take them."""
    if prepend_scheme not in ("always", "first", "never"):
        raise ValueError(f"Metaspace prepend_scheme must be 'always', 'first' or 'never', got {prepend_scheme!r}")
    if not isinstance(replacement, str) or len(replacement) != 1:
        raise ValueError(f"Metaspace replacement must be one character, got {replacement!r}")


@dataclass(frozen=True)
class Metaspace(PreTokenizer):
    """Spaces become ``replacement``; it is put before the text (``prepend_scheme``
    ``"always"``, or ``"first"`` for the first stretch of a text only, ``"never"``) unless
    the text starts with it; with ``split`` the text is cut before each replacement."""

    replacement: str = "\u2581"
    prepend_scheme: str = "always"
    split: bool = True

    def __post_init__(self):
        check_metaspace(self.replacement, self.prepend_scheme)

    def pre_tokenize(self, text: str, first: bool = True) -> list[str]:
        if not text:
            return []
        text = text.replace(" ", self.replacement)
        if (self.prepend_scheme == "always" or (self.prepend_scheme == "first" and first)) \
                and not text.startswith(self.replacement):
            text = self.replacement + text
        if not self.split:
            return [text]
        r = self.replacement
        return cut(text, match_spans(text, _char_finder(r.__eq__), False), "MergedWithNext")

    def to_hf(self) -> dict:
        return {"type": "Metaspace", "replacement": self.replacement, "prepend_scheme": self.prepend_scheme,
                "split": self.split}
