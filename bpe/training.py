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
from typing import Iterable, Optional, Union

from . import _backend, _reference_scan, patterns, special
from .fileformat import NORMALIZATIONS
from .errors import TrainingError


def repair_surrogates(text: str) -> str:
    """tiktoken's fix-up for text with lone surrogates: pairs join, lone ones become U+FFFD."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def count_pretokens(
    texts: Iterable[str],
    pattern: Union[str, None, object] = "o200k_base",
    special_tokens: Iterable[str] = (),
    normalization: Optional[str] = None,
) -> Counter:
    """Count the distinct pre-tokens of ``texts`` as ``Counter({utf8_bytes: count})``.

    ``texts`` is any iterable of ``str`` (a single ``str`` counts as one text), read once, one
    text at a time.  Special-token strings are cut out and not counted.  Counts from separate
    shards add up exactly (``Counter`` addition), so counting can run anywhere and
    ``Tokenizer.train_from_counts`` gives the same tokenizer as ``Tokenizer.train`` on all the
    shards, provided the same pattern, special tokens and normalization are used.
    """
    if normalization is not None and normalization not in NORMALIZATIONS:
        raise ValueError(f"normalization must be one of {NORMALIZATIONS} or None, got {normalization!r}")
    name, source = patterns.resolve(pattern)
    scanned = source is None or name is not None
    compiled = None if scanned else patterns.compile_pattern(source)
    counter_class = getattr(_backend.active(), "PieceCounter", None)
    fast = counter_class() if scanned and counter_class is not None else None
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
            if fast is not None:
                try:
                    fast.add_text(segment, name)
                except UnicodeEncodeError:
                    fast.add_text(repair_surrogates(segment), name)
            elif scanned:
                counts.update(_reference_scan.split(segment, name) if name else ([segment] if segment else []))
            else:
                counts.update(patterns.split(compiled, segment))
    if fast is not None:
        return Counter(dict(fast.items()))
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
    # the merge loop's result does not depend on the order of the words (ties are broken by
    # ids, and counts are sums), so the table is passed as it is
    words = [w for w in counts if w]
    merges3 = _backend.active().train_merges(words, [counts[w] for w in words], vocab_size - 256 - n_special, min_frequency)
    id_bytes = [bytes([b]) for b in range(256)]
    for a, b, c in merges3:
        if c == len(id_bytes):
            id_bytes.append(id_bytes[a] + id_bytes[b])
    ranks = {token: rank for rank, token in enumerate(id_bytes)}
    return ranks, [(a, b) for a, b, _ in merges3]
