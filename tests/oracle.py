"""tiktoken oracles built from bpe's bundled rank tables (no files, no network)."""

import functools

import tiktoken

import bpe


@functools.lru_cache(maxsize=None)
def tiktoken_encoding(name: str) -> "tiktoken.Encoding":
    ours = bpe.get_encoding(name)
    return tiktoken.Encoding(
        name=f"oracle-{name}",
        pat_str=ours.pattern,
        mergeable_ranks=ours.mergeable_ranks,
        special_tokens=ours.special_tokens,
    )
