"""Training benchmark: bpe against Hugging Face ``BpeTrainer`` and SentencePiece BPE.

    python -m benchmarks --only train

Every trainer learns the same vocabulary sizes (8,192 and 32,768) from the same text: 90% of
each shared corpus (the last 10% of each file is held apart), streamed paragraph by paragraph.
Each run happens in a fresh process, so the peak resident memory (``VmHWM``) is that run's
alone; the rows of one table come from one invocation, trainers interleaved over rounds, and
the median is reported.  Compression is measured on the held-apart text as UTF-8 bytes per
token.  bpe and HF use the same split (o200k_base pattern + byte-level); SentencePiece splits
on whitespace its own way and uses byte fallback, so its compression is not like for like.
"""

from __future__ import annotations

import itertools
import json
import os
import statistics
import subprocess
import sys
import time

FILES = ["english.txt", "spanish.txt", "portuguese.txt", "multilingual.txt",
         "code_python.txt", "code_c.txt", "code_js.txt"]


def peak_rss() -> int:
    """This process's peak resident memory in bytes (VmHWM: unlike ru_maxrss it does not carry
    the parent's peak over fork and exec)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/self/status (Linux only)")


def _split_corpus(base: str) -> tuple[list[str], list[str]]:
    train, held = [], []
    for name in FILES:
        with open(os.path.join(base, "corpora", name), encoding="utf-8") as f:
            text = f.read()
        cut = text.rfind("\n", 0, int(len(text) * 0.9)) + 1
        train += text[:cut].split("\n\n")
        held.append(text[cut:])
    return train, held


def _worker(trainer: str, vocab: int, base: str) -> dict:
    train, held = _split_corpus(base)
    held_bytes = sum(len(t.encode("utf-8")) for t in held)
    if trainer == "bpe":
        import bpe

        start = time.perf_counter()
        tok = bpe.Tokenizer.train(iter(train), vocab, pattern="o200k_base")
        seconds = time.perf_counter() - start
        n_tokens = sum(tok.count(t) for t in held)
    elif trainer == "hf":
        from tokenizers import Tokenizer, models, pre_tokenizers, trainers

        import bpe

        from .run import hf_pre_tokenizer

        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = hf_pre_tokenizer(bpe.NAMED_PATTERNS["o200k_base"])
        hf_trainer = trainers.BpeTrainer(vocab_size=vocab, min_frequency=2, show_progress=False,
                                         initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
        start = time.perf_counter()
        tok.train_from_iterator(iter(train), hf_trainer)
        seconds = time.perf_counter() - start
        n_tokens = sum(len(tok.encode(t, add_special_tokens=False).ids) for t in held)
    elif trainer == "sentencepiece":
        import io

        import sentencepiece as spm

        lines = [line for para in train for line in para.split("\n") if line.strip()]
        model = io.BytesIO()
        start = time.perf_counter()
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(lines), model_writer=model, model_type="bpe", vocab_size=vocab,
            num_threads=2, byte_fallback=True, character_coverage=0.9995, max_sentence_length=1 << 16,
            input_sentence_size=0, minloglevel=2)
        seconds = time.perf_counter() - start
        sp = spm.SentencePieceProcessor(model_proto=model.getvalue())
        n_tokens = sum(len(sp.encode(t)) for t in held)
    else:
        raise ValueError(trainer)
    peak = peak_rss()
    return {"seconds": seconds, "peak_rss": peak, "bytes_per_token": held_bytes / n_tokens}


def bench_training(args) -> None:
    from .run import shared_data, table

    base = shared_data()
    print("\n## Training (fresh process per run; seconds and peak resident MB, median)")
    if base is None:
        print("\n(skipped: needs the shared corpora; set BPE_SHARED_DATA)")
        return
    trainers = ["bpe"]
    for module, label in (("tokenizers", "hf"), ("sentencepiece", "sentencepiece")):
        try:
            __import__(module)
            trainers.append(label)
        except ImportError:
            pass
    rounds = 1 if args.quick else 3
    rows = []
    for vocab in (8192, 32768):
        results: dict[str, list[dict]] = {t: [] for t in trainers}
        for r in range(rounds):
            for trainer in (trainers if r % 2 == 0 else list(reversed(trainers))):
                out = subprocess.run([sys.executable, "-m", "benchmarks.training", trainer, str(vocab), base],
                                     capture_output=True, text=True, check=True,
                                     cwd=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
                results[trainer].append(json.loads(out.stdout.strip().splitlines()[-1]))
        med = {t: {k: statistics.median(x[k] for x in v) for k in v[0]} for t, v in results.items()}
        for t in trainers:
            m = med[t]
            rows.append([f"{vocab:,}", t, f"{m['seconds']:.2f}", f"{m['peak_rss'] / 2**20:.0f}",
                         f"{m['bytes_per_token']:.3f}",
                         f"{med[t]['seconds'] / med['bpe']['seconds']:.2f}x"])
    print()
    print(table(["vocab", "trainer", "seconds", "peak MB", "held-out bytes/token", "time / bpe's"], rows))


def synthetic_stream(total_bytes: int, seed: int = 0):
    """Deterministic synthetic text, ``total_bytes`` of it, as ~4 KB paragraphs: 2,000 distinct
    paragraphs of Zipf-distributed words from a 60,000-word lexicon, numbers and punctuation,
    cycled, each copy headed by its running number (so new pre-tokens keep arriving)."""
    import random

    rng = random.Random(seed)
    letters = "etaoinshrdlcumwfgypbvkjxqz"
    lexicon = ["".join(rng.choice(letters) for _ in range(rng.randint(1, 11))) for _ in range(60_000)]
    cum_weights = list(itertools.accumulate(1 / (rank + 1) for rank in range(len(lexicon))))
    pool = []
    for _ in range(2000):
        words = rng.choices(lexicon, cum_weights=cum_weights, k=700)
        parts = []
        for i, w in enumerate(words):
            parts.append(w.capitalize() if i % 17 == 0 else w)
            if i % 23 == 22:
                parts.append(f"{rng.randint(0, 99999)},")
        pool.append(" ".join(parts) + ".\n\n")
    produced = k = 0
    while produced < total_bytes:
        para = f"Part {k}: " + pool[k % len(pool)]
        produced += len(para)
        k += 1
        yield para


def _stream_worker(total_bytes: int, vocab: int) -> dict:
    import bpe

    start = time.perf_counter()
    counts = bpe.count_pretokens(synthetic_stream(total_bytes), pattern="o200k_base")
    counted = time.perf_counter() - start
    peak_counting = peak_rss()
    tok = bpe.Tokenizer.train_from_counts(counts, vocab, pattern="o200k_base")
    seconds = time.perf_counter() - start
    table_bytes = sum(len(k) for k in counts)
    return {"bytes": total_bytes, "distinct": len(counts), "table_bytes": table_bytes, "count_seconds": counted,
            "seconds": seconds, "peak_rss_counting": peak_counting, "n_vocab": tok.n_vocab,
            "peak_rss": peak_rss()}


def bench_stream(args) -> None:
    from .run import table

    total = (100 if args.quick else 1000) * 2**20
    print(f"\n## Streaming {total / 2**30:.2f} GiB of synthetic text into a 32,768 vocabulary (fresh process)")
    out = subprocess.run([sys.executable, "-m", "benchmarks.training", "stream", str(total), "32768"],
                         capture_output=True, text=True, check=True,
                         cwd=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    r = json.loads(out.stdout.strip().splitlines()[-1])
    print()
    print(table(["text", "distinct pre-tokens", "their bytes", "counting s", "total s", "peak MB (counting)", "peak MB"],
                [[f"{r['bytes'] / 2**20:,.0f} MB", f"{r['distinct']:,}", f"{r['table_bytes'] / 2**20:.1f} MB",
                  f"{r['count_seconds']:.1f}", f"{r['seconds']:.1f}", f"{r['peak_rss_counting'] / 2**20:.0f}",
                  f"{r['peak_rss'] / 2**20:.0f}"]]))


if __name__ == "__main__":
    if sys.argv[1] == "stream":
        print(json.dumps(_stream_worker(int(sys.argv[2]), int(sys.argv[3]))))
    else:
        print(json.dumps(_worker(sys.argv[1], int(sys.argv[2]), sys.argv[3])))
