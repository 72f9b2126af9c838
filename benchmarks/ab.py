"""A/B of two builds of bpe, for changes too small to see across separate benchmark runs.

    python -m benchmarks.ab DIR_A DIR_B [--encoding o200k_base] [--files english.txt,spanish.txt]
                            [--rounds 7] [--peers tiktoken,bpe-openai] [--in-process [--mode warm]]

DIR_A and DIR_B each hold a built ``bpe`` package (e.g. a copy of ``bpe/`` after
``python setup.py build_ext --inplace`` on each version).  Each round starts one fresh
process per build, alternately; each process encodes the first 800 KB of the named corpus
files as ~8 KB documents five times (cold caches before each: a warm or streaming
``--mode`` needs ``--in-process``) and reports its best MB/s.
Prints the medians and B/A.  It measures; it does not judge.  Both builds must give the same
ids (a digest of each process's ids is compared): a faster wrong build is refused.

With ``--peers``, each process also times the named peers (labels of ``benchmarks.run.peers``)
on the same documents, interleaved with bpe round by round as ``python -m benchmarks`` does.
That matters: the peers' work between bpe's rounds evicts bpe's tables from the CPU caches,
which a process timing bpe alone never sees (o200k non-Latin: about 15% slower).  Each
process then reports the median MB/s of bpe and of the first peer named, and the A/B compares
both bpe's speed and its ratio to that peer (which also cancels much of the host's drift).
B/A is also given per round (B's process against the A process just before it): its median
and range.

With ``--in-process``, one process loads both builds' compiled cores (``bpe/_core``) beside
one scanner (the builds' scanners must be the same) and times them in paired
rounds, in random order, with the named peers encoding the same documents between rounds
(their speed is not reported): the host's drift then moves both sides of a pair alike.
``--mode cold`` (the default) empties the core's piece caches before each round and gives
it fresh ``str`` objects; ``--mode warm`` encodes the same objects again; ``--mode streaming``
starts each round as cold does but encodes the whole files, not their first 800 KB (the
streaming regime of ``python -m benchmarks``: caches persist through the pass).  Prints B/A per
round: median, quartiles, range, and in how many rounds B was faster.  ``--both-orders``
runs the in-process A/B twice, the second time with the builds' places swapped, and combines
the two medians as sqrt((B/A first) / (B/A second, which is A/B)): whatever favours a place
in the process (which core is loaded first, for one) cancels, and what remains is B's effect.
"""

from __future__ import annotations

import argparse
import glob
import os
import statistics
import subprocess
import sys

_CHILD = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
import bpe
assert bpe.__file__.startswith(sys.argv[1]), bpe.__file__
name, files, corpora, peer_labels, repo = sys.argv[2], sys.argv[3].split(","), sys.argv[4], sys.argv[5], sys.argv[6]
docs = []
for f in files:
    with open(f"{corpora}/{f}", encoding="utf-8") as fh:
        text = fh.read()[:800_000]
    docs += [text[i:i + 8000] for i in range(0, len(text), 8000)]
enc = bpe.get_encoding(name)
n_bytes = sum(len(d.encode("utf-8")) for d in docs)
import array, hashlib
digest = hashlib.sha256()
for d in docs:                       # builds any lazy tables before timing
    digest.update(array.array("q", enc.encode_ordinary(d)).tobytes())
print(digest.hexdigest())            # the builds' ids must agree
if not peer_labels:
    best = float("inf")
    for _ in range(5):
        enc._core._forget_cached_pieces()
        t = time.perf_counter()
        for d in docs:
            enc.encode_ordinary(d)
        best = min(best, time.perf_counter() - t)
    print(n_bytes / best / 1e6, "nan")
else:
    sys.path.insert(0, repo)              # this checkout's benchmarks (bpe is already imported)
    from benchmarks.run import peers, interleaved, cold_start
    labels = peer_labels.split(",")
    every = peers(name, frozenset(labels))
    missing = [k for k in labels if k not in every]
    if missing:
        sys.exit(f"peers not installed or not available for {name}: {', '.join(missing)}")
    encoders = {"bpe": enc}
    encoders.update({k: every[k] for k in labels})
    med = interleaved({k: (lambda e=e: [e.encode_ordinary(d) for d in docs]) for k, e in encoders.items()},
                      9, {"bpe": cold_start(enc)})
    print(n_bytes / med["bpe"] / 1e6, n_bytes / med[labels[0]] / 1e6)
