"""Command-line interface: ``bpe demo``, ``bpe encode``, ``bpe decode``, ``bpe train``.

``bpe demo`` is the main job on bundled data: it trains a small tokenizer on the public-domain
sample shipped in ``bpe/data/sample.txt`` (the opening chapters of Melville's *Moby-Dick*, from
Project Gutenberg) and prints its token counts next to the bundled o200k_base and cl100k_base
encodings.  Nothing here touches the network.  The library API lives elsewhere; this module
only parses arguments and prints.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Optional, Sequence

def _demo(args: argparse.Namespace) -> int:
    import bpe

    with open(bpe.sample_path(), encoding="utf-8") as f:
        text = f.read()
    cut = text.rfind("\n\n", 0, int(len(text) * 0.9))
    train_text, held_out = text[:cut], text[cut:]
    paragraphs = train_text.split("\n\n")
    print(f"bpe {bpe.__version__} (backend: {bpe.backend})")
    print(f"sample: {bpe.sample_path()}")
    print(f"  {len(train_text):,} characters to train on ({len(paragraphs):,} paragraphs, streamed), "
          f"{len(held_out):,} held out")
    start = time.perf_counter()
    tok = bpe.Tokenizer.train(paragraphs, vocab_size=args.vocab_size, pattern=args.pattern, name="demo")
    seconds = time.perf_counter() - start
    print(f"trained vocab_size={tok.n_vocab} with pattern {args.pattern!r} in {seconds:.2f} s")
    first = ", ".join(repr((a + b).decode("utf-8", "replace")) for a, b in tok.merges[:8])
    print(f"  first merges: {first}")
    curve = dict(tok.training_curve)
    sizes = [n for n in (256, 512, 1024, 2048, 4096, 8192) if n in curve]
    print("  compression while it learned (training text, bytes per token): " + ", ".join(
        f"{n:,}: {curve[sizes[0]] / curve[n] :.2f}" for n in sizes))
    longest = sorted(tok.mergeable_ranks, key=len)[-5:]
    print(f"  longest tokens: {', '.join(repr(t.decode('utf-8', 'replace')) for t in longest)}")
    print()
    print(f"{'tokenizer':<14} {'vocab':>8} {'tokens (held out)':>18} {'bytes/token':>12}  round trip")
    n_bytes = len(held_out.encode("utf-8"))
    for label, enc in (("demo", tok), ("o200k_base", bpe.get_encoding("o200k_base")),
                       ("cl100k_base", bpe.get_encoding("cl100k_base"))):
        ids = enc.encode_ordinary(held_out)
        ok = "ok" if enc.decode(ids) == held_out else "FAILED"
        print(f"{label:<14} {enc.n_vocab:>8,} {len(ids):>18,} {n_bytes / len(ids):>12.2f}  {ok}")
        if ok != "ok":
            return 1
    print()
    example = "Call me Ishmael."
    print(f"{example!r} -> demo {tok.encode(example)}, o200k_base {bpe.get_encoding('o200k_base').encode(example)}")
    return 0


def _load(spec: str):
    import bpe

    if spec in bpe.list_encodings():
        return bpe.get_encoding(spec)
    return bpe.Tokenizer.load(spec)


def _encode(args: argparse.Namespace) -> int:
    enc = _load(args.tokenizer)
    text = sys.stdin.read() if args.text is None else args.text
    ids = enc.encode(text, allowed_special="all" if args.allow_special else frozenset())
    print(json.dumps(ids) if args.json else " ".join(map(str, ids)))
    return 0


def _decode(args: argparse.Namespace) -> int:
    enc = _load(args.tokenizer)
    sys.stdout.write(enc.decode([int(x) for x in args.ids]) + "\n")
    return 0


def _train(args: argparse.Namespace) -> int:
    import bpe

    start = time.perf_counter()
    tok = bpe.Tokenizer.train_from_files(
        args.files, args.vocab_size, pattern=None if args.pattern == "none" else args.pattern,
        special_tokens=args.special or (), min_frequency=args.min_frequency, tie_break=args.tie_break,
        name=os.path.splitext(os.path.basename(args.out))[0], progress=not args.quiet)
    tok.save(args.out)
    print(f"trained n_vocab={tok.n_vocab} in {time.perf_counter() - start:.2f} s -> {args.out}", file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bpe", description="Byte-level BPE tokenizers.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("demo", help="train on the bundled sample and compare with o200k_base/cl100k_base")
    p.add_argument("--vocab-size", type=int, default=2048)
    p.add_argument("--pattern", default="o200k_base")
    p.set_defaults(func=_demo)

    p = sub.add_parser("encode", help="print the ids of TEXT (or of stdin)")
    p.add_argument("tokenizer", help="a bundled encoding name or a saved tokenizer file")
    p.add_argument("text", nargs="?")
    p.add_argument("--allow-special", action="store_true", help="encode special-token text as special tokens")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_encode)

    p = sub.add_parser("decode", help="print the text of IDS")
    p.add_argument("tokenizer")
    p.add_argument("ids", nargs="+")
    p.set_defaults(func=_decode)

    p = sub.add_parser("train", help="train a tokenizer on UTF-8 text files and save it")
    p.add_argument("files", nargs="+")
    p.add_argument("--vocab-size", type=int, required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--pattern", default="o200k_base", help="a pattern name, 'none', or a regex")
    p.add_argument("--special", action="append", help="a special token (repeatable)")
    p.add_argument("--min-frequency", type=int, default=2)
    p.add_argument("--tie-break", choices=["ids", "hf"], default="ids",
                   help="merge ties: smaller ids (default) or Hugging Face's order")
    p.add_argument("--quiet", action="store_true", help="no progress line on stderr")
    p.set_defaults(func=_train)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, TypeError, KeyError, OSError) as exc:
        print(f"bpe: error: {exc}", file=sys.stderr)
        return 2
