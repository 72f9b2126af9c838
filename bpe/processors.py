"""Post-processors: what ``add_special_tokens=True`` adds around the ids of a text.

Immutable stages with ``process(ids, pair=None) -> list[int]`` and ``to_hf()``, following
Hugging Face: ``TemplateProcessing`` (``$A``/``$B`` and special pieces such as Llama's BOS),
``BertProcessing`` (``[CLS] A [SEP] B [SEP]``), ``RobertaProcessing`` (``<s> A </s></s> B
</s>``), ``ByteLevel`` (changes no id; it only concerns offsets) and ``Sequence``.  They do not
encode text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


class PostProcessor:
    def process(self, ids: list[int], pair: Optional[list[int]] = None) -> list[int]:  # pragma: no cover
        raise NotImplementedError

    def affixes(self) -> tuple[tuple, tuple]:
        """The ids this stage puts before and after the ids of one text."""
        return (), ()

    def to_hf(self) -> dict:  # pragma: no cover
        raise NotImplementedError


@dataclass(frozen=True)
class ByteLevel(PostProcessor):
    add_prefix_space: bool = True
    trim_offsets: bool = True
    use_regex: bool = True

    def process(self, ids, pair=None):
        return list(ids) + (list(pair) if pair is not None else [])

    def to_hf(self) -> dict:
        return {"type": "ByteLevel", "add_prefix_space": self.add_prefix_space,
                "trim_offsets": self.trim_offsets, "use_regex": self.use_regex}


@dataclass(frozen=True)
class TemplateProcessing(PostProcessor):
    """``single``/``pair``: tuples of ``("A"|"B", type_id)`` sequences and ``("special", name,
    type_id)`` pieces; ``special_tokens``: name -> tuple of ids."""

    single: tuple
    pair: tuple
    special_tokens: tuple  # ((name, (ids...), (tokens...)), ...)

    def _ids(self, name: str) -> tuple:
        for n, ids, _ in self.special_tokens:
            if n == name:
                return ids
        raise KeyError(name)

    def affixes(self) -> tuple[tuple, tuple]:
        sides: tuple = ([], [])
        side = 0
        for piece in self.single:
            if piece[0] == "special":
                sides[side].extend(self._ids(piece[1]))
            else:
                side = 1
        return tuple(sides[0]), tuple(sides[1])

    def process(self, ids, pair=None):
        out: list[int] = []
        for piece in (self.single if pair is None else self.pair):
            if piece[0] == "special":
                out.extend(self._ids(piece[1]))
            else:
                out.extend(ids if piece[0] == "A" else (pair or []))
        return out

    def to_hf(self) -> dict:
        def pieces(template):
            return [{"SpecialToken": {"id": p[1], "type_id": p[2]}} if p[0] == "special"
                    else {"Sequence": {"id": p[0], "type_id": p[1]}} for p in template]
        return {"type": "TemplateProcessing", "single": pieces(self.single), "pair": pieces(self.pair),
                "special_tokens": {n: {"id": n, "ids": list(ids), "tokens": list(toks)}
                                   for n, ids, toks in self.special_tokens}}


@dataclass(frozen=True)
class BertProcessing(PostProcessor):
    sep: tuple  # (token, id)
    cls: tuple

    def process(self, ids, pair=None):
        out = [self.cls[1], *ids, self.sep[1]]
        if pair is not None:
            out += [*pair, self.sep[1]]
        return out

    def affixes(self) -> tuple[tuple, tuple]:
        return (self.cls[1],), (self.sep[1],)

    def to_hf(self) -> dict:
        return {"type": "BertProcessing", "sep": list(self.sep), "cls": list(self.cls)}


@dataclass(frozen=True)
class RobertaProcessing(PostProcessor):
    sep: tuple
    cls: tuple
    trim_offsets: bool = True
    add_prefix_space: bool = True

    def process(self, ids, pair=None):
        out = [self.cls[1], *ids, self.sep[1]]
        if pair is not None:
            out += [self.sep[1], *pair, self.sep[1]]
        return out

    def affixes(self) -> tuple[tuple, tuple]:
        return (self.cls[1],), (self.sep[1],)

    def to_hf(self) -> dict:
        return {"type": "RobertaProcessing", "sep": list(self.sep), "cls": list(self.cls),
                "trim_offsets": self.trim_offsets, "add_prefix_space": self.add_prefix_space}


@dataclass(frozen=True)
class Sequence(PostProcessor):
    processors: tuple

    def process(self, ids, pair=None):
        out = list(ids)
        for p in self.processors:
            out = p.process(out, pair)
            pair = None
        return out

    def to_hf(self) -> dict:
        return {"type": "Sequence", "processors": [p.to_hf() for p in self.processors]}


def stages(post: Optional[PostProcessor]) -> list:
    """The stages of ``post`` in the order they run (a Sequence's, flattened; none for None)."""
    if post is None:
        return []
    return [q for p in post.processors for q in stages(p)] if isinstance(post, Sequence) else [post]


def added_count(post: Optional[PostProcessor]) -> int:
    """How many tokens ``post`` adds around the ids of one text."""
    return sum(len(before) + len(after) for before, after in (stage.affixes() for stage in stages(post)))
