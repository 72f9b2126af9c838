"""The compact binary form in which the package ships the OpenAI rank tables.

A bundle file is::

    b"bpe-bundle 1\\n"
    one line of JSON: {"name", "extends", "rank_runs": [[first_rank, count], ...]}
    zlib( one length byte per token  +  all token bytes concatenated )

Tokens are stored in rank order; ``rank_runs`` gives their ranks as runs of consecutive
integers.  ``extends`` names another bundle whose tokens come first (p50k_base is r50k_base
plus 24 whitespace tokens).  This halves the size of the base64 ``.tiktoken`` text and loads
without base64 decoding.  The module reads and writes bundles; it does not know patterns or
special tokens (``bpe.registry`` does).
"""

from __future__ import annotations

import json
import zlib
from itertools import accumulate
from typing import Optional

from ..errors import TokenizerFileError

MAGIC = b"bpe-bundle 1\n"


def pack(name: str, ranks: dict[bytes, int], extends: Optional[dict[bytes, int]] = None,
         extends_name: Optional[str] = None) -> bytes:
    """Serialize ``ranks`` (minus the tokens of ``extends``, which must be a subset)."""
    items = sorted(ranks.items(), key=lambda kv: kv[1])
    if extends is not None:
        if any(ranks.get(t) != r for t, r in extends.items()):
            raise ValueError(f"{name} does not extend {extends_name}")
        items = [(t, r) for t, r in items if t not in extends]
    runs: list[list[int]] = []
    for _, rank in items:
        if runs and runs[-1][0] + runs[-1][1] == rank:
            runs[-1][1] += 1
        else:
            runs.append([rank, 1])
    if any(len(t) > 255 for t, _ in items):
        raise ValueError("tokens longer than 255 bytes cannot be bundled")
    header = {"name": name, "extends": extends_name, "rank_runs": runs}
    body = bytes(len(t) for t, _ in items) + b"".join(t for t, _ in items)
    return MAGIC + json.dumps(header).encode() + b"\n" + zlib.compress(body, 9)


def unpack(data: bytes, source: object) -> tuple[dict, list[bytes], list[int]]:
    """Return ``(header, tokens, ranks)`` of a bundle (tokens not including ``extends``);
    ``TokenizerFileError`` for anything that is not a whole bundle."""
    if not data.startswith(MAGIC):
        raise TokenizerFileError(source, "not a bpe bundle (bad magic)")
    try:
        nl = data.index(b"\n", len(MAGIC))
        header = json.loads(data[len(MAGIC):nl])
        body = zlib.decompress(data[nl + 1:])
        ranks = [r for first, count in header["rank_runs"] for r in range(first, first + count)]
    except (ValueError, KeyError, TypeError, zlib.error) as exc:
        raise TokenizerFileError(source, f"corrupted bundle ({type(exc).__name__}: {exc})") from None
    n = len(ranks)
    lengths = body[:n]
    ends = list(accumulate(lengths, initial=n))
    tokens = [body[s:e] for s, e in zip(ends, ends[1:])]
    if len(tokens) != n or ends[-1] != len(body):
        raise TokenizerFileError(source, "corrupted bundle (sizes do not add up)")
    return header, tokens, ranks
