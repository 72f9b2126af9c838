"""Micro-benchmarks of bpe against every installed peer, measured side by side in one run.

    python -m benchmarks                 # everything (about 5 minutes on 2 cores)
    python -m benchmarks --quick         # fewer rounds, smaller inputs
    python -m benchmarks --only throughput,short

Sections: ``throughput`` (encode_ordinary MB/s per corpus group and encoding, one call per
~8 KB document, single thread), ``regimes`` (the same with every encoder's caches cold,
streamed through a whole corpus, warm, and hot (warm with the encoder's own tables in the
CPU's caches), against every exact peer, with the ratio to the fastest), ``short`` (per-call
time on 20-200 byte texts), ``count`` (count() vs len(encode_ordinary())), ``decode``
(decode MB/s against the peers that decode), ``worst`` (pathological inputs: 256 KB and 1 MB
of one repeated character, spaces, digits, punctuation, an alternation, emoji), ``scripts`` (the
multilingual corpus's lines grouped by script), ``split`` (the pre-tokenizer alone: bpe's
compiled scanner against ``regex.findall`` with the same pattern, and its share of bpe's
encode time), ``batch`` (encode_ordinary_batch on 1 and 2 threads, encode_batch with special
tokens allowed on 1 and 2 threads, and sha256 on 1 and 2 threads as the machine's own
ceiling; 2 x rounds + 1 rounds), ``hf`` (the shared Hugging Face tokenizer.json files: bpe's
``from_hf`` against HF tokenizers, 1 and 2 threads, and loading), ``offsets``
(encode_with_offsets against encode and HF), ``scaling`` (time per 4x length of one
piece, both backends), ``calls`` (the transformers-style call with
truncation, padding and offsets against HF's encode_batch and transformers) and ``load`` (time and resident memory to load o200k_base, in fresh processes; also
with the backtracking tables that the first piece over 256 bytes builds) and ``train``
(training time, peak memory and compression against HF and SentencePiece;
benchmarks/training.py) and ``stream`` (1 GiB of synthetic text streamed through training:
memory stays at the size of the table of distinct pre-tokens).  Only when named in --only:
``callgrind`` (instructions per byte under valgrind, cold and warm; benchmarks/callgrind.py).

Peers (each used only if installed): tiktoken, riptoken, bpe-openai, Hugging Face tokenizers
(a byte-level BPE built from the same ranks), and, with the shared rank files, fastokens,
gigatoken and quicktok (PyPI quicktok-v1), loaded from those files (see ``peers``).  All peers
and bpe are timed in interleaved rounds and the median of the rounds is reported, so the
ratios come from one run on one machine.  Every timed round starts with cold caches
(``cold_start``): bpe's piece and pair caches, HF's word cache and the caches of fastokens and
gigatoken (rebuilt) only help within the round's own text, as they would on text never seen
before.  Every peer's ids are also compared with tiktoken's: a fast peer with wrong ids is
flagged.  Corpora come from ``$BPE_SHARED_DATA/corpora`` (default ``../shared/data``); without
them only the bundled sample is used.  Nothing here is a test: no assertion is made on time.
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from typing import Callable, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
GROUPS = {
    "prose": ["english.txt", "spanish.txt", "portuguese.txt"],
    "non-Latin": ["multilingual.txt"],
    "code": ["code_python.txt", "code_c.txt", "code_js.txt"],
}


# ------------------------------------------------------------------------------- inputs

def shared_data() -> Optional[str]:
    path = os.environ.get("BPE_SHARED_DATA") or os.path.join(HERE, "..", "..", "shared", "data")
    return path if os.path.isdir(os.path.join(path, "corpora")) else None


def documents(files: list[str], limit_bytes: int, doc_chars: int = 8000) -> list[str]:
    """~8 KB documents cut at line ends from the start of each file, up to limit_bytes per file."""
    import bpe

    base = shared_data()
    docs = []
    for name in files:
        path = os.path.join(base, "corpora", name) if base else bpe.sample_path()
        with open(path, encoding="utf-8") as f:
            text = f.read()
        taken = 0
        pos = 0
        while pos < len(text) and taken < limit_bytes:
            end = text.find("\n", pos + doc_chars)
            end = len(text) if end < 0 else end + 1
            docs.append(text[pos:end])
            taken += len(text[pos:end].encode("utf-8"))
            pos = end
    return docs


# ------------------------------------------------------------------------------- peers

def rank_file(name: str) -> Optional[str]:
    """The shared ``<name>.tiktoken`` rank file, if the shared data has it."""
    base = shared_data()
    path = os.path.join(base, "tiktoken", f"{name}.tiktoken") if base else None
    return path if path and os.path.isfile(path) else None


@functools.lru_cache(maxsize=None)
def peers(name: str, only: Optional[frozenset[str]] = None) -> dict[str, object]:
    """Encoders by label (``only``: just these peers, besides bpe); each has
    encode_ordinary(str) -> list[int].

    With the shared rank file (``$BPE_SHARED_DATA/tiktoken/<name>.tiktoken``), tiktoken and
    riptoken take their ranks from it (``tiktoken.load.load_tiktoken_bpe``), and so do the
    peers that can only load a vocabulary from a file: fastokens (``Tokenizer.from_tiktoken``),
    gigatoken (``Tokenizer.from_tiktoken`` with the encoding's pretokenizer named) and
    quicktok (its own binary vocab files, written from those ranks by quicktok's importer
    into a scratch folder).  Without the file, tiktoken and riptoken use bpe's bundled ranks
    and the file-only peers are left out.  Nothing is downloaded.  Peers that have thread
    pools run on one thread: fastokens with FASTOKENS_BPE_THREADS=1 (set here unless already
    set), gigatoken with ``parallel=False`` (its serial path never touches its pool), quicktok
    through its single-text call."""
    import bpe

    wanted = (lambda label: only is None or label in only)
    ours = bpe.get_encoding(name)
    out: dict[str, object] = {"bpe": ours}
    path = rank_file(name)
    ranks = ours.mergeable_ranks
    tk = None
    if wanted("tiktoken") or wanted("riptoken"):
        try:
            import tiktoken
            import tiktoken.load

            if path:
                ranks = tiktoken.load.load_tiktoken_bpe(path)
            tk = tiktoken.Encoding(name=name, pat_str=ours.pattern, mergeable_ranks=ranks,
                                   special_tokens=ours.special_tokens)
            if wanted("tiktoken"):
                out["tiktoken"] = tk
        except ImportError:
            pass
    if tk is not None and wanted("riptoken"):
        try:
            import riptoken

            out["riptoken"] = riptoken.Encoding(riptoken.CoreBPE(ranks, ours.special_tokens, ours.pattern), tk)
        except ImportError:
            pass
    if name in ("cl100k_base", "o200k_base") and wanted("bpe-openai"):
        try:
            import bpe_openai

            out["bpe-openai"] = bpe_openai.get_encoding(name)
        except ImportError:
            pass
    if wanted("hf-tokenizers"):
        try:
            out["hf-tokenizers"] = _hf_from_ranks(ours)
        except ImportError:
            pass
    if path and name in FILE_PEER_SCHEMES:
        for label, load in (("fastokens", _FastokensPeer), ("gigatoken", _GigatokenPeer), ("quicktok", _quicktok)):
            if wanted(label):
                try:
                    out[label] = load(name, path, ours)
                except ImportError:
                    pass
    return out


# what each file-only peer needs to know besides the rank file: gigatoken's pretokenizer name,
# quicktok's file stem and scanner (both name the hand-written split of that encoding's pattern)
FILE_PEER_SCHEMES = {"o200k_base": {"gigatoken": "o200k", "quicktok": ("o200k", "o200k")},
                     "cl100k_base": {"gigatoken": "gpt4", "quicktok": ("cl100k", "cl100k")}}


class _FastokensPeer:
    """fastokens (crusoecloud/fastokens), built from the rank file with the encoding's pattern
    and special tokens.  It keeps caches across calls (a token cache per instance, and caches
    per thread: token ids of recent pieces, the previous input's regex matches) and has no
    call that empties them: :meth:`forget_caches` builds a new instance from the file."""

    cold_by_rebuild = True  # cold_start builds a new instance

    def __init__(self, name: str, path: str, ours) -> None:
        os.environ.setdefault("FASTOKENS_BPE_THREADS", "1")  # read once, when its pool starts
        import fastokens

        self._build = lambda: fastokens.Tokenizer.from_tiktoken(path, pattern=ours.pattern,
                                                                special_tokens=ours.special_tokens)
        self._tok = self._build()

    def encode_ordinary(self, text: str) -> list[int]:
        return self._tok.encode_ordinary(text).ids

    def decode(self, ids: list[int]) -> str:
        return self._tok.decode(ids)

    def forget_caches(self) -> None:
        self._tok = None  # the old instance (and its caches) goes first
        self._tok = self._build()


class _GigatokenPeer:
    """gigatoken (marcelroed/gigatoken), built from the rank file with its hand-written
    pretokenizer for the encoding and no special tokens: it always matches the special
    tokens it knows inside the text, so without them it encodes them as plain text, as
    encode_ordinary must.  Its pretoken caches (the main one and those of its pooled workers)
    persist across calls and have no call that empties them: :meth:`forget_caches` builds a
    new instance from the file.  ``parallel=False`` keeps each call on the calling thread."""

    cold_by_rebuild = True  # cold_start builds a new instance

    def __init__(self, name: str, path: str, ours) -> None:
        import gigatoken

        scheme = FILE_PEER_SCHEMES[name]["gigatoken"]
        self._build = lambda: gigatoken.Tokenizer.from_tiktoken(path, pretokenizer=scheme, special_tokens={}).backend
        self._tok = self._build()

    def encode_ordinary(self, text: str) -> list[int]:
        return self._tok.encode_batch_list([text], parallel=False)[0]

    def decode(self, ids: list[int]) -> str:
        return self._tok.decode(ids).decode("utf-8", "replace")

    def forget_caches(self) -> None:
        self._tok = None
        self._tok = self._build()


def _quicktok(name: str, path: str, ours):
    """quicktok (PyPI quicktok-v1, imported as ``quicktok``; the PyPI package named quicktok
    is another project) from vocab files written from the rank file.  Its encoder keeps no
    state between calls (it encodes over read-only tables), so it needs no cold start."""
    import importlib.metadata
    import tempfile

    import tiktoken.load

    try:
        importlib.metadata.version("quicktok-v1")
        import quicktok
        from quicktok import _import_core
    except (importlib.metadata.PackageNotFoundError, ImportError) as exc:
        raise ImportError("quicktok-v1 is not installed") from exc
    stem, scanner = FILE_PEER_SCHEMES[name]["quicktok"]
    with tempfile.TemporaryDirectory() as folder:
        # the same files quicktok.import_tokenizer writes: <stem>.vocab (ranks), <stem>.special,
        # plus the package's Unicode class table for the scanner; loaded into memory here
        _import_core.write_files(folder, stem, tiktoken.load.load_tiktoken_bpe(path), ours.special_tokens,
                                 scanner, False)
        _import_core.ensure_tables(folder, os.path.join(os.path.dirname(quicktok.__file__), "data"), scanner, False)
        return quicktok.Tokenizer(name, folder)


class _HFWrapper:
    def __init__(self, tok):
        self._tok = tok

    def encode_ordinary(self, text: str) -> list[int]:
        return self._tok.encode(text, add_special_tokens=False).ids

    def decode(self, ids: list[int]) -> str:
        return self._tok.decode(ids, skip_special_tokens=False)

    def forget_caches(self) -> None:
        """Empty the BPE model's word cache (kept across calls)."""
        clear = getattr(self._tok.model, "_clear_cache", None)
        if clear is not None:
            clear()


def hf_pre_tokenizer(pattern: str):
    """Hugging Face's form of a tiktoken split: the regex (isolated), then byte-level."""
    from tokenizers import Regex, pre_tokenizers

    return pre_tokenizers.Sequence([
        # Oniguruma's `$` also matches at every line end: tiktoken's means end of text (`\z`)
        pre_tokenizers.Split(Regex(pattern.replace("$", r"\z")), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])


def _hf_from_ranks(enc) -> _HFWrapper:
    """A Hugging Face byte-level BPE with the same ranks, merges and split pattern."""
    from tokenizers import Tokenizer, decoders, models

    from bpe.byte_unicode import to_display

    vocab = {to_display(t): r for t, r in enc.mergeable_ranks.items()}
    merges = [(to_display(a), to_display(b)) for a, b in enc.merges]
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, ignore_merges=True))
    tok.pre_tokenizer = hf_pre_tokenizer(enc.pattern)
    tok.decoder = decoders.ByteLevel()
    return _HFWrapper(tok)


# ------------------------------------------------------------------------------- timing

FAILED: dict[str, str] = {}


def cold_start(encoder) -> Callable[[], None]:
    """What to run before each timed round of ``encoder`` so that it starts cold: bpe's
    thread-local piece caches forget everything and its pair cache is emptied; HF tokenizers'
    word cache is emptied; fastokens and gigatoken, which cannot empty theirs, are rebuilt
    from the rank file (tiktoken, riptoken, bpe-openai and quicktok keep no state between
    calls).  Hits then come only from repetition inside the round's text."""
    core = getattr(encoder, "_core", None)
    forget = getattr(core, "_forget_cached_pieces", None) or getattr(encoder, "forget_caches", None)
    return forget if forget is not None else (lambda: None)


def prime(encoder, docs: list[str]) -> None:
    """Encode ``docs`` so that the encoder's one-time lazy set-up is done before anything is
    timed.  bpe builds its pair signatures (and the backtracking tables they come from) only
    once 20,000 pieces went through its merge loop (bpe/_signatures.pxi), which one pass over
    a text with few pieces to merge may not reach: its passes repeat, caches emptied in
    between, until they are built (nothing is encoded if they already are).  After 8 passes
    (400 KB of Python code merge about 1,700 pieces a pass) the build is asked for at the
    next merged piece, as a process that has encoded more text would have it, and one more
    pass builds them.  Any other encoder gets one pass."""
    core = getattr(encoder, "_core", None)
    state = getattr(core, "_signatures_state", None)
    for attempt in range(9):
        if state is not None and state() != "unbuilt":
            return
        if attempt == 8 and hasattr(core, "_set_signatures"):
            enabled = core._set_signatures(True, 0)   # (0: built at the next merged piece)
            core._set_signatures(enabled)
        for d in docs:
            encoder.encode_ordinary(d)
        if state is None:
            return
        cold_start(encoder)()


def interleaved(fns: dict[str, Callable[[], object]], rounds: int,
                setup: Optional[dict[str, Callable[[], None]]] = None) -> dict[str, float]:
    """Median seconds per label, running the labels in turn in every round (``setup[label]``,
    if given, runs untimed before each call).  A label whose call raises (tiktoken panics on
    some long inputs) gets NaN and its error in FAILED."""
    times = interleaved_times(fns, rounds, setup)
    return {k: statistics.median(v) if v else float("nan") for k, v in times.items()}


def paired_ratio(times: dict[str, list[float]], a: str, b: str) -> str:
    """Speed of ``a`` over speed of ``b`` (their times' inverse ratio) in each round of
    :func:`interleaved_times`, as "median (min-max)": runs of the same round are neighbours,
    so a ratio per round is steadier than a ratio of two medians on a noisy machine."""
    ratios = sorted(tb / ta for ta, tb in zip(times[a], times[b]))
    if not ratios:
        return "-"
    return f"{statistics.median(ratios):.2f}x ({ratios[0]:.2f}-{ratios[-1]:.2f})"


def interleaved_times(fns: dict[str, Callable[[], object]], rounds: int,
                      setup: Optional[dict[str, Callable[[], None]]] = None,
                      cpu: Optional[dict[str, list[float]]] = None,
                      collect_first: bool = False) -> dict[str, list[float]]:
    """The seconds of every round per label (see :func:`interleaved`); with ``cpu``, the
    process's CPU seconds (all threads) of every round are appended to ``cpu[label]``.
    Garbage is collected before each timed call, after its setup; with ``collect_first``,
    before its setup (the collection walks every object of the process, which can push what
    the setup brought into the CPU's caches out again)."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    for r in range(rounds):
        order = list(fns) if r % 2 == 0 else list(reversed(fns))
        for label in order:
            if label in FAILED:
                continue
            if collect_first:
                gc.collect()
            if setup and label in setup:
                setup[label]()
            if not collect_first:
                gc.collect()
            c = time.process_time()
            t = time.perf_counter()
            try:
                fns[label]()
            except (Exception, BaseException) as exc:  # noqa: B036 - pyo3 panics are BaseException
                if isinstance(exc, KeyboardInterrupt):
                    raise
                FAILED[label] = f"{type(exc).__name__}: {str(exc)[:60]}"
                continue
            times[label].append(time.perf_counter() - t)
            if cpu is not None:
                cpu.setdefault(label, []).append(time.process_time() - c)
    return times


def check_ids(encoders: dict[str, object], docs: list[str]) -> dict[str, int]:
    """Documents on which each encoder's ids differ from tiktoken's (or bpe's, without tiktoken)."""
    ref = encoders.get("tiktoken", encoders["bpe"])
    want = [ref.encode_ordinary(d) for d in docs]
    return {label: sum(e.encode_ordinary(d) != w for d, w in zip(docs, want)) for label, e in encoders.items()}


def exactness(encoders: dict[str, object], docs: list[str]) -> dict[str, str]:
    """Per encoder, "" if its ids equal tiktoken's (bpe's, without tiktoken) on every document,
    else what differs ("wrong ids (n docs)") or how it failed."""
    ref = encoders.get("tiktoken", encoders["bpe"])
    want = [ref.encode_ordinary(d) for d in docs]
    out = {}
    for label, e in encoders.items():
        try:
            n = sum(e.encode_ordinary(d) != w for d, w in zip(docs, want))
            out[label] = f"wrong ids ({n} docs)" if n else ""
        except (Exception, BaseException) as exc:  # noqa: B036 - pyo3 panics are BaseException
            if isinstance(exc, KeyboardInterrupt):
                raise
            out[label] = f"fails ({type(exc).__name__})"
    return out


def table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    line = lambda cells: "| " + " | ".join(str(c).rjust(w) for c, w in zip(cells, widths)) + " |"
    return "\n".join([line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|"] + [line(r) for r in rows])


# ------------------------------------------------------------------------------- sections

def bench_throughput(args) -> None:
    print("\n## Throughput: encode_ordinary, one call per ~8 KB document, single thread (MB/s, median)")
    for name in args.encodings:
        encoders = peers(name)
        rows = []
        for group, files in GROUPS.items():
            docs = documents(files, args.bytes_per_file)
            n_bytes = sum(len(d.encode("utf-8")) for d in docs)
            wrong = check_ids(encoders, docs)
            med = interleaved({k: (lambda e=e: [e.encode_ordinary(d) for d in docs]) for k, e in encoders.items()},
                              args.rounds, {k: cold_start(e) for k, e in encoders.items()})
            speed = {k: n_bytes / t / 1e6 for k, t in med.items()}
            others = [v for k, v in speed.items() if k != "bpe" and not wrong[k]]
            best_peer = max(others) if others else float("nan")
            row = [group, f"{n_bytes / 1e6:.2f} MB"]
            for k in encoders:
                row.append(f"{speed[k]:.1f}" + (f" ({wrong[k]} wrong docs)" if wrong[k] else ""))
            tk = speed.get("tiktoken")
            row.append(f"{speed['bpe'] / tk:.2f}x" if tk else "-")
            row.append(f"{speed['bpe'] / best_peer:.2f}x")
            rows.append(row)
        print(f"\n### {name}\n")
        print(table(["group", "input"] + list(encoders) + ["bpe / tiktoken", "bpe / fastest correct peer"], rows))


def fresh_copies(docs: list[str]) -> list[str]:
    """New str objects with the same text: nothing cached on the old ones (CPython keeps the
    UTF-8 form of a non-ASCII str once an extension asked for it) carries over."""
    return [d.encode("utf-8").decode("utf-8") for d in docs]


def bench_regimes(args) -> None:
    """bpe against every peer whose ids are exact, with the encoders' caches in four states,
    per corpus group, one encode_ordinary call per ~8 KB document, single thread (MB/s).

    * cold: before every round each encoder starts cold (:func:`cold_start`: caches emptied,
      or fastokens and gigatoken rebuilt from the rank file), then encodes a short warm-up
      string and gets fresh str objects (:func:`fresh_copies`).  One-time lazy set-up (bpe's
      signatures, see :func:`prime`) is done before the first round.
      A round is the documents of ``throughput``; hits come only from repetition inside them.
    * streaming: one pass over the group's whole corpus files (in --quick, twice the cold
      input), starting cold as above, caches persisting through the pass: what a process
      that tokenizes a large corpus sees.  Fewer rounds (half, at least one).
    * warm: the cold documents again, after an untimed pass over them: the same str objects,
      caches persisting.  The other encoders' rounds run in between, so part of what an
      encoder keeps has left the CPU's caches when its round comes.
    * hot: as warm, but each encoder encodes the documents once more, untimed, right before
      each of its rounds (after the collection of garbage that precedes every round), so that
      its tables are in the CPU's caches: what a micro-benchmark that encodes the same text
      in a loop sees.

    Every encoder's ids are compared with tiktoken's on the streaming text (the cold and warm
    documents are its start) before anything is timed; one with other ids is reported as
    such and not timed.  The encoders take turns in every round (:func:`interleaved_times`).
    Cells: median MB/s (min-max over rounds).  bpe / fastest exact peer: speed ratio to the
    peer with the best median, per round (:func:`paired_ratio`), median (min-max); above 1
    means bpe is faster.  Below each table: CPU time over wall time of each encoder's timed
    calls, the check that each ran on one thread (1.00)."""
    print("\n## Regimes: cold, streaming, warm and hot caches; one call per ~8 KB document, single thread "
          "(MB/s, median (min-max))")
    stream_limit = 2 * args.bytes_per_file if args.quick else 1 << 40
    stream_rounds = max(1, args.rounds // 2)
    for name in args.encodings:
        encoders = peers(name)
        rows, wall, cpu = [], {}, {}
        for group, files in GROUPS.items():
            FAILED.clear()
            docs = documents(files, args.bytes_per_file)
            stream = documents(files, stream_limit)
            wrong = exactness(encoders, stream)  # also every encoder's first pass (lazy set-up)
            timed = {k: e for k, e in encoders.items() if not wrong[k]}
            prime(encoders["bpe"], stream)
            texts: dict[str, list[str]] = {}
            fns = {k: (lambda e=e, k=k: [e.encode_ordinary(d) for d in texts[k]]) for k, e in timed.items()}

            def cold(label, encoder, source):
                forget = cold_start(encoder)

                def setup() -> None:
                    texts[label] = []
                    forget()
                    encoder.encode_ordinary("warm up")
                    texts[label] = fresh_copies(source)
                return setup

            times = {"cold": interleaved_times(fns, args.rounds, {k: cold(k, e, docs) for k, e in timed.items()}, cpu),
                     "streaming": interleaved_times(fns, stream_rounds,
                                                    {k: cold(k, e, stream) for k, e in timed.items()}, cpu)}
            for k, e in timed.items():
                texts[k] = docs
                for d in docs:
                    e.encode_ordinary(d)
            times["warm"] = interleaved_times(fns, args.rounds, None, cpu)
            # (hot: each round's setup is the same pass over texts[k], the warm documents, untimed)
            times["hot"] = interleaved_times(fns, args.rounds, fns, cpu, collect_first=True)
            for regime, source in (("cold", docs), ("streaming", stream), ("warm", docs), ("hot", docs)):
                n_bytes = sum(len(d.encode("utf-8")) for d in source)
                speeds = {k: sorted(n_bytes / t / 1e6 for t in v) for k, v in times[regime].items() if v}
                for k, v in times[regime].items():
                    wall[k] = wall.get(k, 0.0) + sum(v)
                row = [group, regime, f"{n_bytes / 1e6:.2f}"]
                for k in encoders:
                    if k in speeds:
                        v = speeds[k]
                        row.append(f"{statistics.median(v):.1f} ({v[0]:.1f}-{v[-1]:.1f})")
                    else:
                        row.append(wrong[k] or f"fails ({FAILED.get(k, '?')})")
                exact = {k: statistics.median(v) for k, v in speeds.items() if k != "bpe"}
                best = max(exact, key=exact.get) if exact else None
                row += [best or "-", paired_ratio(times[regime], "bpe", best) if best and "bpe" in speeds else "-"]
                rows.append(row)
        print(f"\n### {name}\n")
        print(table(["group", "regime", "MB"] + list(encoders) + ["fastest exact peer", "bpe / fastest exact peer"],
                    rows))
        print("\nCPU time / wall time of the timed calls (1.00: one thread): "
              + ", ".join(f"{k} {sum(cpu[k]) / wall[k]:.2f}" for k in encoders if wall.get(k)))


def script_groups(limit_bytes: int) -> dict[str, list[str]]:
    """The lines of the multilingual corpus grouped by the script of most of their letters
    (Hiragana and Katakana count as CJK), as ~4 KB documents; groups under 20 KB are dropped."""
    import unicodedata

    base = shared_data()
    if not base:
        return {}
    with open(os.path.join(base, "corpora", "multilingual.txt"), encoding="utf-8") as f:
        lines = f.read().split("\n")
    groups: dict[str, list[str]] = {}
    for line in lines:
        scripts: dict[str, int] = {}
        for ch in line:
            if ord(ch) > 127 and ch.isalpha():
                script = unicodedata.name(ch, "? ").split()[0]
                script = "CJK" if script in ("HIRAGANA", "KATAKANA") else script
                scripts[script] = scripts.get(script, 0) + 1
        key = max(scripts, key=scripts.get) if scripts else "ASCII"
        groups.setdefault(key, []).append(line + "\n")
    out = {}
    for key, group in groups.items():
        text = "".join(group)
        if len(text.encode("utf-8")) >= 20_000:
            text = text[:limit_bytes // 3]          # non-Latin text is 2-3 bytes a character
            label = key if key in ("CJK", "ASCII") else key.capitalize()
            out[label] = [text[i:i + 4000] for i in range(0, len(text), 4000)]
    return out


def bench_scripts(args) -> None:
    print("\n## Throughput by script: the multilingual corpus's lines grouped by script (MB/s, median)")
    groups = script_groups(args.bytes_per_file)
    if not groups:
        print("\n(needs ../shared/data/corpora)")
        return
    for name in args.encodings:
        encoders = {k: e for k, e in peers(name).items() if k in ("bpe", "tiktoken", "bpe-openai")}
        rows = []
        for group, docs in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            n_bytes = sum(len(d.encode("utf-8")) for d in docs)
            med = interleaved({k: (lambda e=e: [e.encode_ordinary(d) for d in docs]) for k, e in encoders.items()},
                              args.rounds, {k: cold_start(e) for k, e in encoders.items()})
            speed = {k: n_bytes / t / 1e6 for k, t in med.items()}
            rows.append([group, f"{n_bytes / 1e3:.0f} KB"] + [f"{speed[k]:.1f}" for k in encoders]
                        + [f"{speed['bpe'] / speed[k]:.2f}x" for k in encoders if k != "bpe"])
        print(f"\n### {name}\n")
        print(table(["script", "input"] + list(encoders) + [f"bpe / {k}" for k in encoders if k != "bpe"], rows))


def bench_split(args) -> None:
    print("\n## Pre-tokenization alone: bpe's compiled scanner against regex.findall with the same pattern"
          " (MB/s, median)")
    import regex

    import bpe

    try:
        from bpe import _scanner
    except ImportError:
        print("\n(needs the compiled scanner)")
        return
    for name in args.encodings:
        enc = bpe.get_encoding(name)
        pattern = regex.compile(enc.pattern)
        rows = []
        for group, files in GROUPS.items():
            docs = documents(files, args.bytes_per_file)
            n_bytes = sum(len(d.encode("utf-8")) for d in docs)
            fns = {"bpe scanner": lambda: [_scanner.count(d, name) for d in docs],
                   "regex.findall": lambda: [pattern.findall(d) for d in docs],
                   "bpe encode_ordinary": lambda: [enc.encode_ordinary(d) for d in docs]}
            med = interleaved(fns, args.rounds, {"bpe encode_ordinary": cold_start(enc)})
            rows.append([group, f"{n_bytes / 1e6:.2f} MB"] + [f"{n_bytes / med[k] / 1e6:.1f}" for k in fns]
                        + [f"{med['bpe scanner'] / med['bpe encode_ordinary']:.0%}"])
        print(f"\n### {name}\n")
        print(table(["group", "input"] + list(fns) + ["scanner time / encode time"], rows))


def bench_short(args) -> None:
    print("\n## Short texts: per-call time of encode_ordinary (microseconds, median)")
    base = documents(["english.txt", "code_python.txt", "multilingual.txt"], 200_000)
    rows, encode_rows = [], []
    for name in args.encodings:
        encoders = peers(name)
        for lo, hi in ((20, 60), (60, 200)):
            texts = []
            for d in base:
                for i in range(0, len(d) - hi, 997):
                    piece = d[i:i + hi]
                    size = len(piece.encode("utf-8"))
                    while size > hi:
                        piece = piece[:-1]
                        size = len(piece.encode("utf-8"))
                    if size >= lo:
                        texts.append(piece)
            texts = texts[:3000]
            med = interleaved({k: (lambda e=e: [e.encode_ordinary(t) for t in texts]) for k, e in encoders.items()},
                              args.rounds, {k: cold_start(e) for k, e in encoders.items()})
            per_call = {k: v / len(texts) * 1e6 for k, v in med.items()}
            rows.append([name, f"{lo}-{hi} B", str(len(texts))] + [f"{per_call[k]:.2f}" for k in encoders]
                        + [f"{per_call.get('tiktoken', float('nan')) / per_call['bpe']:.2f}x"])
            # encode() with its default arguments (the disallowed-special check included), as
            # most callers use it; only bpe and tiktoken have tiktoken's special-token policy
            both = {k: encoders[k] for k in ("bpe", "tiktoken") if k in encoders}
            med = interleaved({k: (lambda e=e: [e.encode(t) for t in texts]) for k, e in both.items()},
                              args.rounds, {k: cold_start(e) for k, e in both.items()})
            per_call = {k: v / len(texts) * 1e6 for k, v in med.items()}
            encode_rows.append([name, f"{lo}-{hi} B", str(len(texts))] + [f"{per_call[k]:.2f}" for k in both]
                               + [f"{per_call.get('tiktoken', float('nan')) / per_call['bpe']:.2f}x"])
        header = ["encoding", "text size", "calls"] + list(encoders) + ["tiktoken time / bpe time"]
        encode_header = ["encoding", "text size", "calls"] + list(both) + ["tiktoken time / bpe time"]
    print()
    print(table(header, rows))
    print("\nencode(text) with the default arguments (it checks for disallowed special tokens):\n")
    print(table(encode_header, encode_rows))


def bench_count(args) -> None:
    print("\n## count() against len(encode_ordinary()) (MB/s, median)")
    import bpe

    docs = documents(GROUPS["prose"] + GROUPS["code"], args.bytes_per_file)
    n_bytes = sum(len(d.encode("utf-8")) for d in docs)
    rows = []
    for name in args.encodings:
        enc = bpe.get_encoding(name)
        fns = {"bpe len(encode_ordinary)": lambda: [len(enc.encode_ordinary(d)) for d in docs],
               "bpe count": lambda: [enc.count(d) for d in docs]}
        encoders = peers(name)
        if "tiktoken" in encoders:
            tk = encoders["tiktoken"]
            fns["tiktoken len(encode_ordinary)"] = lambda: [len(tk.encode_ordinary(d)) for d in docs]
        med = interleaved(fns, args.rounds, {k: cold_start(enc) for k in fns if k.startswith("bpe")})
        rows.append([name] + [f"{n_bytes / med[k] / 1e6:.1f}" for k in fns])
    print()
    print(table(["encoding"] + list(fns), rows))


def bench_decode(args) -> None:
    print("\n## Decode: decode(ids) back to text, one call per ~8 KB document (MB/s of text, median)")
    import bpe

    docs = documents(GROUPS["prose"] + GROUPS["non-Latin"] + GROUPS["code"], args.bytes_per_file)
    n_bytes = sum(len(d.encode("utf-8")) for d in docs)
    rows, header = [], None
    for name in args.encodings:
        enc = bpe.get_encoding(name)
        ids = [enc.encode_ordinary(d) for d in docs]
        encoders = {k: e for k, e in peers(name).items() if hasattr(e, "decode")}
        wrong = {k: sum(e.decode(x) != d for x, d in zip(ids, docs)) for k, e in encoders.items()}
        med = interleaved({k: (lambda e=e: [e.decode(x) for x in ids]) for k, e in encoders.items()}, args.rounds)
        speed = {k: n_bytes / v / 1e6 for k, v in med.items()}
        fastest_peer = max((speed[k] for k in speed if k != "bpe" and not wrong[k]), default=float("nan"))
        rows.append([name] + [f"{speed[k]:.0f}" + (f" ({wrong[k]} wrong docs)" if wrong[k] else "") for k in encoders]
                    + [f"{speed['bpe'] / speed['tiktoken']:.2f}x" if "tiktoken" in speed else "-",
                       f"{speed['bpe'] / fastest_peer:.2f}x"])
        header = ["encoding"] + list(encoders) + ["bpe / tiktoken", "bpe / fastest correct peer"]
    print()
    print(table(header, rows))


def bench_worst(args) -> None:
    print("\n## Pathological inputs (seconds, median): each is one piece of up to 1 MB; linear in size "
          "if the 1 MB time is ~4x the 256 KB one")
    rows = []
    inputs = (("one repeated letter", "a"), ("spaces", " "), ("digits", "7"), ("punctuation", "!"),
              ("two letters alternating", "ab"), ("emoji", "\U0001F642"))
    for name in args.encodings:
        encoders = {k: v for k, v in peers(name).items() if k in ("bpe", "tiktoken")}
        encoders["bpe"].encode_ordinary("a" * 1000)  # builds the backtracking tables (timed in `load`)
        for label, unit in inputs:
            smaller = None  # the 256 KB medians, for the growth column of the 1 MB row
            for size in (256 * 1024, 1024 * 1024):
                text = unit * (size // len(unit.encode()) // (4 if args.quick else 1))
                FAILED.clear()
                med = interleaved({k: (lambda e=e: e.encode_ordinary(text)) for k, e in encoders.items()},
                                  max(1, args.rounds // 2))
                row = [name, label, f"{len(text.encode()):,}"]
                row += [f"{med[k]:.3f}" if k not in FAILED else f"fails ({FAILED[k]})" for k in encoders]
                if smaller is None:
                    row += [""] * len(encoders)
                    smaller = med
                else:
                    row += ["-" if math.isnan(med[k]) or math.isnan(smaller[k]) else f"{med[k] / smaller[k]:.1f}x"
                            for k in encoders]
                rows.append(row)
    print()
    print(table(["encoding", "input", "bytes"] + list(encoders) + [f"{k}: 1 MB / 256 KB" for k in encoders], rows))


def bench_batch(args) -> None:
    # two threads meet twice the machine's noise (either can be slowed down), so this section
    # takes the median of twice as many rounds as the others, plus one
    rounds = 2 * args.rounds + 1
    print(f"\n## Batch: encode_ordinary_batch and encode_batch on a list of ~8 KB documents "
          f"(MB/s, median of {rounds} rounds)")
    import bpe

    docs = documents(GROUPS["prose"] + GROUPS["code"], args.bytes_per_file)
    n_bytes = sum(len(d.encode("utf-8")) for d in docs)
    rows = []
    for name in args.encodings:
        enc = bpe.get_encoding(name)
        fns = {f"bpe {n} thread{'s' if n > 1 else ''}": (lambda n=n: enc.encode_ordinary_batch(docs, num_threads=n))
               for n in (1, 2)}
        # encode_batch with special tokens allowed, each document ending in <|endoftext|>
        ended = [d + "<|endoftext|>" for d in docs]
        for n in (1, 2):
            fns[f"bpe specials {n} thread{'s' if n > 1 else ''}"] = (
                lambda n=n: enc.encode_batch(ended, num_threads=n, allowed_special="all"))
        encoders = peers(name)
        if "tiktoken" in encoders:
            tk = encoders["tiktoken"]
            fns["tiktoken 2 threads"] = lambda: tk.encode_ordinary_batch(docs, num_threads=2)
        fns.update(machine_ceiling())
        med = interleaved(fns, rounds, {k: cold_start(enc) for k in fns if k.startswith("bpe")})
        speed = {k: n_bytes / v / 1e6 for k, v in med.items() if not k.startswith("sha256")}
        ceiling = med["sha256 1 thread"] / med["sha256 2 threads"]
        rows.append([name] + [f"{speed[k]:.1f}" for k in speed]
                    + [f"{speed['bpe 2 threads'] / speed['bpe 1 thread']:.2f}x",
                       f"{speed['bpe specials 2 threads'] / speed['bpe specials 1 thread']:.2f}x", f"{ceiling:.2f}x"])
    print()
    print(table(["encoding"] + [k for k in fns if not k.startswith("sha256")]
                + ["bpe 2 threads / 1 thread", "specials: 2 / 1", "machine: sha256 2 threads / 1 thread"], rows))
    print("\n(\"specials\": encode_batch(allowed_special='all') on the same documents, each ending in\n"
          " <|endoftext|>; the last column is what two threads give on this machine for work that shares\n"
          " nothing and never waits for the GIL: hashlib's sha256 over two 32 MB buffers, timed in the same rounds)")


def machine_ceiling() -> dict[str, Callable[[], object]]:
    """Two timed jobs that show how far two threads can scale on this machine at best: the
    same GIL-free work (sha256 of two buffers) on one thread and on two."""
    import hashlib
    import threading

    blocks = [bytes(32 << 20), bytes(32 << 20)]

    def one() -> None:
        for b in blocks:
            hashlib.sha256(b).digest()

    def two() -> None:
        threads = [threading.Thread(target=lambda b=b: hashlib.sha256(b).digest()) for b in blocks]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    return {"sha256 1 thread": one, "sha256 2 threads": two}


_LOAD_SNIPPET = r"""
import json, resource, sys, time
def rss():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
which = sys.argv[1]
if which == "tiktoken":
    import tiktoken, tiktoken.load
    before = rss(); t = time.perf_counter()
    ranks = tiktoken.load.load_tiktoken_bpe(sys.argv[2])
    enc = tiktoken.Encoding(name="o200k_base", pat_str=sys.argv[3], mergeable_ranks=ranks, special_tokens={})
else:
    import bpe
    before = rss(); t = time.perf_counter()
    enc = bpe.get_encoding("o200k_base")
enc.encode_ordinary("warm up")
if which == "bpe-long":
    enc.encode_ordinary("a" * 1000)  # the first piece over 256 bytes builds the backtracking tables
if which == "bpe-chars":
    enc.encode_ordinary(" непредсказуемость")  # the first non-ASCII merge builds the character units
print(json.dumps({"seconds": time.perf_counter() - t, "rss": rss() - before}))
"""


def bench_load(args) -> None:
    print("\n## Loading o200k_base (fresh process each time; median of runs)")
    import bpe

    base = shared_data()
    rank_file = os.path.join(base, "tiktoken", "o200k_base.tiktoken") if base else None
    labels = ["bpe (bundled)", "bpe, then a first non-ASCII word", "bpe, then a first piece over 256 bytes"]
    labels += ["tiktoken (.tiktoken file)"] if rank_file else []
    which = {"bpe (bundled)": "bpe", "bpe, then a first piece over 256 bytes": "bpe-long",
             "bpe, then a first non-ASCII word": "bpe-chars"}
    results: dict[str, list[dict]] = {k: [] for k in labels}
    env = dict(os.environ, TIKTOKEN_CACHE_DIR="")
    for _ in range(max(3, args.rounds)):
        for label in labels:
            argv = [sys.executable, "-c", _LOAD_SNIPPET, which.get(label, "tiktoken")]
            if not label.startswith("bpe"):
                argv += [rank_file, bpe.get_encoding("o200k_base").pattern]
            out = subprocess.run(argv, capture_output=True, text=True, env=env, check=True, cwd="/")
            results[label].append(json.loads(out.stdout))
    rows = [[k, f"{statistics.median(r['seconds'] for r in v):.3f}",
             f"{statistics.median(r['rss'] for r in v) / 2**20:.1f}"] for k, v in results.items()]
    print()
    print(table(["loader", "seconds", "resident MB added"], rows))


HF_FILES = ["gpt2", "llama3", "qwen3"]

_HF_LOAD_SNIPPET = """
import sys, time, json
which, path = sys.argv[1], sys.argv[2]
t = time.perf_counter()
if which == "bpe":
    import bpe
    t1 = time.perf_counter()
    bpe.Tokenizer.from_hf(path)
else:
    import tokenizers
    t1 = time.perf_counter()
    tokenizers.Tokenizer.from_file(path + "/tokenizer.json")
t2 = time.perf_counter()
print(json.dumps({"load": t2 - t1, "with_import": t2 - t}))
"""


def hf_load_times(path: str, rounds: int) -> dict:
    """Seconds to load the tokenizer.json in ``path`` in a fresh process, bpe's from_hf and
    HF's Tokenizer.from_file taking turns: ``{(which, "load" or "with_import"): [...]}``."""
    times: dict = {(w, k): [] for w in ("bpe", "hf") for k in ("load", "with_import")}
    for _ in range(rounds):
        for which in ("bpe", "hf"):
            out = subprocess.run([sys.executable, "-c", _HF_LOAD_SNIPPET, which, path], capture_output=True,
                                 text=True, check=True, cwd="/")
            for k, v in json.loads(out.stdout).items():
                times[which, k].append(v)
    return times


def _after_a_pause(setup: Optional[Callable[[], None]]) -> Callable[[], None]:
    """``setup`` (if any), then 50 ms of sleep: the setup of a timed call that must not run
    while another library's worker threads still spin."""
    def run() -> None:
        if setup is not None:
            setup()
        time.sleep(0.05)
    return run


def bench_hf(args) -> None:
    """The shared Hugging Face files: bpe's from_hf against HF tokenizers on the same file."""
    print("\n## Hugging Face tokenizer.json: bpe (Tokenizer.from_hf) against HF tokenizers on the same file")
    base = shared_data()
    if base is None or not os.path.isdir(os.path.join(base, "hf")):
        print("\n(needs ../shared/data/hf)")
        return
    try:
        import tokenizers
    except ImportError:
        print("\n(needs HF tokenizers: pip install tokenizers)")
        return
    import bpe

    rows, load_rows = [], []
    for name in HF_FILES:
        path = os.path.join(base, "hf", name)
        tok = bpe.Tokenizer.from_hf(path)
        hf = tokenizers.Tokenizer.from_file(os.path.join(path, "tokenizer.json"))
        for group, files in GROUPS.items():
            docs = documents(files, args.bytes_per_file)
            n_bytes = sum(len(d.encode("utf-8")) for d in docs)
            wrong = sum(tok.encode(d, allowed_special="all") != e.ids
                        for d, e in zip(docs, hf.encode_batch(docs, add_special_tokens=False)))
            fns = {
                "bpe 1 thread": lambda: [tok.encode(d, allowed_special="all") for d in docs],
                "HF 1 thread": lambda: [hf.encode(d, add_special_tokens=False) for d in docs],
                "bpe 2 threads": lambda: tok.encode_batch(docs, num_threads=2, allowed_special="all"),
                "HF batch (2 cores)": lambda: hf.encode_batch(docs, add_special_tokens=False),
            }
            # HF's batch leaves its worker threads spinning for a while after it returns: every
            # call (HF's too) starts after a pause, so that none runs against those threads
            before = {k: _after_a_pause(cold_start(tok) if k.startswith("bpe") else None) for k in fns}
            med = interleaved(fns, args.rounds, before)
            speed = {k: n_bytes / v / 1e6 for k, v in med.items()}
            rows.append([name, group, f"{n_bytes / 1e6:.2f} MB", f"{wrong}"] + [f"{v:.1f}" for v in speed.values()]
                        + [f"{speed['bpe 1 thread'] / speed['HF 1 thread']:.1f}x",
                           f"{speed['bpe 2 threads'] / speed['HF batch (2 cores)']:.1f}x"])
        times = hf_load_times(path, max(5, args.rounds))
        row = [name]
        for k in ("load", "with_import"):
            b, h = (statistics.median(times[w, k]) for w in ("bpe", "hf"))
            row += [f"{b:.3f} ({min(times['bpe', k]):.3f}-{max(times['bpe', k]):.3f})",
                    f"{h:.3f} ({min(times['hf', k]):.3f}-{max(times['hf', k]):.3f})", f"{h / b:.2f}x"]
        load_rows.append(row)
    print("\nEncode (MB/s, median; one call per ~8 KB document; bpe: encode(allowed_special='all'), "
          "HF: encode(add_special_tokens=False)):\n")
    print(table(["file", "group", "input", "docs with other ids", "bpe 1 thread", "HF 1 thread", "bpe 2 threads",
                 "HF batch (2 cores)", "bpe / HF, 1 thread", "bpe / HF, 2 threads"], rows))
    print("\nLoading (seconds in a fresh process, median (range); bpe.Tokenizer.from_hf against "
          "tokenizers.Tokenizer.from_file, the call alone and with the import of the package):\n")
    print(table(["file", "bpe load", "HF load", "HF / bpe", "bpe import + load", "HF import + load",
                 "HF / bpe, with import"], load_rows))


def bench_offsets(args) -> None:
    """encode_with_offsets against bpe's own plain encode and against HF's encode (which
    computes offsets), on the shared HF files and the bundled tiktoken encodings."""
    print("\n## Offsets: encode_with_offsets against plain encode and HF tokenizers' encode "
          "(MB/s, median; one call per ~8 KB document)")
    import bpe

    try:
        import tokenizers
    except ImportError:
        tokenizers = None
    base = shared_data()
    subjects = [(name, bpe.get_encoding(name), None) for name in args.encodings]
    if tokenizers is not None and base is not None and os.path.isdir(os.path.join(base, "hf")):
        for name in HF_FILES:
            path = os.path.join(base, "hf", name)
            subjects.append((name, bpe.Tokenizer.from_hf(path),
                             tokenizers.Tokenizer.from_file(os.path.join(path, "tokenizer.json"))))
    rows = []
    for name, tok, hf in subjects:
        for group, files in GROUPS.items():
            docs = documents(files, args.bytes_per_file)
            n_bytes = sum(len(d.encode("utf-8")) for d in docs)
            mine = [tok.encode_with_offsets(d, allowed_special="all") for d in docs]
            wrong = sum(e.ids != tok.encode(d, allowed_special="all") for d, e in zip(docs, mine))
            if hf is not None:
                wrong += sum((e.ids, e.offsets, e.word_ids) != (h.ids, h.offsets, h.word_ids)
                             for e, h in zip(mine, hf.encode_batch(docs, add_special_tokens=False)))
            fns = {
                "encode": lambda: [tok.encode(d, allowed_special="all") for d in docs],
                "with_offsets": lambda: [tok.encode_with_offsets(d, allowed_special="all") for d in docs],
                "with_offsets + lists": lambda: [(e.offsets, e.word_ids) for e in
                                                 (tok.encode_with_offsets(d, allowed_special="all") for d in docs)],
                "with_offsets batch 2 threads": lambda: tok.encode_with_offsets_batch(
                    docs, allowed_special="all", num_threads=2),
            }
            if hf is not None:
                fns["HF encode"] = lambda: [hf.encode(d, add_special_tokens=False) for d in docs]
                fns["HF encode + lists"] = lambda: [(e.offsets, e.word_ids) for e in
                                                    (hf.encode(d, add_special_tokens=False) for d in docs)]
            before = {k: _after_a_pause(cold_start(tok) if not k.startswith("HF") else None) for k in fns}
            times = interleaved_times(fns, args.rounds, before)
            speed = {k: n_bytes / statistics.median(v) / 1e6 for k, v in times.items() if v}
            ratio = lambda a, b: f"{speed[a] / speed[b]:.2f}x" if b in speed else "-"  # noqa: E731
            rows.append([name, group, f"{n_bytes / 1e6:.2f} MB", str(wrong)]
                        + [f"{speed[k]:.1f}" for k in ("encode", "with_offsets", "with_offsets + lists",
                                                       "with_offsets batch 2 threads")]
                        + [f"{speed['HF encode']:.1f}" if "HF encode" in speed else "-",
                           paired_ratio(times, "with_offsets", "encode"), ratio("with_offsets", "HF encode"),
                           ratio("with_offsets + lists", "HF encode + lists")])
    print("\nbpe: encode / encode_with_offsets(allowed_special='all') (\"+ lists\": with .offsets and "
          ".word_ids read); HF: encode(add_special_tokens=False); docs that differ: ids from encode, "
          "or ids, offsets and word ids from HF; with_offsets / encode: the median (and range) of the "
          "ratio in each round:\n")
    print(table(["tokenizer", "group", "input", "docs that differ", "encode", "with_offsets", "+ lists",
                 "batch, 2 threads", "HF encode", "with_offsets / encode", "with_offsets / HF",
                 "+ lists / HF + lists"], rows))


def bench_calls(args) -> None:
    """The transformers-style call (tok(texts, truncation, padding, offsets)) against HF
    tokenizers' encode_batch with the same truncation and padding switched on, and against
    transformers' own call when it is installed, on the shared HF files."""
    print("\n## Model inputs: tok(texts, truncation=True, max_length=512, padding=True, "
          "return_offsets_mapping=True) against HF (MB/s, median; batches of 32 ~8 KB documents)")
    base = shared_data()
    try:
        import tokenizers
    except ImportError:
        print("\n(needs HF tokenizers: pip install tokenizers)")
        return
    if base is None or not os.path.isdir(os.path.join(base, "hf")):
        print("\n(needs ../shared/data/hf)")
        return
    try:
        import transformers
    except ImportError:
        transformers = None
    import bpe

    options = dict(truncation=True, max_length=512, padding=True, return_offsets_mapping=True)
    rows = []
    for name in HF_FILES:
        path = os.path.join(base, "hf", name)
        tok = bpe.Tokenizer.from_hf(path)
        pad = tok.hf_config.get("pad_token") if tok.hf_config else None
        pad = pad or ("<|end_of_text|>" if name == "llama3" else "<|endoftext|>")
        hf = tokenizers.Tokenizer.from_file(os.path.join(path, "tokenizer.json"))
        hf.enable_truncation(512)
        hf.enable_padding(pad_id=tok.token_to_id(pad), pad_token=pad)
        ref = None
        if transformers is not None:
            ref = transformers.PreTrainedTokenizerFast(tokenizer_file=os.path.join(path, "tokenizer.json"))
            ref.pad_token = pad
        for group, files in GROUPS.items():
            docs = documents(files, args.bytes_per_file)
            batches = [docs[i:i + 32] for i in range(0, len(docs), 32)]
            n_bytes = sum(len(d.encode("utf-8")) for d in docs)
            wrong = sum(tok(b, pad_token=pad, allowed_special="all", **options)["input_ids"] !=
                        [e.ids for e in hf.encode_batch(b)] for b in batches)
            fns = {
                "bpe 1 thread": lambda: [tok(b, pad_token=pad, allowed_special="all", num_threads=1, **options)
                                         for b in batches],
                "bpe 2 threads": lambda: [tok(b, pad_token=pad, allowed_special="all", num_threads=2, **options)
                                          for b in batches],
                "HF encode_batch": lambda: [hf.encode_batch(b) for b in batches],
            }
            if ref is not None:
                fns["transformers"] = lambda: [ref(b, **options) for b in batches]
            before = {k: _after_a_pause(cold_start(tok) if k.startswith("bpe") else None) for k in fns}
            speed = {k: n_bytes / v / 1e6 for k, v in interleaved(fns, args.rounds, before).items()}
            rows.append([name, group, f"{n_bytes / 1e6:.2f} MB", str(wrong)]
                        + [f"{speed[k]:.1f}" if k in speed else "-"
                           for k in ("bpe 1 thread", "bpe 2 threads", "HF encode_batch", "transformers")]
                        + [f"{speed['bpe 2 threads'] / speed['HF encode_batch']:.1f}x",
                           f"{speed['bpe 2 threads'] / speed['transformers']:.1f}x" if ref is not None else "-"])
    print("\nbatches whose input_ids differ from HF's: 0 expected\n")
    print(table(["file", "group", "input", "batches that differ", "bpe 1 thread", "bpe 2 threads",
                 "HF encode_batch (2 cores)", "transformers (2 cores)", "bpe 2 threads / HF",
                 "bpe 2 threads / transformers"], rows))


def bench_train(args) -> None:
    from .training import bench_training

    bench_training(args)


def bench_scaling(args) -> None:
    """How encode time grows with the length of one piece, on both backends: a run of one
    letter (every pair ties), random letters (no spaces: the pattern keeps them one piece),
    and runs of spaces, punctuation and emoji (n bytes).
    Each step is 4x the text; a linear or n log n encoder takes well under 8x the time (a
    quadratic one 16x)."""
    import random

    import bpe
    from bpe import _backend

    print("\n## Scaling: seconds to encode one long piece (median of 3), and the time ratio per 4x length")
    rng = random.Random(0)
    letters = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(1_280_000))
    rows = []
    before = _backend.active().name
    sizes = {"cython": [20_000, 80_000, 320_000, 1_280_000], "python": [5_000, 20_000, 80_000]}
    try:
        for name in ("cython", "python"):
            if name == "cython" and _backend.COMPILED is None:
                continue
            _backend.use(name)
            tok = bpe.get_encoding("cl100k_base")
            for label, make in (("'x' * n", lambda n: "x" * n), ("random letters", lambda n: letters[:n]),
                                ("spaces", lambda n: " " * n), ("'!' * n", lambda n: "!" * n),
                                ("emoji", lambda n: "\U0001F642" * (n // 4))):
                times = []
                for n in sizes[name]:
                    text = make(n)
                    runs = []
                    for _ in range(3):
                        t = time.perf_counter()
                        tok.encode_ordinary(text)
                        runs.append(time.perf_counter() - t)
                    times.append(statistics.median(runs))
                steps = [f"{b / a:.1f}x" for a, b in zip(times, times[1:])]
                rows.append([name, label, ", ".join(f"{n:,}" for n in sizes[name]),
                             ", ".join(f"{t:.3f}" for t in times), ", ".join(steps)])
    finally:
        _backend.use(before)
    print()
    print(table(["backend", "text", "n (characters)", "seconds", "per 4x"], rows))


_MEMORY_CHILD = r"""
import json, resource, sys
import bpe


def status(field):
    # VmRSS / VmHWM / VmSize of this process in bytes (Linux)
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024


enc = bpe.get_encoding(sys.argv[1])
text = open(sys.argv[2], encoding="utf-8").read()
text = text * max(1, int(sys.argv[3]) // len(text.encode()))
call, budget = sys.argv[4], int(sys.argv[5])
enc.encode_ordinary(text[:1000])  # tables built, small caches warm
if budget:
    resource.setrlimit(resource.RLIMIT_AS, (status("VmSize") + budget, resource.RLIM_INFINITY))
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # the peak (VmHWM) starts again from the resident size now
before = status("VmRSS")
try:
    if call == "encode":
        out = enc.encode_ordinary(text)
        size, k = sys.getsizeof(out), len(out)
    elif call == "encode_to_array":
        out = enc.encode_to_array(text)
        size, k = len(out) * out.itemsize, len(out)
    elif call == "encode_with_offsets":
        out = enc.encode_with_offsets(text)
        k = len(out.ids)
        size = sys.getsizeof(out.ids) + 12 * k
    else:
        out = enc.encode_ordinary_batch([text], num_threads=1)
        size, k = sys.getsizeof(out[0]), len(out[0])
    result = json.dumps({"bytes": len(text.encode()), "ids": k, "output": size, "peak": status("VmHWM") - before})
except MemoryError:
    result = "null"
print(result)
"""


def bench_memory(args) -> None:
    """Memory of one call on a large text against the size of what it returns, each call in
    fresh processes (Linux).  Resident: the peak resident size, reset just before the call,
    minus the resident size then.  Address space: the least that the call needs, found by
    bisection with a limit on the address space (RLIMIT_AS) set to what the process has
    plus a budget.  The text is built first, as a fresh str: a non-ASCII one is converted to
    UTF-8 inside the call, into a buffer freed after it (the str keeps no copy), and that
    buffer counts.  Memory reserved but never written is not resident, so the
    address space is what counts where memory is not overcommitted: 32-bit platforms, a
    ulimit, Windows' commit charge.  The output is the list (8 bytes per id; the int objects
    are shared) or the array (4 bytes per id), plus 12 bytes per id of offsets."""
    import json
    import subprocess
    import sys

    if not os.path.exists("/proc/self/clear_refs"):
        print("\n## Memory: skipped (it reads /proc/self, which only Linux has)")
        return
    data = shared_data()
    if data:
        files = [(os.path.join(data, "corpora", "english.txt"), "English"),
                 (os.path.join(data, "corpora", "multilingual.txt"), "multilingual")]
    else:
        from bpe.registry import sample_path

        files = [(sample_path(), "bundled sample")]
    size = 1_000_000 if args.quick else 32_000_000
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p or os.getcwd() for p in sys.path))

    def child(path, call, budget):
        run = subprocess.run([sys.executable, "-c", _MEMORY_CHILD, "o200k_base", path, str(size), call,
                              str(budget)], capture_output=True, text=True, check=True, env=env)
        return json.loads(run.stdout)

    print(f"\n## Memory: one call on a {size / 1e6:.0f} MB text, against the size of its output")
    rows = []
    for path, label in files:
        for call in ("encode", "encode_to_array", "encode_with_offsets", "batch"):
            got = child(path, call, 0)
            low, high = 0, 8 * got["output"]  # the least budget that works lies in (low, high]
            for _ in range(1 if args.quick else 7):
                mid = (low + high) // 2
                if child(path, call, mid) is None:
                    low = mid
                else:
                    high = mid
            rows.append([label, call, f"{got['bytes'] / 1e6:.1f}", f"{got['ids']:,}", f"{got['output'] / 1e6:.1f}",
                         f"{got['peak'] / 1e6:.1f}", f"{got['peak'] / got['output']:.2f}",
                         f"{high / 1e6:.0f}", f"{high / got['output']:.2f}"])
    print()
    print(table(["text", "call (o200k_base)", "MB of UTF-8", "ids", "output MB", "resident peak growth MB",
                 "/ output", "address space needed MB", "/ output"], rows))


def bench_stream(args) -> None:
    from .training import bench_stream as run

    run(args)


def bench_callgrind(args) -> None:
    """Instructions per byte under callgrind, cold and warm (benchmarks/callgrind.py): bpe
    against the three fastest exact peers of callgrind.DEFAULT_PEERS, on the first
    bytes_per_file of english.txt."""
    from . import callgrind

    callgrind.bench_callgrind(args.encodings, callgrind.DEFAULT_PEERS.split(","), args.bytes_per_file)


SECTIONS = {"throughput": bench_throughput, "regimes": bench_regimes, "scripts": bench_scripts, "split": bench_split,
            "short": bench_short, "count": bench_count, "decode": bench_decode, "worst": bench_worst,
            "batch": bench_batch, "load": bench_load, "hf": bench_hf, "offsets": bench_offsets, "calls": bench_calls,
            "train": bench_train, "stream": bench_stream, "scaling": bench_scaling, "memory": bench_memory,
            "callgrind": bench_callgrind}
# run only when named in --only: callgrind needs valgrind and takes minutes per encoder
OPT_IN = {"callgrind"}
# sections that time one thread only: run by themselves, any rayon pool a peer starts gets one thread
SINGLE_THREAD = {"regimes", "callgrind"}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds and smaller inputs")
    parser.add_argument("--only", default=",".join(k for k in SECTIONS if k not in OPT_IN),
                        help=f"comma-separated sections (default: all but {', '.join(sorted(OPT_IN))})")
    parser.add_argument("--encodings", default="cl100k_base,o200k_base")
    parser.add_argument("--rounds", type=int, default=None)
    args = parser.parse_args(argv)
    args.encodings = args.encodings.split(",")
    args.rounds = args.rounds or (3 if args.quick else 7)
    args.bytes_per_file = 200_000 if args.quick else 800_000
    import importlib.metadata

    import bpe

    sections = args.only.split(",")
    if set(sections) <= SINGLE_THREAD:
        os.environ.setdefault("RAYON_NUM_THREADS", "1")
    print(f"# bpe benchmarks: {time.strftime('%Y-%m-%d')}, {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, Python {platform.python_version()}, bpe {bpe.__version__} ({bpe.backend})")
    versions = []
    for dist in ("tiktoken", "riptoken", "bpe-openai", "tokenizers", "fastokens", "gigatoken", "quicktok-v1"):
        try:
            versions.append(f"{dist} {importlib.metadata.version(dist)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{dist} not installed")
    print("peers: " + ", ".join(versions))
    print(f"corpora: {shared_data() or 'bundled sample only'}")
    for section in sections:
        SECTIONS[section](args)
    return 0
