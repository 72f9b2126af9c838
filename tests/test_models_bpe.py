"""The two BPE rules of ``bpe.models.bpe`` on random merge lists, with HF ``tokenizers`` as
the oracle.

* HF's merge-list rule three ways: ``MergeBPE.tokenize`` (pure Python), the backend's core with
  ``use_merge_list`` (bpe/_merges.pxi in the compiled one), and HF itself, on random texts over
  a small alphabet, pieces over 256 bytes included (the core's heap then lives on the heap).
* ``equivalent_ranks`` is sound: whenever it says a merge list encodes as a rank table, the
  rank rule gives HF's ids; and it does say so for merge lists made the way BPE training makes
  them (each token's merge is its canonical split, merge order = id order).
* The planner's choice (``Tokenizer._rule``) for such lists.
"""

from __future__ import annotations

import json
import random

import pytest
import tokenizers

import bpe
from bpe import _backend
from bpe.byte_unicode import from_display, to_display
from bpe.models.bpe import MergeBPE, equivalent_ranks

ALPHABET = b"ab c"


def random_merge_list(rng: random.Random, n_merges: int, trained_like: bool):
    """``(vocab, merges)`` in display strings: all 256 bytes, then merges of random pairs of
    existing tokens whose result is new.  ``trained_like``: each new token's merge is its
    canonical split (the two parts the rank rule ends with on its bytes, as BPE training
    makes them), in id order; otherwise the pairs as drawn, shuffled, and some tokens made by
    a second pair too."""
    from bpe._reference import Encoder

    vocab = {to_display(bytes([b])): b for b in range(256)}
    ranks = {bytes([b]): b for b in range(256)}
    pool = [to_display(bytes([b])) for b in ALPHABET]
    merges = []
    while len(merges) < n_merges:
        a, b = rng.choice(pool), rng.choice(pool)
        if a + b in vocab:
            if not trained_like and rng.random() < 0.3 and (a, b) not in merges:
                merges.append((a, b))  # another pair for an existing token
            continue
        if trained_like:
            data = from_display(a + b)
            parts = Encoder(ranks, {}).encode_piece_bytes(data, len(vocab))
            if len(parts) != 2:
                continue  # the rank rule cannot form it from its bytes: not a trainer's merge
            by_id = {i: t for t, i in vocab.items()}
            a, b = by_id[parts[0]], by_id[parts[1]]
            ranks[data] = len(vocab)
        vocab[a + b] = len(vocab)
        pool.append(a + b)
        merges.append((a, b))
    if not trained_like:
        rng.shuffle(merges)
    return vocab, merges



def hf_tokenizer(vocab: dict, merges: list, tmp_path) -> tokenizers.Tokenizer:
    data = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                          "use_regex": False},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": False, "vocab": vocab, "merges": [list(m) for m in merges]},
    }
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return tokenizers.Tokenizer.from_file(str(path))


def random_texts(rng: random.Random) -> list[str]:
    texts = ["".join(rng.choice("ab c") for _ in range(rng.randint(0, 40))) for _ in range(150)]
    texts += ["".join(rng.choice("ab c") for _ in range(n)) for n in (255, 256, 257, 600, 2000)]
    return texts + ["ab" * 300, "a" * 700]


@pytest.mark.parametrize("seed", range(6))
def test_merge_list_rule_three_ways(backend, seed, tmp_path):
    rng = random.Random(seed)
    vocab, merges = random_merge_list(rng, 60, trained_like=False)
    hf = hf_tokenizer(vocab, merges, tmp_path)
    model = MergeBPE(vocab=vocab, merges=tuple(merges))
    tokens, decode_only, triples = model.merge_form()
    core = _backend.active().Encoder(tokens, decode_only)
    core.use_merge_list(triples, False)
    bad = []
    for text in random_texts(rng):
        want = hf.encode(text, add_special_tokens=False).ids
        python = model.tokenize(text)
        compiled = core.encode_pieces([text]) if text else []
        if not (python == want == compiled):
            bad.append((text[:30], want[:8], python[:8], compiled[:8]))
    assert not bad, bad[:3]


@pytest.mark.parametrize("seed", range(6))
def test_equivalent_ranks_is_sound(backend, seed, tmp_path):
    rng = random.Random(100 + seed)
    for trained_like in (True, False):
        vocab, merges = random_merge_list(rng, 60, trained_like)
        hf = hf_tokenizer(vocab, merges, tmp_path)
        model = MergeBPE(vocab=vocab, merges=tuple(merges))
        form = model.rank_form()
        if form is None:
            assert not trained_like  # shuffled lists break merge order = id order
            continue
        ranks, decode_only, first = form
        core = _backend.active().Encoder(ranks, decode_only)
        agree = equivalent_ranks(first, core)
        assert agree or not trained_like  # a trainer's merge list is a rank table
        if not agree:
            continue
        texts = random_texts(rng)
        bad = [t for t in texts if t and core.encode_pieces([t]) != hf.encode(t, add_special_tokens=False).ids]
        assert not bad, bad[:3]


def test_trained_like_lists_run_on_the_rank_rule(backend, tmp_path):
    """Merge lists in a trainer's order (the shape of GPT-2's and Qwen's files) are found
    equivalent, so from_hf puts them on the rank rule; their ids stay HF's."""
    rng = random.Random(7)
    vocab, merges = random_merge_list(rng, 80, trained_like=True)
    hf = hf_tokenizer(vocab, merges, tmp_path)
    tok = bpe.Tokenizer.from_hf(tmp_path / "tokenizer.json")
    assert tok._rule == "ranks"
    for text in random_texts(rng)[:50]:
        assert tok.encode(text) == hf.encode(text, add_special_tokens=False).ids


def test_rules_disagree_fixture_runs_on_the_merge_list_rule(backend):
    from hf_oracle import fixture_path

    tok = bpe.Tokenizer.from_hf(fixture_path("rules_disagree"))
    assert tok._rule == "merges"
