"""The ``save``/``load`` file format: one versioned, line-based, human-inspectable text file.

Example (values after the key are JSON; token lines are tiktoken's ``base64 rank``)::

    bpe-tokenizer 2
    name "my-tokenizer"
    pattern "'(?i:[sdmt]|ll|ve|re)|..."        (null: no pre-tokenization)
    normalization null                         ("NFC", "NFKC", "NFD", "NFKD" or null)
    n_vocab null                               (an explicit vocabulary size, or null)
    special "<|endoftext|>" 1000               (one line per special token)
    ranks 744                                  (then that many "base64 rank" lines)
    ...
    merges 488                                 (then that many "left_id right_id" lines;
    ...                                         "merges none": recover them from the ranks)
    end
    sha256 9f86d0...                           (SHA-256 of every byte above, hex)

The module turns a :class:`TokenizerSpec` into that text and back, raising
:class:`~bpe.errors.TokenizerFileError` with the line number on anything malformed.  The
checksum comes first: a file changed in any byte after it was written (damaged, truncated,
edited by hand) is refused before it is read, so it can never load as another tokenizer;
the counts and checks after it name the line of anything a writer other than this module
got wrong.  Version 1 files (the same, without the checksum line) are still read.  It does
not build tokenizers (``bpe.tokenizer`` does).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Optional

from ..errors import TokenizerFileError
from .tiktoken import dump_tiktoken_ranks, parse_ranks

MAGIC = "bpe-tokenizer"
VERSION = 2
READS = ("1", "2")  # (version 1: no checksum line)
NORMALIZATIONS = ("NFC", "NFKC", "NFD", "NFKD")


@dataclass
class TokenizerSpec:
    """Everything a tokenizer is made of, as plain data."""

    name: Optional[str]
    pattern: Optional[str]
    normalization: Optional[str]
    explicit_n_vocab: Optional[int]
    special_tokens: dict[str, int] = field(default_factory=dict)
    ranks: dict[bytes, int] = field(default_factory=dict)
    merges: Optional[list[tuple[int, int]]] = None


def dumps(spec: TokenizerSpec) -> bytes:
    head = [
        f"{MAGIC} {VERSION}",
        f"name {json.dumps(spec.name)}",
        f"pattern {json.dumps(spec.pattern)}",
        f"normalization {json.dumps(spec.normalization)}",
        f"n_vocab {json.dumps(spec.explicit_n_vocab)}",
    ]
    head += [f"special {json.dumps(tok)} {tid}" for tok, tid in sorted(spec.special_tokens.items(), key=lambda kv: kv[1])]
    head.append(f"ranks {len(spec.ranks)}")
    parts = ["\n".join(head).encode() + b"\n", dump_tiktoken_ranks(spec.ranks)]
    if spec.merges is None:
        parts.append(b"merges none\n")
    else:
        parts.append(f"merges {len(spec.merges)}\n".encode())
        parts.append("".join(f"{a} {b}\n" for a, b in spec.merges).encode())
    parts.append(b"end\n")
    body = b"".join(parts)
    return body + b"sha256 " + hashlib.sha256(body).hexdigest().encode() + b"\n"


def _checked_body(data: bytes, source: object, verify: bool) -> bytes:
    """``data`` without its final ``sha256`` line, after checking the line against the rest
    (unless ``verify`` is false)."""
    cut = data.rstrip(b"\n").rfind(b"\n") + 1
    last = data[cut:].rstrip(b"\n")
    line_no = data.count(b"\n", 0, cut) + 1
    if not last.startswith(b"sha256 "):
        raise TokenizerFileError(source, "the file ends without its 'sha256' line (truncated?): it is not "
                                         "the whole file that was saved", line_no)
    want = last[len(b"sha256 "):]
    body = data[:cut]
    if verify and hashlib.sha256(body).hexdigest().encode() != want:
        raise TokenizerFileError(source, "the content does not match the file's sha256 line: it was changed "
                                         "after it was saved (damaged, or edited by hand; to load an edited "
                                         "file, pass verify=False to Tokenizer.load and save it again)", line_no)
    return body


def loads(data: bytes, source: object, verify: bool = True) -> TokenizerSpec:
    """The spec of a saved file; ``TokenizerFileError`` naming the line for anything wrong.
    ``verify=False`` skips the checksum (a file edited on purpose)."""
    if data.startswith(f"{MAGIC} {VERSION}\n".encode()):
        data = _checked_body(data, source, verify)
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    n = len(lines)

    def fail(problem: str, i: Optional[int]) -> TokenizerFileError:
        return TokenizerFileError(source, problem, None if i is None else i + 1)

    def text(i: int) -> str:
        if i >= n:
            raise fail("the file ends too early (truncated?); expected more lines and a final 'end'", None)
        try:
            return lines[i].decode("utf-8")
        except UnicodeDecodeError:
            raise fail("line is not valid UTF-8", i) from None

    def keyed(i: int, key: str) -> str:
        line = text(i)
        k, _, rest = line.partition(" ")
        if k != key:
            raise fail(f"expected a '{key} ...' line, got {line[:60]!r}", i)
        return rest

    def json_value(i: int, key: str):
        rest = keyed(i, key)
        try:
            return json.loads(rest)
        except ValueError:
            raise fail(f"the value of '{key}' is not valid JSON: {rest[:60]!r}", i) from None

    def count(i: int, key: str) -> int:
        rest = keyed(i, key)
        if not (rest.isascii() and rest.isdigit()):
            raise fail(f"'{key}' must be followed by a count, got {rest[:60]!r}", i)
        return int(rest)

    first = text(0) if n else ""
    if not first.startswith(MAGIC + " "):
        hint = ""
        if first and len(first.split()) == 2 and first.split()[1].isdigit():
            hint = " (this looks like a .tiktoken rank file: use Tokenizer.from_tiktoken(path, pattern=...))"
        raise fail(f"not a bpe tokenizer file: the first line must be '{MAGIC} {VERSION}'{hint}", 0)
    version = first[len(MAGIC) + 1:]
    if version not in READS:
        raise fail(f"file format version {version!r} is not supported by this bpe (it reads versions "
                   f"{', '.join(READS)})", 0)
    name = json_value(1, "name")
    pattern = json_value(2, "pattern")
    normalization = json_value(3, "normalization")
    n_vocab = json_value(4, "n_vocab")
    if name is not None and not isinstance(name, str):
        raise fail("name must be a string or null", 1)
    if pattern is not None and not isinstance(pattern, str):
        raise fail("pattern must be a string or null", 2)
    if normalization is not None and normalization not in NORMALIZATIONS:
        raise fail(f"normalization must be one of {NORMALIZATIONS} or null, got {normalization!r}", 3)
    if n_vocab is not None and (not isinstance(n_vocab, int) or n_vocab < 0):
        raise fail("n_vocab must be a non-negative integer or null", 4)
    i = 5
    specials: dict[str, int] = {}
    while text(i).startswith("special "):
        rest = text(i)[len("special "):]
        token_json, _, tid = rest.rpartition(" ")
        try:
            token = json.loads(token_json)
            if not (tid.isascii() and tid.isdigit()):
                raise ValueError(tid)
            token_id = int(tid)
        except ValueError:
            raise fail(f"expected 'special <JSON string> <id>', got {text(i)[:60]!r}", i) from None
        if not isinstance(token, str) or not token or token_id < 0:
            raise fail("a special token must be a non-empty string with a non-negative id", i)
        if token in specials:
            raise fail(f"special token {token!r} appears twice", i)
        specials[token] = token_id
        i += 1
    n_ranks = count(i, "ranks")
    i += 1
    if i + n_ranks > n:
        raise fail(f"the file announces {n_ranks} rank lines but ends after {n - i}", None)
    ranks = parse_ranks(lines[i : i + n_ranks], source, first_line=i + 1)
    if len(ranks) != n_ranks:
        raise fail(f"{n_ranks - len(ranks)} of the {n_ranks} rank lines are empty", i)
    i += n_ranks
    merges: Optional[list[tuple[int, int]]]
    if text(i) == "merges none":
        merges = None
        i += 1
    else:
        n_merges = count(i, "merges")
        i += 1
        if i + n_merges > n:
            raise fail(f"the file announces {n_merges} merge lines but ends after {n - i}", None)
        merges = []
        for j in range(i, i + n_merges):
            parts = lines[j].split()
            if len(parts) != 2 or not parts[0].isdigit() or not parts[1].isdigit():
                raise fail(f"expected '<left_id> <right_id>', got {lines[j][:60]!r}", j)
            merges.append((int(parts[0]), int(parts[1])))
        i += n_merges
    if text(i) != "end":
        raise fail(f"expected the closing 'end' line, got {text(i)[:60]!r}", i)
    if i + 1 != n:
        raise fail("unexpected content after the closing 'end' line", i + 1)
    return TokenizerSpec(name, pattern, normalization, n_vocab, specials, ranks, merges)
