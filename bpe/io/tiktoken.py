"""Reading and writing tiktoken's ``.tiktoken`` rank files.

Format: one line per token, ``base64(token bytes) SPACE rank NEWLINE``; the rank is the token
id.  This module parses such a file into ``{token_bytes: rank}`` with errors that name the
line, and writes one back.  It does not know split patterns or special tokens (those are not
in the file); see ``bpe.registry`` for the bundled encodings.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from typing import Union

from ..errors import TokenizerFileError

PathLike = Union[str, "os.PathLike[str]"]


def parse_ranks(lines, source: object, first_line: int = 1) -> dict[bytes, int]:
    """Parse ``base64 rank`` lines (bytes or str) into a rank dict."""
    ranks: dict[bytes, int] = {}
    seen_ranks: set[int] = set()
    for lineno, line in enumerate(lines, start=first_line):
        if isinstance(line, str):
            line = line.encode("ascii", "replace")
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2:
            raise TokenizerFileError(
                source, f"expected '<base64 token> <rank>', got {line[:60]!r}", lineno
            )
        try:
            token = base64.b64decode(parts[0], validate=True)
        except (binascii.Error, ValueError):
            raise TokenizerFileError(source, f"token {parts[0][:40]!r} is not valid base64", lineno) from None
        try:
            rank = int(parts[1])
        except ValueError:
            raise TokenizerFileError(source, f"rank {parts[1][:40]!r} is not an integer", lineno) from None
        if rank < 0 or rank >= 2**31 - 1:
            raise TokenizerFileError(source, f"rank {rank} is out of range (0 .. 2**31-2)", lineno)
        if token in ranks:
            raise TokenizerFileError(source, f"token {token!r} appears twice", lineno)
        if rank in seen_ranks:
            raise TokenizerFileError(source, f"rank {rank} is given to two tokens", lineno)
        ranks[token] = rank
        seen_ranks.add(rank)
    return ranks


def load_tiktoken_ranks(path: PathLike, expected_hash: "str | None" = None) -> dict[bytes, int]:
    """Read a ``.tiktoken`` file into ``{token_bytes: rank}``; with ``expected_hash`` (the
    SHA-256 of the file, hex) a file with other contents raises ``TokenizerFileError``."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise TokenizerFileError(path, f"cannot read the file: {exc.strerror or exc}") from None
    if expected_hash is not None:
        found = hashlib.sha256(data).hexdigest()
        if found != expected_hash.lower():
            raise TokenizerFileError(path, f"its SHA-256 is {found}, not the expected {expected_hash}: "
                                           "the file is damaged or another one")
    ranks = parse_ranks(data.splitlines(), path)
    if not ranks:
        raise TokenizerFileError(path, "the file holds no tokens (is it a .tiktoken rank file?)")
    return ranks


def load_tiktoken_bpe(tiktoken_bpe_file: PathLike, expected_hash: "str | None" = None) -> dict[bytes, int]:
    """tiktoken's ``tiktoken.load.load_tiktoken_bpe`` for local files (bpe never downloads):
    :func:`load_tiktoken_ranks`."""
    return load_tiktoken_ranks(tiktoken_bpe_file, expected_hash)


def dump_tiktoken_ranks(ranks: dict[bytes, int]) -> bytes:
    """The ``.tiktoken`` text of ``ranks``, sorted by rank."""
    return b"".join(
        base64.b64encode(token) + b" " + str(rank).encode() + b"\n"
        for token, rank in sorted(ranks.items(), key=lambda kv: kv[1])
    )
