"""Decoders: how the strings of tokens become text again, for pipelines that are not plain
byte-level (byte-level ones join token bytes in the compiled core).

Immutable stages with ``decode_chain(tokens: list[str]) -> list[str]`` and ``to_hf()``, with
Hugging Face's semantics: ``ByteLevel`` (GPT-2's display characters back to bytes, then UTF-8
with U+FFFD for bad bytes), ``Metaspace`` (``▁`` back to spaces; the first token loses its
``▁``), ``ByteFallback`` (``<0xNN>`` tokens to bytes, U+FFFD per byte when they are not valid
UTF-8), ``Fuse`` (one string), ``Strip`` (a character off each token's ends), ``Replace`` and
``Sequence``.  They do not map ids to strings (the model does).
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from typing import Optional

import regex

from . import normalizers
from .byte_unicode import char_to_byte
from .pre_tokenizers.words import check_metaspace


class Decoder:
    #: whether this decoder (or one in its chain) joins runs of ``<0xNN>`` tokens into bytes
    byte_fallback_in_chain = False

    def decode_chain(self, tokens: list[str]) -> list[str]:  # pragma: no cover
        raise NotImplementedError

    def to_hf(self) -> dict:  # pragma: no cover
        raise NotImplementedError

    def decode(self, tokens: list[str]) -> str:
        return "".join(self.decode_chain(list(tokens)))


@dataclass(frozen=True)
class ByteLevel(Decoder):
    add_prefix_space: bool = True
    trim_offsets: bool = True
    use_regex: bool = True

    def decode_chain(self, tokens):
        table = char_to_byte()
        data = bytearray()
        for t in tokens:
            try:
                data += bytes([table[c] for c in t])
            except KeyError:
                data += t.encode("utf-8")
        return [data.decode("utf-8", errors="replace")]

    def to_hf(self) -> dict:
        return {"type": "ByteLevel", "add_prefix_space": self.add_prefix_space,
                "trim_offsets": self.trim_offsets, "use_regex": self.use_regex}


@dataclass(frozen=True)
class Metaspace(Decoder):
    replacement: str = "\u2581"
    prepend_scheme: str = "always"
    split: bool = True

    def __post_init__(self):
        check_metaspace(self.replacement, self.prepend_scheme)

    def decode_chain(self, tokens):
        out = []
        for i, t in enumerate(tokens):
            if i == 0 and self.prepend_scheme != "never":
                out.append(t.replace(self.replacement, ""))
            else:
                out.append(t.replace(self.replacement, " "))
        return out

    def to_hf(self) -> dict:
        return {"type": "Metaspace", "replacement": self.replacement, "prepend_scheme": self.prepend_scheme,
                "split": self.split}


_BYTE_TOKEN = regex.compile(r"<0x([0-9A-Fa-f]{2})>\Z")


def is_byte_token(token: str) -> bool:
    """Whether a token string is a ``<0xNN>`` byte token (ByteFallback's)."""
    return len(token) == 6 and _BYTE_TOKEN.match(token) is not None


@dataclass(frozen=True)
class ByteFallback(Decoder):
    byte_fallback_in_chain = True

    def decode_chain(self, tokens):
        out: list[str] = []
        pending = bytearray()

        def flush():
            if pending:
                try:
                    out.append(pending.decode("utf-8"))
                except UnicodeDecodeError:
                    out.extend("\ufffd" * len(pending))
                pending.clear()

        for t in tokens:
            m = _BYTE_TOKEN.match(t) if len(t) == 6 else None  # (is_byte_token, with the byte)
            if m is not None:
                pending.append(int(m.group(1), 16))
            else:
                flush()
                out.append(t)
        flush()
        return out

    def to_hf(self) -> dict:
        return {"type": "ByteFallback"}


@dataclass(frozen=True)
class Fuse(Decoder):
    def decode_chain(self, tokens):
        return ["".join(tokens)]

    def to_hf(self) -> dict:
        return {"type": "Fuse"}


@dataclass(frozen=True)
class Strip(Decoder):
    content: str = " "
    start: int = 0
    stop: int = 0

    def decode_chain(self, tokens):
        out = []
        for t in tokens:
            s, e = 0, len(t)
            for _ in range(self.start):
                if s < e and t[s] == self.content:
                    s += 1
                else:
                    break
            for _ in range(self.stop):
                if e > s and t[e - 1] == self.content:
                    e -= 1
                else:
                    break
            out.append(t[s:e])
        return out

    def to_hf(self) -> dict:
        return {"type": "Strip", "content": self.content, "start": self.start, "stop": self.stop}


@dataclass(frozen=True)
class Replace(normalizers.Replace, Decoder):
    """``pattern`` (a literal, or a regex when ``is_regex``) replaced with ``content`` in each
    token: the Replace normalizer's work, on token strings."""

    def decode_chain(self, tokens):
        return [self.normalize(t) for t in tokens]


@dataclass(frozen=True)
class Sequence(Decoder):
    decoders: tuple

    @property
    def byte_fallback_in_chain(self) -> bool:
        return any(d.byte_fallback_in_chain for d in self.decoders)

    def decode_chain(self, tokens):
        for d in self.decoders:
            tokens = d.decode_chain(tokens)
        return tokens

    def to_hf(self) -> dict:
        return {"type": "Sequence", "decoders": [d.to_hf() for d in self.decoders]}


class DecodeStream:
    """Ids to text one at a time (Hugging Face's ``DecodeStream`` contract): ``step(id)``
    returns the text that id completes, or None while it completes none (a character whose
    UTF-8 bytes are still partial); ``flush()`` returns what is left (partial bytes as
    U+FFFD).  All the outputs joined are ``decode(ids)``.

    Made by ``Tokenizer.decode_stream``.  Byte-level tokenizers give ``token_bytes`` (id ->
    bytes): the bytes go through an incremental UTF-8 decoder, O(1) per step.  Others give
    ``decode`` (ids -> text, the pipeline's decoder): each step decodes the ids not yet
    emitted after one emitted id of context, and emits what that adds to the context's own
    text once it does not end in U+FFFD.  A run of ``<0xNN>`` byte tokens
    (``is_byte_token``) is held until a token that is not one follows: ByteFallback decodes
    a run as one, and a later byte can turn the whole run into U+FFFDs.  ``skip``: ids that
    yield nothing (special tokens, with ``skip_special_tokens``)."""

    def __init__(self, *, token_bytes=None, decode=None, skip: frozenset = frozenset(),
                 is_byte_token=None):
        self._token_bytes = token_bytes
        self._decode = decode
        self._skip = skip
        self._is_byte_token = is_byte_token or (lambda token: False)
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace") if token_bytes else None
        self._context: list[int] = []   # emitted ids kept for the decoder's sake
        self._context_text = ""
        self._pending: list[int] = []   # ids whose text is not out yet

    def step(self, token: int) -> Optional[str]:
        if token in self._skip:
            return None
        if self._utf8 is not None:
            return self._utf8.decode(self._token_bytes(token)) or None
        self._pending.append(token)
        if self._is_byte_token(token):
            return None
        text = self._decode(self._context + self._pending)
        base = self._context_text
        if len(text) <= len(base) or not text.startswith(base) or text.endswith("\ufffd"):
            return None
        self._advance()
        return text[len(base):]

    def _advance(self) -> None:
        # the pending ids are out: keep the last one, and the run of byte tokens it ends
        ids = self._context + self._pending
        k = len(ids) - 1
        while k > 0 and self._is_byte_token(ids[k]) and self._is_byte_token(ids[k - 1]):
            k -= 1
        self._context = ids[k:]
        self._context_text = self._decode(self._context)
        self._pending = []

    def flush(self) -> str:
        if self._utf8 is not None:
            return self._utf8.decode(b"", final=True)
        if not self._pending:
            return ""
        text = self._decode(self._context + self._pending)
        base = self._context_text
        self._advance()
        return text[len(base):] if text.startswith(base) else text
