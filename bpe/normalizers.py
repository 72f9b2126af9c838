"""Normalizers: the first pipeline stage, which rewrites text before it is split.

Each normalizer is a small immutable object with ``normalize(text) -> str`` and ``to_hf()``
(its Hugging Face ``tokenizer.json`` form); they follow the semantics of Hugging Face
``tokenizers``: Unicode normal forms (``NFC``, ``NFD``, ``NFKC``, ``NFKD``), ``Lowercase``
(character by character, no context rules), ``Strip`` (Unicode ``White_Space`` at either
end), ``Replace`` (a literal string or a regex, every occurrence), ``Prepend`` (only before
non-empty text) and ``Sequence``.  ``unicode_form(normalizer)`` tells the planner when a
normalizer is one plain normal form, which the fast path applies with ``unicodedata``.

This module does not track how characters move (offsets are the offsets work's) and does not
read files (``bpe.io.huggingface`` builds these objects from JSON).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Optional, Union

import regex

from .errors import ArgumentError, PatternError

FORMS = ("NFC", "NFD", "NFKC", "NFKD")

# Unicode White_Space (Rust's char::is_whitespace, which HF's Strip uses); str.strip() would
# also take U+001C..U+001F, which are not White_Space
WHITE_SPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + \
    "\u2028\u2029\u202f\u205f\u3000"


class Normalizer:
    """Base of the normalizers (each is immutable; compare by value)."""

    def normalize(self, text: str) -> str:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def to_hf(self) -> dict:  # pragma: no cover
        raise NotImplementedError


@dataclass(frozen=True)
class UnicodeForm(Normalizer):
    """One of the Unicode normal forms: ``UnicodeForm("NFC")`` etc."""

    form: str

    def __post_init__(self):
        if self.form not in FORMS:
            raise ArgumentError(f"normalization must be one of {FORMS} or None, got {self.form!r}")

    def normalize(self, text: str) -> str:
        return unicodedata.normalize(self.form, text)

    def to_hf(self) -> dict:
        return {"type": self.form}


def NFC() -> UnicodeForm:
    return UnicodeForm("NFC")


def NFD() -> UnicodeForm:
    return UnicodeForm("NFD")


def NFKC() -> UnicodeForm:
    return UnicodeForm("NFKC")


def NFKD() -> UnicodeForm:
    return UnicodeForm("NFKD")


@dataclass(frozen=True)
class Lowercase(Normalizer):
    """Each character lowercased on its own (as HF: a final sigma stays ``σ``)."""

    def normalize(self, text: str) -> str:
        if text.isascii():
            return text.lower()
        return "".join([c.lower() for c in text])

    def to_hf(self) -> dict:
        return {"type": "Lowercase"}


@dataclass(frozen=True)
class Strip(Normalizer):
    """Remove Unicode white space from the start (``left``) and/or the end (``right``)."""

    left: bool = True
    right: bool = True

    def normalize(self, text: str) -> str:
        if self.left:
            text = text.lstrip(WHITE_SPACE)
        if self.right:
            text = text.rstrip(WHITE_SPACE)
        return text

    def to_hf(self) -> dict:
        return {"type": "Strip", "strip_left": self.left, "strip_right": self.right}


@dataclass(frozen=True)
class Replace(Normalizer):
    """Replace every occurrence of ``pattern`` (a literal string, or a regex when
    ``is_regex``) with ``content``."""

    pattern: str
    content: str
    is_regex: bool = False

    def __post_init__(self):
        # a bad regex fails when the stage is built.  A pattern that matches the empty string
        # is refused: HF's regex engines and Python's find empty matches at different places
        # (Python also right after a non-empty match), so the results would differ.
        matches_empty = (_compiled(self.pattern).search("") is not None) if self.is_regex else self.pattern == ""
        if matches_empty:
            raise ValueError(f"the pattern {self.pattern!r} matches the empty string; pass one that matches at "
                             "least one character")

    def normalize(self, text: str) -> str:
        if self.is_regex:
            return _compiled(self.pattern).sub(lambda m: self.content, text)
        return text.replace(self.pattern, self.content)

    def to_hf(self) -> dict:
        key = "Regex" if self.is_regex else "String"
        return {"type": "Replace", "pattern": {key: self.pattern}, "content": self.content}


@dataclass(frozen=True)
class Prepend(Normalizer):
    """Put ``prepend`` before the text, unless the text is empty."""

    prepend: str

    def normalize(self, text: str) -> str:
        return self.prepend + text if text else text

    def to_hf(self) -> dict:
        return {"type": "Prepend", "prepend": self.prepend}


@dataclass(frozen=True)
class Sequence(Normalizer):
    """The normalizers one after the other."""

    normalizers: tuple

    def normalize(self, text: str) -> str:
        for n in self.normalizers:
            text = n.normalize(text)
        return text

    def to_hf(self) -> dict:
        return {"type": "Sequence", "normalizers": [n.to_hf() for n in self.normalizers]}


def unicode_form(normalizer: Optional[Normalizer]) -> Optional[str]:
    """``"NFC"`` etc. when ``normalizer`` is just that normal form (also inside a one-item
    ``Sequence``), else ``None``."""
    while isinstance(normalizer, Sequence) and len(normalizer.normalizers) == 1:
        normalizer = normalizer.normalizers[0]
    return normalizer.form if isinstance(normalizer, UnicodeForm) else None


def from_name(name: Union[str, None, Normalizer]) -> Optional[Normalizer]:
    """The ``normalization=`` argument (``None``, ``"NFC"``, ... or a normalizer) as a stage."""
    if name is None or isinstance(name, Normalizer):
        return name
    if isinstance(name, str) and name in FORMS:
        return UnicodeForm(name)
    raise ArgumentError(f"normalization must be one of {FORMS} or None, got {name!r}")


def _compiled(pattern: str):
    from .pre_tokenizers.patterns import compile_hf_regex

    try:
        return compile_hf_regex(pattern)
    except PatternError as exc:
        raise PatternError(f"Replace normalizer: {exc}") from None
