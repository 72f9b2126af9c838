"""A from-scratch check of the greedy property of a training run (shared by the test suites)."""

from collections import Counter


def _apply(seq, a, b, c):
    out, i = [], 0
    while i < len(seq):
        if i + 1 < len(seq) and seq[i] == a and seq[i + 1] == b:
            out.append(c)
            i += 2
        else:
            out.append(seq[i])
            i += 1
    return out


def assert_greedy(words, counts, merges):
    """Each merge ``(a, b, c)`` must be a most frequent pair at its step, recounted from scratch
    (overlapping pairs, weighted by count), ties going to the smallest ``(a, b)``; ``c`` is a new
    id or the id of the token already spelled by ``a + b``.  Returns the bytes of every id."""
    seqs = {w: list(w) for w in words}
    id_bytes = [bytes([i]) for i in range(256)]
    for a, b, c in merges:
        stats = Counter()
        for w, n in zip(words, counts):
            seq = seqs[w]
            for pair in zip(seq, seq[1:]):
                stats[pair] += n
        best = max(stats.values())
        assert stats[(a, b)] == best, (a, b, stats[(a, b)], best)
        assert (a, b) == min(p for p, n in stats.items() if n == best)
        if c == len(id_bytes):
            id_bytes.append(id_bytes[a] + id_bytes[b])
        else:
            assert id_bytes[c] == id_bytes[a] + id_bytes[b]
        for w in words:
            seqs[w] = _apply(seqs[w], a, b, c)
    return id_bytes