"""


_IN_PROCESS = r"""
import glob, importlib.util, random, statistics, sys, time
dir_a, dir_b, name, files, corpora, peer_labels, repo, rounds, mode = sys.argv[1:10]
sys.path.insert(0, dir_a)
import bpe
assert bpe.__file__.startswith(dir_a), bpe.__file__
sys.path.insert(0, repo)
from types import SimpleNamespace
from benchmarks.run import peers, prime


def core_of(folder, tag):
    found = glob.glob(f"{folder}/bpe/_core.*.so") + glob.glob(f"{folder}/bpe/_core.*.pyd")
    if not found:
        sys.exit(f"no compiled bpe/_core in {folder}: build it there first (python setup.py build_ext --inplace)")
    spec = importlib.util.spec_from_file_location(f"bpe_{tag}._core", found[0])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


docs = []
for f in files.split(","):
    with open(f"{corpora}/{f}", encoding="utf-8") as fh:
        text = fh.read() if mode == "streaming" else fh.read()[:800_000]
    docs += [text[i:i + 8000] for i in range(0, len(text), 8000)]
n_bytes = sum(len(d.encode("utf-8")) for d in docs)
enc = bpe.get_encoding(name)
pattern = enc._pattern_name
cores = {"A": core_of(dir_a, "a").Encoder(enc.mergeable_ranks, {}),
         "B": core_of(dir_b, "b").Encoder(enc.mergeable_ranks, {})}
for core in cores.values():                  # lazy tables built before timing
    prime(SimpleNamespace(_core=core, encode_ordinary=lambda d, core=core: core.encode_text(d, pattern)), docs)
ids = {k: [c.encode_text(d, pattern) for d in docs] for k, c in cores.items()}
if ids["A"] != ids["B"]:
    sys.exit(f"the builds give different ids on {files} ({name}): compare their outputs before timing them")
labels = peer_labels.split(",") if peer_labels else []
every = peers(name, frozenset(labels)) if labels else {}
missing = [k for k in labels if k not in every]
if missing:
    sys.exit(f"peers not installed or not available for {name}: {', '.join(missing)}")
others = [every[k] for k in labels]
speeds = {"A": [], "B": []}
rng = random.Random(1)
for _ in range(int(rounds)):
    for k in rng.sample(["A", "B"], 2):
        core = cores[k]
        for other in others:
            for d in docs:
                other.encode_ordinary(d)
        if mode != "warm":
            core._forget_cached_pieces()
            texts = [d.encode("utf-8").decode("utf-8") for d in docs]
        else:
            texts = docs
        t = time.perf_counter()
        for d in texts:
            core.encode_text(d, pattern)
        speeds[k].append(n_bytes / (time.perf_counter() - t) / 1e6)
p = sorted(b / a for a, b in zip(speeds["A"], speeds["B"]))
q = len(p) // 4
print(f"{name} {files} {mode}, {n_bytes / 1e6:.2f} MB a round: A {statistics.median(speeds['A']):.1f} MB/s, "
      f"B {statistics.median(speeds['B']):.1f} MB/s; B/A per round {statistics.median(p):.3f} "
      f"(quartiles {p[q]:.3f}-{p[len(p) - 1 - q]:.3f}, range {p[0]:.3f}-{p[-1]:.3f}), "
      f"B faster in {sum(x > 1 for x in p)} of {len(p)} rounds")
