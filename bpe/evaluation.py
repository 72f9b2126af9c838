"""Measuring a tokenizer on text: ``compression(tok, texts)``.

Reports bytes per token and tokens per 1,000 characters (the figures used to compare
tokenizers and to choose a vocabulary size; ``Tokenizer.training_curve`` gives the same for
every vocabulary size of one training run).  Special-token text counts as plain text.  It does
not train or change anything.
"""

from __future__ import annotations

from typing import Iterable


def compression(tok, texts: Iterable[str]) -> dict:
    """``{"texts", "chars", "bytes", "tokens", "bytes_per_token", "tokens_per_1000_chars"}``
    of ``tok`` on ``texts`` (any iterable of str, or one str)."""
    if isinstance(texts, str):
        texts = [texts]
    n_texts = chars = n_bytes = tokens = 0
    for text in texts:
        if not isinstance(text, str):
            raise TypeError(f"texts must be str, got {type(text).__name__}")
        n_texts += 1
        chars += len(text)
        n_bytes += len(text.encode("utf-8", "surrogatepass"))
        tokens += tok.count(text)
    return {
        "texts": n_texts,
        "chars": chars,
        "bytes": n_bytes,
        "tokens": tokens,
        "bytes_per_token": n_bytes / tokens if tokens else 0.0,
        "tokens_per_1000_chars": 1000 * tokens / chars if chars else 0.0,
    }
