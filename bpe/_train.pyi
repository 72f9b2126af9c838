"""Type stubs for the compiled trainer (bpe/_train.pyx)."""

def train_merges(
    words: list[bytes], counts: list[int], n_new_tokens: int, min_frequency: int
) -> list[tuple[int, int, int]]: ...