"""


def _same_scanner(dir_a: str, dir_b: str) -> bool:
    """Whether the two builds' scanners are the same: their ``bpe/_scanner.pyx`` where both
    have the source, else their compiled ``bpe/_scanner`` files (an installed package has no
    source)."""
    def read(folder, pattern):
        found = sorted(glob.glob(os.path.join(folder, "bpe", pattern)))
        if not found:
            return None
        with open(found[0], "rb") as fh:
            return fh.read()
    sources = read(dir_a, "_scanner.pyx"), read(dir_b, "_scanner.pyx")
    if None not in sources:
        return sources[0] == sources[1]
    built = read(dir_a, "_scanner.*.so") or read(dir_a, "_scanner.*.pyd"), \
        read(dir_b, "_scanner.*.so") or read(dir_b, "_scanner.*.pyd")
    return None not in built and built[0] == built[1]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ab", description=__doc__.split("\n\n")[0])
    parser.add_argument("dir_a")
    parser.add_argument("dir_b")
    parser.add_argument("--encoding", default="o200k_base")
    parser.add_argument("--files", default="english.txt,spanish.txt")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--peers", default="",
                        help="peers to time between bpe's rounds in each process, e.g. tiktoken,bpe-openai")
    parser.add_argument("--in-process", action="store_true",
                        help="both builds' cores in one process, paired rounds (see above)")
    parser.add_argument("--mode", choices=("cold", "warm", "streaming"), default="cold",
                        help="with --in-process (the process-per-round A/B times cold rounds only)")
    parser.add_argument("--both-orders", action="store_true",
                        help="with --in-process: run it again with A and B swapped, and combine the two")
    args = parser.parse_args(argv)
    if args.both_orders and not args.in_process:
        parser.error("--both-orders combines two --in-process runs: add --in-process")
    if args.mode != "cold" and not args.in_process:
        # (one process per round starts cold by construction: a warm or streaming mode
        # would be ignored, and the result line would not say so)
        parser.error(f"--mode {args.mode} is timed in one process: add --in-process "
                     "(without it, each round is a fresh process and times cold passes only)")
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(here)
    corpora = os.path.join(os.environ.get("BPE_SHARED_DATA") or os.path.join(repo, "..", "shared", "data"),
                           "corpora")
    if args.in_process:
        dir_a, dir_b = os.path.abspath(args.dir_a), os.path.abspath(args.dir_b)
        if not _same_scanner(dir_a, dir_b):
            sys.stderr.write("--in-process loads both cores beside one scanner, and the builds' scanners "
                             "differ (bpe/_scanner.pyx, or the compiled bpe/_scanner where there is no "
                             "source): run the A/B without --in-process\n")
            return 1
        medians = []
        for first, second in [(dir_a, dir_b), (dir_b, dir_a)][:2 if args.both_orders else 1]:
            out = subprocess.run([sys.executable, "-c", _IN_PROCESS, first, second, args.encoding, args.files,
                                  corpora, args.peers, repo, str(args.rounds), args.mode], capture_output=True,
                                 text=True, cwd="/")
            sys.stdout.write(out.stdout)
            sys.stderr.write(out.stderr)
            if out.returncode != 0:
                return out.returncode
            medians.append(float(out.stdout.split("B/A per round ")[1].split()[0]))
        if args.both_orders:
            effect = (medians[0] / medians[1]) ** 0.5
            print(f"both orders: B/A {medians[0]:.3f} with B as the second build, {1 / medians[1]:.3f} as the first; "
                  f"effect of B {effect:.3f} ({(effect - 1) * 100:+.1f}%)")
        return 0
    speeds: dict[str, list[float]] = {"A": [], "B": []}
    ratios: dict[str, list[float]] = {"A": [], "B": []}
    digests: dict[str, str] = {}      # a digest of each build's ids
    for _ in range(args.rounds):
        for label, folder in (("A", args.dir_a), ("B", args.dir_b)):
            out = subprocess.run([sys.executable, "-c", _CHILD, os.path.abspath(folder), args.encoding, args.files,
                                  corpora, args.peers, repo], capture_output=True, text=True, cwd="/")
            if out.returncode != 0:
                sys.stderr.write(out.stderr)
                return 1
            ids, ours, peer = out.stdout.split()
            digests.setdefault(label, ids)
            if digests[label] != ids or digests.get("A", ids) != ids:
                sys.stderr.write(f"the builds give different ids on {args.files} ({args.encoding}): "
                                 "compare their outputs before timing them\n")
                return 1
            ours, peer = float(ours), float(peer)
            speeds[label].append(ours)
            ratios[label].append(ours / peer)
    a, b = statistics.median(speeds["A"]), statistics.median(speeds["B"])
    paired = sorted(y / x for x, y in zip(speeds["A"], speeds["B"]))
    line = (f"{args.encoding} {args.files}: A {a:.1f} MB/s, B {b:.1f} MB/s, B/A {b / a:.3f} "
            f"(medians of {args.rounds} alternating rounds; per round {statistics.median(paired):.3f}, "
            f"{paired[0]:.3f}-{paired[-1]:.3f}")
    if args.peers:
        first = args.peers.split(",")[0]
        ra, rb = statistics.median(ratios["A"]), statistics.median(ratios["B"])
        line += f"; bpe/{first} A {ra:.2f}x, B {rb:.2f}x, B/A {rb / ra:.3f}"
    print(line + ")")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
