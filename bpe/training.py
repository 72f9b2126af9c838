"""Training input: streaming pre-token counting, and the call into the merge loop.

``count_pretokens`` reads any iterable of ``str`` one text at a time (nothing is joined), cuts
out special-token strings, normalizes, splits with the pattern and counts each distinct
pre-token; only that table lives in memory.  ``learn`` hands the table to the backend's merge
loop (``bpe._train`` or ``bpe._reference``) and turns the merges into a rank table.  The
vocabulary is counted as 256 byte tokens + learned tokens + special tokens.  Building the
:class:`~bpe.tokenizer.Tokenizer` is left to that class.
"""

from __future__ import annotations

import codecs
import os
import threading
import time
import unicodedata
from collections import Counter
from typing import Iterable, Iterator, Optional, Union

import regex

from . import _backend, _reference, _reference_scan, special
from .pre_tokenizers import patterns
from .io.native import NORMALIZATIONS
from .progress import Progress, bar
from .errors import TrainingError, TrainingInputNotUTF8Error


def repair_surrogates(text: str) -> str:
    """tiktoken's fix-up for text with lone surrogates: pairs join, lone ones become U+FFFD."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def count_pretokens(
    texts: Iterable[str],
    pattern: Union[str, None, object] = "o200k_base",
    special_tokens: Iterable[str] = (),
    normalization: Optional[str] = None,
    progress: bool = False,
    num_threads: int = 1,
) -> Counter:
    """Count the distinct pre-tokens of ``texts`` as ``Counter({utf8_bytes: count})``.

    ``texts`` is any iterable of ``str`` (a single ``str`` counts as one text), read once, one
    text at a time.  Special-token strings are cut out and not counted.  Counts from separate
    shards add up exactly (``Counter`` addition), so counting can run anywhere and
    ``Tokenizer.train_from_counts`` gives the same tokenizer as ``Tokenizer.train`` on all the
    shards, provided the same pattern, special tokens and normalization are used.
    ``num_threads > 1`` splits and counts batches of texts on that many threads (compiled
    backend, named patterns or none); the result is the same as with one thread.
    """
    if normalization is not None and normalization not in NORMALIZATIONS:
        raise TrainingError(f"normalization must be one of {NORMALIZATIONS} or None, got {normalization!r}")
    if not isinstance(num_threads, int) or isinstance(num_threads, bool) or num_threads < 1:
        raise TrainingError(f"num_threads must be an int >= 1, got {num_threads!r}")
    name, source = patterns.resolve(pattern)
    scanned = source is None or name is not None
    compiled = None if scanned else patterns.compile_pattern(source)
    counter_class = getattr(_backend.active(), "PieceCounter", None)
    fast = scanned and counter_class is not None
    specials = frozenset(special_tokens)
    if isinstance(texts, str):
        texts = [texts]
    counts: Counter = Counter()
    counters: list = []
    local = threading.local()
    lock = threading.Lock()

    def add(segments: list[str]) -> None:
        counter = getattr(local, "counter", None)
        if counter is None:
            counter = local.counter = counter_class()
            with lock:
                counters.append(counter)
        for segment in segments:
            try:
                counter.add_text(segment, name)
            except UnicodeEncodeError:
                counter.add_text(repair_surrogates(segment), name)

    if fast and num_threads > 1:
        from concurrent.futures import ThreadPoolExecutor  # (here: most runs count on one thread)

        pool = ThreadPoolExecutor(num_threads)
    else:
        pool = None
    in_flight = threading.Semaphore(2 * num_threads)  # bounds the text held in memory
    futures: list = []
    batch: list[str] = []
    batch_chars = 0
    shown = Progress(progress)
    chars = n_texts = 0
    sized = texts if isinstance(texts, FileChunks) else None  # files: bytes known, so an ETA
    began = time.perf_counter()
    try:
        for index, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(
                    f"training texts must be str; item {index} is {type(text).__name__} "
                    "(decode bytes first, e.g. data.decode('utf-8'))"
                )
            for segment, is_special in special.split(text, specials):
                if is_special:
                    continue
                if normalization is not None:
                    segment = unicodedata.normalize(normalization, segment)
                if fast:
                    batch.append(segment)
                    batch_chars += len(segment)
                elif scanned:
                    counts.update(_reference_scan.split(segment, name) if name else ([segment] if segment else []))
                else:
                    counts.update(patterns.split(compiled, segment))
            if batch and (pool is None or batch_chars >= 1 << 20):
                if pool is None:
                    add(batch)
                else:
                    in_flight.acquire()
                    future = pool.submit(add, batch)
                    future.add_done_callback(lambda _: in_flight.release())
                    futures.append(future)
                batch, batch_chars = [], 0
            chars += len(text)
            n_texts += 1
            if progress and sized is not None:
                shown.update(_counting_line(sized.done, sized.total, time.perf_counter() - began))
            elif progress and n_texts % 64 == 0:
                shown.update(f"counting pre-tokens: {chars / 1e6:,.1f} M characters, {n_texts:,} texts")
        if batch:
            add(batch)
        for future in futures:
            future.result()
    finally:
        if pool is not None:
            pool.shutdown(wait=True)
    if sized is not None:
        files = len(sized.paths)
        shown.close(f"counted pre-tokens: {sized.done:,} bytes in {files:,} file{'' if files == 1 else 's'}")
    else:
        shown.close(f"counted pre-tokens: {chars / 1e6:,.1f} M characters, {n_texts:,} texts")
    if fast:
        out: Counter = Counter()
        for counter in counters:
            for piece, n in counter.items():
                out[piece] += n
        return out
    out = Counter()
    for piece, n in counts.items():
        try:
            out[piece.encode("utf-8")] += n
        except UnicodeEncodeError:
            out[repair_surrogates(piece).encode("utf-8")] += n
    return out


class FileChunks:
    """The text of UTF-8 files as ``read_chunks`` gives it, one file after another, knowing
    how many bytes the files hold (``total``, from their sizes when iteration starts) and how
    many have been read (``done``): progress lines show an ETA from the two.  ``errors`` as
    in ``read_chunks``."""

    def __init__(self, paths: Iterable, chunk_chars: int = 1 << 20, errors: str = "strict"):
        self.paths = list(paths)
        self.chunk_chars = chunk_chars
        self.errors = errors
        self.total = 0
        self.done = 0

    def __iter__(self) -> Iterator[str]:
        self.total = sum(os.path.getsize(p) for p in self.paths if os.path.isfile(p))
        self.done = 0
        for path in self.paths:
            base = self.done

            def read(position: int, base: int = base) -> None:
                self.done = base + position

            yield from read_chunks(path, self.chunk_chars, on_read=read, errors=self.errors)


def _counting_line(done: int, total: int, seconds: float) -> str:
    """The progress line of counting ``done`` of ``total`` bytes in ``seconds``."""
    line = f"counting pre-tokens: {bar(done, total)} bytes"
    if 0 < done < total:
        line += f", ETA {seconds * (total - done) / done:.0f} s"
    return line


def read_chunks(path, chunk_chars: int = 1 << 20, on_read=None, errors: str = "strict") -> Iterator[str]:
    """Yield the text of a UTF-8 file in pieces of about ``chunk_chars`` characters.

    Pieces are cut only after a newline that follows a non-space character and comes before an
    ASCII letter: there every named pattern ends one pre-token and starts the next, so counting
    the pieces gives exactly the counts of the whole file.  (With a custom pattern or none, a
    cut can still split a pre-token; a file with no such place is read whole.)
    ``on_read``, if given, is called with the number of bytes of the file read so far after
    each block.  Bytes that are not UTF-8 raise ``TrainingInputNotUTF8Error`` (a
    ``TrainingError``) naming the file and the
    byte's offset in it (``errors="replace"``: they become U+FFFD).
    """
    decoder = codecs.getincrementaldecoder("utf-8")(errors)
    position = 0
    with open(path, "rb") as f:
        carry = ""
        while True:
            data = f.read(chunk_chars)
            pending = len(decoder.getstate()[0])
            try:
                block = decoder.decode(data, final=not data)
            except UnicodeDecodeError as exc:
                at = position - pending + exc.start
                f.seek(at)
                raise TrainingInputNotUTF8Error(os.fspath(path), at, f.read(4)) from None
            position += len(data)
            if on_read is not None:
                on_read(position)
            if not data:
                break
            text = carry + block
            cut = _last_safe_cut(text)
            if cut <= 0:
                carry = text
                continue
            carry = text[cut:]
            yield text[:cut]
        if carry:
            yield carry


_SAFE_CUT = regex.compile(r"(?<=\S\n)(?=[A-Za-z])")


def _last_safe_cut(text: str) -> int:
    start = max(0, len(text) - 65536)
    while True:
        last = -1
        for m in _SAFE_CUT.finditer(text, start):
            last = m.start()
        if last >= 0 or start == 0:
            return last
        start = max(0, start - 4 * 65536)


def learn(
    counts: Counter,
    vocab_size: int,
    n_special: int,
    min_frequency: int,
    tie_break: str = "ids",
    progress: bool = False,
) -> tuple[dict[bytes, int], list[tuple[int, int]], list[tuple[int, int]]]:
    """Run the merge loop; return ``(ranks, merges, curve)``.

    ``merges`` are ``(left_id, right_id)``; ``curve`` is ``[(n_vocab, corpus_tokens), ...]``:
    how many tokens the training pre-tokens take with the vocabulary as it stood after each
    new token (the first entry: bytes only), from this one run.
    """
    if not isinstance(vocab_size, int) or isinstance(vocab_size, bool):
        raise TypeError(f"vocab_size must be an int, got {type(vocab_size).__name__}")
    if vocab_size < 256 + n_special:
        raise TrainingError(
            f"vocab_size={vocab_size} is too small: it counts the 256 byte tokens and the "
            f"{n_special} special tokens, so pass at least {256 + n_special}"
        )
    if not isinstance(min_frequency, int) or min_frequency < 1:
        raise TrainingError(f"min_frequency must be an int >= 1, got {min_frequency!r}")
    if tie_break not in _reference.TIE_BREAKS:
        raise TrainingError(f"tie_break must be 'ids' (default) or 'hf' (Hugging Face's order), got {tie_break!r}")
    # the merge loop's result does not depend on the order of the words (ties are broken by
    # ids, and counts are sums), so the table is passed as it is
    words = [w for w in counts if w]
    trainer = _backend.active().Trainer(words, [counts[w] for w in words], min_frequency, tie_break)
    target = vocab_size - 256 - n_special
    step = max(1, target // 200) if progress else target
    shown = Progress(progress)
    made = 0
    while made < target and not trainer.finished:
        made += trainer.run(min(step, target - made))
        shown.update(f"learning merges {bar(made, target)}")
    shown.close(f"learned merges {bar(made, target)}")
    merges3 = trainer.merges
    id_bytes = [bytes([b]) for b in range(256)]
    curve = [(256 + n_special, trainer.initial_tokens)]
    for (a, b, c), tokens in zip(merges3, trainer.tokens_after):
        if c == len(id_bytes):
            id_bytes.append(id_bytes[a] + id_bytes[b])
            curve.append((len(id_bytes) + n_special, tokens))
        else:  # a second spelling of an existing token: same vocabulary, fewer tokens
            curve[-1] = (curve[-1][0], tokens)
    ranks = {token: rank for rank, token in enumerate(id_bytes)}
    return ranks, [(a, b) for a, b, _ in merges3], curve
