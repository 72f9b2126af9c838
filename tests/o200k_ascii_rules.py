"""o200k_base's pre-tokenizer on ASCII text, as rules on character classes and runs.

The regex is matched left to right, trying one alternative after another.  On ASCII text
its pieces can also be told by where each one starts, from each character's class, its
neighbours and the runs it belongs to, with no search.  This module is that description,
written so that each rule maps onto operations on bit masks (the form a vectorised scanner
works in: one bit per byte); tests/test_scanner.py checks it against the regex and the
splitters.  It describes ASCII text only, and is a test model, not an encoder's path.

Classes: L a-z, U A-Z, D 0-9, SP space, TB tab / vertical tab / form feed, NL \\r \\n, AP the
apostrophe, P everything else (punctuation, symbols, '/', control characters).
"""

from __future__ import annotations

CONTRACTION_2 = "stmd"            # 's 't 'm 'd, either case
CONTRACTION_3 = ("re", "ve", "ll")


def classes(text: str) -> list[str]:
    out = []
    for ch in text:
        if "a" <= ch <= "z":
            out.append("L")
        elif "A" <= ch <= "Z":
            out.append("U")
        elif "0" <= ch <= "9":
            out.append("D")
        elif ch == " ":
            out.append("SP")
        elif ch in "\t\x0b\x0c":
            out.append("TB")
        elif ch in "\r\n":
            out.append("NL")
        elif ch == "'":
            out.append("AP")
        else:
            out.append("P")
    return out


def _runs(flags: list[bool]) -> list[tuple[int, int]]:
    # the maximal runs [a, b) of True
    runs, k, n = [], 0, len(flags)
    while k < n:
        if flags[k]:
            j = k
            while j < n and flags[j]:
                j += 1
            runs.append((k, j))
            k = j
        else:
            k += 1
    return runs


def starts(text: str) -> list[int]:
    """The offsets where o200k_base's pieces of ``text`` (ASCII) start."""
    n = len(text)
    c = classes(text)
    letter = [x in ("L", "U") for x in c]
    start = [False] * (n + 1)
    taken = [False] * n       # inside a piece that starts earlier, by rules 1 and 3

    # 1. Contractions.  An apostrophe right after a letter (one that is not itself part of
    #    a contraction) followed by s, t, m or d (either case) takes 2 characters, by re, ve
    #    or ll 3: the letters' piece goes on through them, and the next character starts a
    #    piece whatever it is.
    in_contraction = [False] * n
    for k in range(1, n):
        if c[k] == "AP" and letter[k - 1] and not in_contraction[k - 1]:
            nxt = text[k + 1:k + 3].lower()
            size = 2 if nxt[:1] in CONTRACTION_2 and nxt[:1] else 3 if nxt in CONTRACTION_3 else 0
            for j in range(k, k + size):
                in_contraction[j] = taken[j] = True
            if size and k + size < n:
                start[k + size] = True

    # What punctuation pieces take after their run (rule 3) comes first: a '/' taken that
    # way is no prefix of the letters after it.
    punct = [x in ("AP", "P") and not taken[i] for i, x in enumerate(c)]
    taken_after: set[int] = set()
    while True:
        grew = False
        for a, b in _runs([punct[i] and not taken[i] for i in range(n)]):
            j = b
            while j < n and text[j] in "\r\n/":
                if not taken[j]:
                    taken[j] = grew = True
                    taken_after.add(j)
                j += 1
        if not grew:
            break

    # 2. Letters.  Inside a run of letters a piece starts at each upper-case letter after a
    #    lower-case one.  The first letter of a run takes the character before it as its
    #    prefix (the piece starts there instead) when that is a space or a tab, or a lone
    #    punctuation character (not in a longer punctuation run, not after a space);
    #    otherwise the letter starts the piece.
    prefixes = set()
    for k in range(n):
        if not letter[k] or taken[k]:
            continue
        if k > 0 and letter[k - 1]:
            if c[k] == "U" and c[k - 1] == "L":
                start[k] = True
            continue
        p = k - 1
        lone = (p >= 0 and punct[p] and not taken[p]
                and not (p > 0 and ((punct[p - 1] and not taken[p - 1]) or c[p - 1] == "SP")))
        if p >= 0 and (c[p] in ("SP", "TB") or lone):
            start[p] = True
            prefixes.add(p)
        else:
            start[k] = True

    # 3. Punctuation runs (apostrophes of contractions left out) that are not a prefix.  The
    #    piece starts at the run, or at the space right before it, and takes the run and
    #    then every \r, \n and '/' after it, which can cut the next run short: its rest is a
    #    new run (so the runs are found again until nothing more is taken).  The character
    #    after the piece starts the next one.
    for a, b in _runs([punct[i] and not taken[i] for i in range(n)]):
        if b - a == 1 and a in prefixes:
            continue
        start[a - 1 if a > 0 and c[a - 1] == "SP" else a] = True
        j = b
        while j < n and j in taken_after:
            j += 1
        if j < n:
            start[j] = True

    # 4. Digits: in groups of three from the start of each run.
    for a, b in _runs([x == "D" for x in c]):
        for k in range(a, b, 3):
            start[k] = True

    # 5. Whitespace runs, less what rule 3 took.  A run holding a line break: its piece runs
    #    from its start through its last line break.  The rest R (no line break) is one
    #    piece at the end of the text; before a letter, its last character is that word's
    #    prefix and the characters before it a piece; before punctuation, a last space
    #    starts the punctuation's piece and the characters before it are a piece, while a
    #    last tab is a piece of its own between those and the punctuation; before a digit,
    #    the characters before the last, the last, and the digits are three pieces.
    space = [x in ("SP", "TB", "NL") and not taken[i] for i, x in enumerate(c)]
    for a, b in _runs(space):
        breaks = [k for k in range(a, b) if c[k] == "NL"]
        if breaks:
            start[a] = True
            a = breaks[-1] + 1
        if a >= b:
            continue
        if b == n:
            start[a] = True
            continue
        if a < b - 1:
            start[a] = True
        if c[b] in ("AP", "P") and c[b - 1] != "SP" or c[b] == "D":
            start[b - 1] = True

    if n:
        start[0] = True
    return [k for k in range(n) if start[k]]


def split(text: str) -> list[str]:
    """The pieces of ``text`` (ASCII) by :func:`starts`."""
    bounds = starts(text) + [len(text)]
    return [text[bounds[i]:bounds[i + 1]] for i in range(len(bounds) - 1)]
