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

from dataclasses import dataclass

import regex

from . import normalizers
from .byte_unicode import char_to_byte


class Decoder:
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


@dataclass(frozen=True)
class ByteFallback(Decoder):
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
            m = _BYTE_TOKEN.match(t) if len(t) == 6 else None
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

    def decode_chain(self, tokens):
        for d in self.decoders:
            tokens = d.decode_chain(tokens)
        return tokens

    def to_hf(self) -> dict:
        return {"type": "Sequence", "decoders": [d.to_hf() for d in self.decoders]}
