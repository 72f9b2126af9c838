"""The two BPE rules of ``bpe.models.bpe`` on random merge lists, with HF ``tokenizers`` as
the oracle.

* HF's merge-list rule three ways: ``MergeBPE.tokenize`` (pure Python), the backend's core with
  ``use_merge_list`` (bpe/_merges.pxi in the compiled one), and HF itself, on random texts over
  a small alphabet, pieces over 256 bytes included (the core's heap then lives on the heap).
* ``equivalent_ranks`` is sound: whenever it says a merge list encodes as a rank table, the
  rank rule gives HF's ids; and it does say so for merge lists made the way BPE training makes
  them (each token's merge is its canonical split, merge order = id order).
* The planner's choice (``Tokenizer._rule``) for such lists.
* Whole-character units under the merge list (``ml_char_units`` in bpe/_merges.pxi): on
  random lists over the bytes of a few multi-byte characters (merges inside characters,
  across them, with spaces), the core with units on and off and HF agree on random texts of
  those characters.
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


def random_merge_list(rng: random.Random, n_merges: int, trained_like: bool, alphabet: bytes = ALPHABET):
    """``(vocab, merges)`` in display strings: all 256 bytes, then merges of random pairs of
    existing tokens whose result is new.  ``trained_like``: each new token's merge is its
    canonical split (the two parts the rank rule ends with on its bytes, as BPE training
    makes them), in id order; otherwise the pairs as drawn, shuffled, and some tokens made by
    a second pair too."""
    from bpe._reference import Encoder

    vocab = {to_display(bytes([b])): b for b in range(256)}
    ranks = {bytes([b]): b for b in range(256)}
    pool = [to_display(bytes([b])) for b in sorted(set(alphabet))]
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


def test_merge_list_table_refuses_ids_beyond_its_fields():
    """The compiled pair table packs ids in 21 bits (bpe/_merges.pxi): larger ids are refused
    with a clear error (build_core then runs the model's stages in Python)."""
    from bpe import _core
    from bpe.models.bpe import pack_ids

    ranks = {bytes([b]): b for b in range(256)}
    ranks[b"ab"] = (1 << 21) + 5
    core = _core.Encoder(ranks, {})
    with pytest.raises(OverflowError, match="ids below"):
        core.use_merge_list(pack_ids([(97, 98, (1 << 21) + 5)]), False)
    small = _core.Encoder({**{bytes([b]): b for b in range(256)}, b"ab": 256}, {})
    small.use_merge_list(pack_ids([(97, 98, 256)]), False)
    assert small.encode_pieces(["abab", "ba"]) == [256, 256, 98, 97]


WIDE = "a é日本ж"


def _units_against_hf(seed: int, tmp_path) -> tuple[int, int]:
    """Check one random list; (characters admitted as units, those of them with context
    strings)."""
    from bpe import _core
    from bpe.models.bpe import pack_ids

    rng = random.Random(1000 + seed)
    vocab, merges = random_merge_list(rng, 150, trained_like=False, alphabet=WIDE.encode())
    for c in sorted(set(WIDE)):  # each character a token too, its merges anywhere in the list
        data = c.encode()
        for k in range(2, len(data) + 1):
            left, right, whole = to_display(data[:k - 1]), to_display(data[k - 1:k]), to_display(data[:k])
            if whole not in vocab:
                vocab[whole] = len(vocab)
                merges.insert(rng.randrange(len(merges) + 1), (left, right))
    hf = hf_tokenizer(vocab, merges, tmp_path)
    model = MergeBPE(vocab=vocab, merges=tuple(merges))
    tokens, decode_only, triples = model.merge_form()
    with_units, without = _core.Encoder(tokens, decode_only), _core.Encoder(tokens, decode_only)
    for core in (with_units, without):
        core.use_merge_list(triples, False)
    without._set_char_units(False)
    texts = ["".join(rng.choice(WIDE) for _ in range(rng.randint(1, 30))) for _ in range(300)]
    texts += ["".join(rng.choice(WIDE) for _ in range(400)), "日本" * 100]
    bad = []
    for text in texts:
        want = hf.encode(text, add_special_tokens=False).ids
        got, plain = with_units.encode_pieces([text]), without.encode_pieces([text])
        if not (got == want == plain == model.tokenize(text)):
            bad.append((text[:20], want[:6], got[:6], plain[:6]))
    assert not bad, bad[:3]
    return with_units._char_units_size(), with_units._char_units_with_contexts()


@pytest.mark.parametrize("seed", range(16))
def test_merge_list_character_units_keep_hfs_ids(seed, tmp_path):
    _units_against_hf(seed, tmp_path)


def test_merge_list_character_units_are_used_and_refused(tmp_path):
    """Across those random lists characters start whole, some of them only away from the
    contexts that would break them (so the context strings are exercised)."""
    counts = [_units_against_hf(seed, tmp_path) for seed in range(8)]
    assert sum(units for units, _ in counts) >= 8 and sum(ctx for _, ctx in counts) >= 4, counts
    assert any(units < 4 for units, _ in counts), counts  # (some of the four refused)
