"""The ``bpe`` command line (also ``python -m bpe``): see what a tokenizer does without a
Python prompt.

Commands: ``demo`` (the README's main job, on the bundled public-domain sample: the opening
chapters of Melville's *Moby-Dick*, from Project Gutenberg), ``encode``, ``decode``,
``tokens`` (the text split into tokens, coloured in a terminal), ``compare`` (what files cost
in several tokenizers), ``curve`` (bytes per token against vocabulary size; ``--plot`` with
matplotlib, optional), ``inspect`` (what a tokenizer holds; ``--token ID``: one token) and
``train``.  Each takes ``--encoding NAME`` or ``--model PATH`` (a file ``save`` wrote, a
``.tiktoken`` file, or a Hugging Face ``tokenizer.json`` or its folder) and reads text from
its arguments, from files (``-f``) or from standard input.

Errors are one line on stderr (``bpe: error: ...``) with exit status 1 (2 for a wrong
command line), naming the command-line flag that fixes them; ``--debug`` shows the
traceback.  A closed pipe (``bpe tokens big.txt | head``) ends the command quietly.  Nothing
here touches the network, and the library API lives elsewhere: this module only parses
arguments, reads input and prints.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from typing import Optional, Sequence


class CLIError(Exception):
    """A problem to report as one line on stderr (exit status 1)."""


# ------------------------------------------------------------------------------ input

def _read_file(path: str, errors: str) -> str:
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as f:
                data = f.read()
    except OSError as exc:
        raise CLIError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8", errors)
    except UnicodeDecodeError as exc:
        raise CLIError(_not_utf8("standard input" if path == "-" else path, exc.start,
                                 data[exc.start:exc.start + 4], "pass --errors replace to read it anyway")) from None


def _not_utf8(name: str, offset: int, sample: bytes, fix: str) -> str:
    return f"{name} is not valid UTF-8 at byte {offset:,} ({sample!r}); {fix} (bad bytes become U+FFFD)"


def _input_text(args: argparse.Namespace) -> str:
    """The text of the TEXT arguments (joined by spaces), else the -f files (joined), else
    standard input."""
    if args.text and args.files:
        raise CLIError("give the text as arguments or with -f FILE, not both")
    if args.text == ["-"]:
        return _read_file("-", args.errors)
    if args.text:
        return " ".join(args.text)
    if args.files:
        return "".join(_read_file(p, args.errors) for p in args.files)
    return _read_file("-", args.errors)


def _tokenizer(args: argparse.Namespace):
    import bpe

    if args.model is not None:
        return _load_model(args.model, getattr(args, "pattern", None))
    return bpe.get_encoding(args.encoding or "o200k_base")


def _load_model(path: str, pattern: Optional[str] = None):
    """A tokenizer from a file: a ``tokenizer.json`` (or a folder holding one), a ``.tiktoken``
    rank file (the pattern of the bundled encoding of that name, or ``--pattern``), or a file
    ``save`` wrote."""
    import bpe

    if os.path.isdir(path) or path.endswith(".json"):
        return bpe.Tokenizer.from_hf(path)
    if path.endswith(".tiktoken"):
        name = os.path.basename(path)[: -len(".tiktoken")]
        if pattern is None and name in bpe.registry.ENCODINGS:
            _, pattern_name, specials, _ = bpe.registry.ENCODINGS[name]
            return bpe.Tokenizer.from_tiktoken(path, pattern=pattern_name, special_tokens=specials)
        if pattern is None:
            raise CLIError(f"{path}: a .tiktoken file holds no split pattern; pass --pattern NAME|REGEX "
                           f"(names: {', '.join(sorted(bpe.NAMED_PATTERNS))})")
        return bpe.Tokenizer.from_tiktoken(path, pattern=None if pattern == "none" else pattern)
    return bpe.Tokenizer.load(path)


def _specials(args: argparse.Namespace):
    """(allowed_special, disallowed_special) of --allow-special / --ordinary."""
    if args.allow_special:
        return "all", ()
    if args.ordinary:
        return frozenset(), ()
    return frozenset(), "all"


def _encode(tok, text: str, args: argparse.Namespace) -> list[int]:
    import bpe

    allowed, disallowed = _specials(args)
    try:
        return tok.encode(text, allowed_special=allowed, disallowed_special=disallowed)
    except bpe.DisallowedSpecialTokenError as exc:
        raise CLIError(f"the input holds the special token {exc.token!r}; pass --allow-special to encode "
                       "special-token text as those tokens, or --ordinary to encode it as plain text") from None


# ------------------------------------------------------------------------------ commands

def _cmd_encode(args: argparse.Namespace) -> int:
    tok = _tokenizer(args)
    ids = _encode(tok, _input_text(args), args)
    if args.json:
        print(json.dumps(ids))
    elif args.lines:
        for i, s in zip(ids, _shown(tok, ids, args.display)):
            print(f"{i}\t{s}")
    else:
        print(" ".join(map(str, ids)))
    return 0


def _parse_ids(words: Sequence[str]) -> list[int]:
    """Ids as `bpe encode` prints them: space-separated, a JSON list, or one `id<TAB>token`
    line each."""
    text = " ".join(words).strip()
    if text.startswith("["):
        try:
            ids = json.loads(text)
        except ValueError:
            raise CLIError("the ids start with '[' but are not a JSON list") from None
        if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
            raise CLIError("the JSON ids must be a list of integers")
        return ids
    ids = []
    for line in text.splitlines():
        fields = line.split("\t")[0].split() if "\t" in line else line.split()
        for field in fields:
            if not (field.lstrip("-").isascii() and field.lstrip("-").isdigit()):
                raise CLIError(f"{field[:40]!r} is not a token id; pass integers (as `bpe encode` prints them)")
            ids.append(int(field))
    return ids


def _cmd_decode(args: argparse.Namespace) -> int:
    tok = _tokenizer(args)
    ids = _parse_ids(args.ids if args.ids and args.ids != ["-"] else [_read_file("-", "strict")])
    try:
        data = tok.decode_bytes(ids)
    except KeyError as exc:
        raise CLIError(f"{exc.args[0]}; ids of this tokenizer are 0 to {tok.max_token_value:,}") from None
    sys.stdout.write(data.decode("utf-8", args.errors) + ("" if args.no_newline else "\n"))
    return 0


def _shown(tok, ids: list[int], display: bool) -> list[str]:
    """Each token as text: its characters, its bytes escaped (\\xNN) where it holds only part
    of a character, or (``display``) its vocabulary string (GPT-2's ``Ġ`` for a space)."""
    if display:
        return tok.convert_ids_to_tokens(ids)
    out = []
    for i in ids:
        data = tok.decode_single_token_bytes(i)
        try:
            out.append(data.decode("utf-8"))
        except UnicodeDecodeError:
            out.append(data.decode("utf-8", "backslashreplace"))
    return out


_COLOURS = ["\x1b[48;5;153m", "\x1b[48;5;223m", "\x1b[48;5;194m", "\x1b[48;5;225m", "\x1b[48;5;230m"]


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def _cmd_tokens(args: argparse.Namespace) -> int:
    tok = _tokenizer(args)
    text = _input_text(args)
    ids = _encode(tok, text, args)
    shown = _shown(tok, ids, args.display)
    colour = sys.stdout.isatty() and not os.environ.get("NO_COLOR") and not args.plain
    parts = []
    for n, (i, s) in enumerate(zip(ids, shown)):
        label = f"{s}|{i}" if args.ids else s
        if colour:
            parts.append(f"{_COLOURS[n % len(_COLOURS)]}\x1b[30m{label}\x1b[0m")
        else:
            parts.append(f"[{label}]")
    sys.stdout.write("".join(parts) + "\n")
    n_bytes = len(text.encode("utf-8", "surrogatepass"))
    print(f"{_count(len(ids), 'token')}, {_count(len(text), 'character')}, {_count(n_bytes, 'byte')}", file=sys.stderr)
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    import bpe

    names = [n for n in args.encodings.split(",") if n]
    toks = [(n, _load_model(n) if os.path.exists(n) else bpe.get_encoding(n)) for n in names]
    rows = []
    for path in args.paths:
        text = _read_file(path, args.errors)
        n_bytes, n_chars = len(text.encode("utf-8", "surrogatepass")), len(text)
        counts = [(name, tok.count(text)) for name, tok in toks]
        best = min(c for _, c in counts) or 1
        for name, count in counts:
            rows.append({"file": path, "tokenizer": name, "tokens": count, "bytes": n_bytes, "chars": n_chars,
                         "bytes_per_token": round(n_bytes / count, 3) if count else 0.0,
                         "chars_per_token": round(n_chars / count, 3) if count else 0.0,
                         "overhead": round(count / best - 1, 4)})
    if args.json:
        print(json.dumps(rows, indent=1))
    elif args.csv:
        writer = csv.DictWriter(sys.stdout, fieldnames=list(rows[0]) if rows else ["file"])
        writer.writeheader()
        writer.writerows(rows)
    else:
        head = ["file", "tokenizer", "tokens", "bytes/token", "chars/token", "vs best"]
        body = [[r["file"], r["tokenizer"], f"{r['tokens']:,}", f"{r['bytes_per_token']:.2f}",
                 f"{r['chars_per_token']:.2f}", "best" if r["overhead"] == 0 else f"+{100 * r['overhead']:.1f}%"]
                for r in rows]
        widths = [max(len(str(x)) for x in col) for col in zip(head, *body)]
        for line in [head] + body:
            print("  ".join(str(x).ljust(w) if k < 2 else str(x).rjust(w) for k, (x, w) in enumerate(zip(line, widths))))
    return 0


def _cmd_inspect(args: argparse.Namespace) -> int:
    tok = _load_model(args.path, args.pattern) if args.path else _tokenizer(args)
    if args.token is not None:
        return _inspect_token(tok, args.token)
    specials = tok.special_tokens
    print(f"name:          {tok.name}")
    print(f"vocabulary:    {tok.n_vocab:,} ids ({len(tok.mergeable_ranks):,} mergeable, {len(specials):,} special)")
    print(f"pattern:       {tok.pattern if tok.pattern is not None else 'none (the whole text is one piece)'}")
    print(f"normalization: {tok.normalization or 'none'}")
    shown = sorted(specials.items(), key=lambda kv: kv[1])
    print(f"special:       {', '.join(f'{s} {i}' for s, i in shown[:12])}"
          + (f", ... ({len(shown) - 12:,} more)" if len(shown) > 12 else ""))
    merges = tok.merges
    if merges:
        print(f"first merges:  {', '.join(repr(a + b) for a, b in merges[:6])}")
        print(f"last merges:   {', '.join(repr(a + b) for a, b in merges[-6:])}")
    longest = sorted(tok.mergeable_ranks, key=lambda t: (-len(t), t))[:5]
    print(f"longest:       {', '.join(f'{_short(t)} ({len(t)} bytes)' for t in longest)}")
    byte_ids = [tok.mergeable_ranks[bytes([b])] for b in range(256)]
    moved = sum(1 for b, i in enumerate(byte_ids) if i != b)
    print(f"single bytes:  {'ids 0-255 in byte order' if moved == 0 else f'{moved} of 256 bytes have an id other than their value (the byte-id permutation: byte 0 is id {byte_ids[0]}, byte 32 is id {byte_ids[32]})'}")
    return 0


def _short(data: bytes, limit: int = 40) -> str:
    shown = repr(data)
    return shown if len(shown) <= limit else shown[: limit - 4] + "...'"


def _inspect_token(tok, token_id: int) -> int:
    try:
        data = tok.decode_single_token_bytes(token_id)
    except KeyError as exc:
        raise CLIError(f"{exc.args[0]}; ids of this tokenizer are 0 to {tok.max_token_value:,}") from None
    print(f"id:      {token_id}")
    print(f"bytes:   {data!r} ({len(data)} bytes)")
    print(f"display: {tok.id_to_token(token_id)}")
    if token_id in tok.special_tokens.values():
        print("special token (never made by merges)")
        return 0
    print("merge tree:")
    ranks = tok.mergeable_ranks

    def tree(part: bytes, depth: int) -> None:
        rank = ranks[part]
        print(f"  {'  ' * depth}{part!r} {rank}")
        if len(part) > 1:
            split = _split_of(tok, part, rank)
            if split is not None:
                for sub in split:
                    tree(sub, depth + 1)

    tree(data, 0)
    return 0


def _split_of(tok, part: bytes, rank: int) -> Optional[tuple[bytes, bytes]]:
    """The two tokens the merge that made ``part`` joined: under the rank rule its BPE with
    only lower ranks allowed (two parts), else the merge list's entry."""
    if tok._rule == "ranks":
        ids = tok._core.encode_piece_bytes(part, rank)
        return tuple(tok.decode_single_token_bytes(i) for i in ids) if len(ids) == 2 else None
    return next(((a, b) for a, b in tok.merges if a + b == part), None)


def _cmd_curve(args: argparse.Namespace) -> int:
    """For each file, one training run up to --max-vocab, and bytes per token on that file at
    each vocabulary size the run passed (its training curve)."""
    import bpe

    if args.max_vocab < 257:
        raise CLIError(f"--max-vocab must be at least 257 (the 256 byte tokens and one merge), got {args.max_vocab}")
    if args.plot:
        try:
            import matplotlib
        except ImportError:
            raise CLIError("--plot needs matplotlib, which is not installed: pip install matplotlib "
                           "(or the cybpe[plot] extra)") from None
        matplotlib.use("Agg")
    sizes = sorted({256, args.max_vocab} | {s for s in (512, 1024, 2048, 4096, 8192, 16384, 32768, 65536)
                                             if s < args.max_vocab})
    curves = {}
    for path in args.paths:
        text = _read_file(path, args.errors)
        tok = bpe.Tokenizer.train([text], args.max_vocab, pattern=None if args.pattern == "none" else args.pattern,
                                  min_frequency=args.min_frequency)
        n_bytes = len(text.encode("utf-8", "surrogatepass"))
        curves[path] = [(size, n_bytes / tokens) for size, tokens in tok.training_curve]
    head = ["vocabulary"] + list(args.paths)
    rows = []
    for size in sizes:
        row = [f"{size:,}"]
        for path in args.paths:
            known = [b for s, b in curves[path] if s <= size]
            row.append(f"{known[-1]:.2f}" if known else "-")
        rows.append(row)
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    print("bytes per token on each file, by vocabulary size (one training run per file):")
    for line in [head] + rows:
        print("  ".join(str(x).rjust(w) for x, w in zip(line, widths)))
    if args.plot:
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7, 4.5))
        for path, curve in curves.items():
            ax.plot([s for s, _ in curve], [b for _, b in curve], label=os.path.basename(path))
        ax.set_xlabel("vocabulary size")
        ax.set_ylabel("bytes per token")
        ax.set_xscale("log", base=2)
        ax.grid(True, alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
        print(f"wrote {args.plot}", file=sys.stderr)
    return 0


def _cmd_train(args: argparse.Namespace) -> int:
    import bpe
    from .errors import TrainingInputNotUTF8Error

    specials = list(dict.fromkeys(args.special or ()))
    if args.vocab_size < 256 + len(specials):
        raise CLIError(f"--vocab-size {args.vocab_size} is too small: it counts the 256 byte tokens and the "
                       f"{len(specials)} special tokens; pass at least {256 + len(specials)}")
    if args.min_frequency < 1:
        raise CLIError(f"--min-frequency must be 1 or more, got {args.min_frequency}")
    folder = os.path.dirname(os.path.abspath(args.out))
    if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
        raise CLIError(f"cannot write {args.out}: {folder} is not a writable folder")
    for path in args.paths:
        if not os.path.isfile(path) or not os.access(path, os.R_OK):
            raise CLIError(f"cannot read {path}: not a readable file")
    start = time.perf_counter()
    try:
        tok = bpe.Tokenizer.train_from_files(
            args.paths, args.vocab_size, pattern=None if args.pattern == "none" else args.pattern,
            special_tokens=specials, min_frequency=args.min_frequency, errors=args.errors, tie_break=args.tie_break,
            name=os.path.splitext(os.path.basename(args.out))[0], progress=not args.quiet)
    except TrainingInputNotUTF8Error as exc:
        raise CLIError(_not_utf8(exc.path, exc.offset, exc.sample,
                                 "fix the file or read it with --errors replace")) from None
    tok.save(args.out)
    curve = tok.training_curve
    if not args.quiet:
        print(f"trained n_vocab={tok.n_vocab:,} in {time.perf_counter() - start:.2f} s -> {args.out}", file=sys.stderr)
        if tok.n_vocab < args.vocab_size:
            print(f"warning: the text ran out of pairs to merge at {tok.n_vocab:,} tokens, before --vocab-size "
                  f"{args.vocab_size:,}", file=sys.stderr)
        if curve:
            print(f"bytes per token on the training text: {curve[0][1] / curve[-1][1]:.2f}", file=sys.stderr)
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
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


# ------------------------------------------------------------------------------ parser

def _model_options(p: argparse.ArgumentParser) -> None:
    which = p.add_mutually_exclusive_group()
    which.add_argument("--encoding", "-e", metavar="NAME", help="a bundled encoding (default: o200k_base)")
    which.add_argument("--model", "-m", metavar="PATH",
                       help="a file `bpe train`/save wrote, a .tiktoken file, or a tokenizer.json (or its folder)")
    p.add_argument("--pattern", help="the split pattern of a .tiktoken --model (a name, 'none' or a regex)")


def _text_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("text", nargs="*", help="the text (words are joined by spaces); none or '-': read -f files or stdin")
    p.add_argument("-f", "--file", dest="files", action="append", metavar="FILE", help="read text from FILE ('-': stdin)")
    p.add_argument("--errors", choices=["strict", "replace"], default="strict",
                   help="input that is not UTF-8: an error (default) or U+FFFD")
    special = p.add_mutually_exclusive_group()
    special.add_argument("--allow-special", action="store_true",
                         help="special-token text in the input becomes those tokens")
    special.add_argument("--ordinary", action="store_true", help="special-token text is encoded as plain text")


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(prog="bpe", description="Byte-level BPE tokenizers: see, compare, train.")
    parser.add_argument("--version", action="version", version=f"bpe {__version__}")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
    sub = parser.add_subparsers(dest="command", required=True)
    # --debug is taken after the command as well (SUPPRESS: absent there, the top level's value stays)
    debug = argparse.ArgumentParser(add_help=False)
    debug.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show the traceback of an error")

    p = sub.add_parser("demo", parents=[debug], help="train on the bundled sample and compare with o200k_base/cl100k_base")
    p.add_argument("--vocab-size", type=int, default=2048)
    p.add_argument("--pattern", default="o200k_base")
    p.set_defaults(func=_cmd_demo)

    p = sub.add_parser("encode", parents=[debug], help="the ids of a text")
    _model_options(p)
    _text_options(p)
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="a JSON list")
    out.add_argument("--lines", action="store_true", help="one 'id<TAB>token' line per token")
    p.add_argument("--display", action="store_true", help="with --lines: vocabulary strings (GPT-2's Ġ for a space)")
    p.set_defaults(func=_cmd_encode)

    p = sub.add_parser("decode", parents=[debug], help="the text of ids (as `bpe encode` prints them; none: read stdin)")
    _model_options(p)
    p.add_argument("ids", nargs="*", help="the ids; none or '-': read stdin")
    p.add_argument("--errors", choices=["strict", "replace"], default="replace",
                   help="bytes that are not UTF-8 in the output: U+FFFD (default) or an error")
    p.add_argument("-n", "--no-newline", action="store_true", help="no newline after the text")
    p.set_defaults(func=_cmd_decode)

    p = sub.add_parser("tokens", parents=[debug], help="the text split into tokens (coloured in a terminal, else [brackets])")
    _model_options(p)
    _text_options(p)
    p.add_argument("--ids", action="store_true", help="each token's id after it")
    p.add_argument("--display", action="store_true", help="vocabulary strings (GPT-2's Ġ for a space)")
    p.add_argument("--plain", action="store_true", help="brackets even in a terminal (also: NO_COLOR=1)")
    p.set_defaults(func=_cmd_tokens)

    p = sub.add_parser("compare", parents=[debug], help="tokens, bytes and characters per token of files in several tokenizers")
    p.add_argument("paths", nargs="+", metavar="FILE")
    p.add_argument("--encodings", default="o200k_base,cl100k_base,r50k_base",
                   help="comma-separated encoding names or model paths (default: o200k_base,cl100k_base,r50k_base)")
    p.add_argument("--errors", choices=["strict", "replace"], default="strict")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true")
    out.add_argument("--csv", action="store_true")
    p.set_defaults(func=_cmd_compare)

    p = sub.add_parser("inspect", parents=[debug], help="what a tokenizer holds; --token ID: one token and its merge tree")
    p.add_argument("path", nargs="?", metavar="MODEL", help="a model file (or use --encoding / --model)")
    _model_options(p)
    p.add_argument("--token", type=int, metavar="ID")
    p.set_defaults(func=_cmd_inspect)

    p = sub.add_parser("curve", parents=[debug], help="bytes per token against vocabulary size, from one training run per file")
    p.add_argument("paths", nargs="+", metavar="FILE")
    p.add_argument("--max-vocab", type=int, default=4096)
    p.add_argument("--pattern", default="o200k_base", help="a pattern name, 'none', or a regex")
    p.add_argument("--min-frequency", type=int, default=2)
    p.add_argument("--errors", choices=["strict", "replace"], default="strict")
    p.add_argument("--plot", metavar="PNG", help="also write the figure (needs matplotlib: the cybpe[plot] extra)")
    p.set_defaults(func=_cmd_curve)

    p = sub.add_parser("train", parents=[debug], help="train a tokenizer on UTF-8 text files and save it")
    p.add_argument("paths", nargs="+", metavar="FILE")
    p.add_argument("--vocab-size", type=int, required=True)
    p.add_argument("--out", "-o", required=True)
    p.add_argument("--pattern", default="o200k_base", help="a pattern name, 'none', or a regex")
    p.add_argument("--special", action="append", help="a special token (repeatable)")
    p.add_argument("--min-frequency", type=int, default=2)
    p.add_argument("--tie-break", choices=["ids", "hf"], default="ids",
                   help="merge ties: smaller ids (default) or Hugging Face's order")
    p.add_argument("--errors", choices=["strict", "replace"], default="strict",
                   help="bytes that are not UTF-8: an error naming the file and byte (default) or U+FFFD")
    p.add_argument("--quiet", action="store_true", help="no progress and no summary on stderr")
    p.set_defaults(func=_cmd_train)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    import bpe

    try:
        return args.func(args)
    except BrokenPipeError:
        # the reader went away (`| head`): stop quietly, without Python's message at exit
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except OSError:
            pass
        return 0
    except KeyboardInterrupt:
        print("bpe: interrupted", file=sys.stderr)
        return 130
    except (CLIError, bpe.BPEError, ValueError, TypeError, KeyError, OSError) as exc:
        if args.debug:
            raise
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        if isinstance(exc, bpe.UnknownEncodingError):
            message = f"{str(exc).split(' (to load')[0]}; for a tokenizer file pass --model PATH"
        print(f"bpe: error: {message}", file=sys.stderr)
        return 1
