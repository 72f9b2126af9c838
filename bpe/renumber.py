"""Sparse added-token ids: the caller's ids outside, dense ids inside the core.

The core's tables are indexed by id, so an added (special) token far above the vocabulary
(tiktoken accepts ``{"<|im_start|>": 100264}`` on a 50k vocabulary, or ids near 2**32) would
size them by that id.  Such tokens get the next free ids after the model's inside the core
instead, and :class:`RenumberedCore` stands in for the core, giving ids back as the caller
numbered them and taking them in the same way.  A tokenizer whose ids are dense (every
bundled encoding, every tokenizer.json read so far) never gets one: its core is used as it is.

What it does not do: renumber the model's own ids (a vocabulary whose ranks are sparse is
refused where it is built), or encode anything itself.
"""

from __future__ import annotations

import array
from typing import Iterable

#: added ids at or above this many past the model's largest id are renumbered
FAR = 65536


def far_ids(model_top: int, added_ids: Iterable[int]) -> dict[int, int]:
    """``{caller's id: id inside the core}`` for the added ids more than :data:`FAR` past
    ``model_top`` (the model's largest id), in id order after the other added ids; empty
    when every id is near (then nothing is renumbered)."""
    added = sorted(set(added_ids))
    far = [i for i in added if i > model_top + FAR]
    if not far:
        return {}
    top = max([model_top] + [i for i in added if i <= model_top + FAR])
    return {external: top + 1 + k for k, external in enumerate(far)}


class RenumberedCore:
    """The core (either backend's ``Encoder``) with the added ids of ``far`` (see
    :func:`far_ids`) renumbered: ids out of it are the caller's, ids into it are checked and
    moved inside.  An id that is only an inside number is not a token outside, and is
    refused as any unknown id is.  Calls that never meet an added token pass straight on."""

    def __init__(self, core, far: dict[int, int]):
        self._inner_core = core
        self._out = {inside: outside for outside, inside in far.items()}
        self._in = dict(far)
        for inside in far.values():
            self._in.setdefault(inside, None)  # (an inside-only number: unknown outside)

    def __getattr__(self, name: str):
        return getattr(self._inner_core, name)

    # ------------------------------------------------------------------ ids out
    def _outward(self, ids: list[int]) -> list[int]:
        out = self._out
        return [out.get(i, i) for i in ids] if not out.keys().isdisjoint(ids) else ids

    def _outward_packed(self, data: bytes) -> bytes:
        ids = array.array("I")
        ids.frombytes(data)
        return array.array("I", self._outward(ids.tolist())).tobytes()

    def encode_text(self, text, pattern, packed=False, allowed=None, disallowed=None):
        ids = self._inner_core.encode_text(text, pattern, packed, allowed, disallowed)
        return self._outward_packed(ids) if packed else self._outward(ids)

    def encode_offsets(self, text, pattern, allowed=None, disallowed=None):
        ids, block = self._inner_core.encode_offsets(text, pattern, allowed, disallowed)
        return self._outward(ids), block

    def batch(self, texts, pattern, allowed=None, disallowed=None, offsets=False):
        return _Batch(self, self._inner_core.batch(texts, pattern, allowed, disallowed, offsets), offsets)

    # ------------------------------------------------------------------ ids in
    def _inward_one(self, token):
        if type(token) is int and token in self._in:
            inside = self._in[token]
            if inside is None:
                raise KeyError(f"token id {token!r} is not in the vocabulary of this tokenizer")
            return inside
        return token

    def _inward(self, ids) -> list:
        ids = list(ids)
        if self._in.keys().isdisjoint(i for i in ids if type(i) is int):
            return ids
        return [self._inward_one(i) for i in ids]

    def specials(self, tokens: dict):
        return self._inner_core.specials({data: self._in.get(tid) or tid for data, tid in tokens.items()})

    def decode_bytes(self, ids) -> bytes:
        return self._inner_core.decode_bytes(self._inward(ids))

    def token_bytes(self, token) -> bytes:
        return self._inner_core.token_bytes(self._inward_one(token))


class _Batch:
    """A core batch whose results come out with the caller's ids."""

    def __init__(self, core: RenumberedCore, batch, offsets: bool):
        self._core, self._batch, self._offsets = core, batch, offsets

    def help(self) -> None:
        self._batch.help()

    def run(self) -> None:
        self._batch.run()

    def results(self) -> list:
        out = self._batch.results()
        if self._offsets:
            return [(self._core._outward(ids), block) for ids, block in out]
        return [self._core._outward(ids) for ids in out]
