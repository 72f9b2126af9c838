"""Training input: streaming pre-token counting, and the call into the merge loop.

``count_pretokens`` reads any iterable of ``str`` one text at a time (nothing is joined), cuts
out special-token strings, normalizes, splits with the pattern and counts each distinct
pre-token; only that table lives in memory.  ``learn`` hands the table to the backend's merge
loop (``bpe._train`` or ``bpe._reference``) and turns the merges into a rank table.  The
vocabulary is counted as 256 byte tokens + learned tokens + special tokens.  Building the
:class:`~bpe.tokenizer.Tokenizer` is left to that class.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from typing import Iterable, Optional

from . import _backend, patterns, special
from .errors import TrainingError


def repair_surrogates(text: str) -> str:
    """tiktoken's fix-up for text with lone surrogates: pairs join, lone ones become U+FFFD."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def count_pretokens(
    texts: Iterable[str],
    pattern: Optional[str],
    special_tokens: Iterable[str] = (),
    normalization: Optional[str] = None,
) -> Counter:
    """Count the pre-tokens (as UTF-8 bytes) of ``texts``; special-token strings are skipped."""
    compiled = patterns.compile_pattern(pattern)
    specials = frozenset(special_tokens)
    counts: Counter = Counter()
    if isinstance(texts, str):
        texts = [texts]
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(
                f"training texts must be str; item {index} is {type(text).__name__} "
                "(decode bytes first, e.g. data.decode('utf-8'))"
            )
        for segment, is_special in special.split(text, specials):
            if is_special:
                continue
            if normalization is not None:
                segment = unicodedata.normalize(normalization, segment)
            counts.update(patterns.split(compiled, segment))
    out: Counter = Counter()
    for piece, n in counts.items():
        try:
            out[piece.encode("utf-8")] += n
        except UnicodeEncodeError:
            out[repair_surrogates(piece).encode("utf-8")] += n
    return out


def learn(
    counts: Counter, vocab_size: int, n_special: int, min_frequency: int
) -> tuple[dict[bytes, int], list[tuple[int, int]]]:
    """Run the merge loop; return ``(ranks, merges)`` with merges as ``(left_id, right_id)``."""
    if not isinstance(vocab_size, int) or isinstance(vocab_size, bool):
        raise TypeError(f"vocab_size must be an int, got {type(vocab_size).__name__}")
    if vocab_size < 256 + n_special:
        raise TrainingError(
            f"vocab_size={vocab_size} is too small: it counts the 256 byte tokens and the "
            f"{n_special} special tokens, so pass at least {256 + n_special}"
        )
    if not isinstance(min_frequency, int) or min_frequency < 1:
        raise TrainingError(f"min_frequency must be an int >= 1, got {min_frequency!r}")
    words = sorted(counts)  # a fixed order, so results never depend on input order
    merges3 = _backend.active().train_merges(words, [counts[w] for w in words], vocab_size - 256 - n_special, min_frequency)
    id_bytes = [bytes([b]) for b in range(256)]
    for a, b, c in merges3:
        if c == len(id_bytes):
            id_bytes.append(id_bytes[a] + id_bytes[b])
    ranks = {token: rank for rank, token in enumerate(id_bytes)}
    return ranks, [(a, b) for a, b, _ in merges3]
