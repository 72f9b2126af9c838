"""tie_break="hf" reproduces Hugging Face's BpeTrainer merge for merge (same split, same
corpus, same vocabulary size), and the default rule gives the same compression."""

import json

import bpe
from bpe.byte_unicode import from_display


def _hf_train(texts, vocab_size):
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(bpe.NAMED_PATTERNS["o200k_base"]), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=2, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(texts, trainer)
    merges = json.loads(tok.to_str())["model"]["merges"]
    return [(from_display(a), from_display(b)) for a, b in (m.split(" ") if isinstance(m, str) else m for m in merges)]


def test_hf_tie_break_reproduces_bpetrainer(corpus, cython_backend):
    texts = []
    for name in ("english.txt", "spanish.txt", "code_python.txt", "multilingual.txt"):
        texts += corpus(name)[:150_000].split("\n\n")
    hf = _hf_train(texts, 3000)
    ours = bpe.Tokenizer.train(texts, 3000, tie_break="hf").merges
    default = bpe.Tokenizer.train(texts, 3000).merges
    print(f"\n[hf trainer] {len(hf)} merges; tie_break='hf' equal: {ours == hf}; "
          f"default rule differs at {sum(a != b for a, b in zip(default, hf))} positions")
    assert len(hf) == len(ours) == 3000 - 256
    assert ours == hf
