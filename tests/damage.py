"""One damage of a file's bytes, of the kinds files suffer, for the loader fuzz tests (and
fuzz/targets.py): ``damage(raw, op, a, b)`` with ``op`` in ``range(KINDS)`` picks the kind and
``a``, ``b`` (any non-negative ints) pick where and what."""

KINDS = 8


def damage(raw: bytes, op: int, a: int, b: int) -> bytes:
    """``raw`` with a line deleted (0), repeated (1) or swapped with another (2), cut short
    (3), a byte changed (4), inserted (5), or up to 40 bytes deleted (6), or a digit changed
    (7; any byte, when there is no digit)."""
    lines = raw.split(b"\n")
    i, j = a % len(lines), b % len(lines)
    k = a % max(len(raw), 1)
    if op == 0:
        del lines[i]
    elif op == 1:
        lines.insert(i, lines[j])
    elif op == 2:
        lines[i], lines[j] = lines[j], lines[i]
    elif op == 3:
        return raw[:k]
    elif op == 4:
        return raw[:k] + bytes([b % 256]) + raw[k + 1:]
    elif op == 5:
        return raw[:k] + bytes([b % 256]) + raw[k:]
    elif op == 6:
        return raw[:k] + raw[k + 1 + b % 40:]
    else:
        digits = [n for n, c in enumerate(raw) if 48 <= c <= 57] or [k]
        n = digits[a % len(digits)]
        return raw[:n] + bytes([48 + (raw[n] - 47 + b % 9) % 10]) + raw[n + 1:]
    return b"\n".join(lines)
