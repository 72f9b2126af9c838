"""Instructions per byte under valgrind's callgrind: bpe against exact peers, cold and warm.

    python -m benchmarks.callgrind [--encodings o200k_base,cl100k_base] [--peers tiktoken,fastokens,...]
                                   [--bytes 800000] [--corpus english.txt] [--top 3] [--jobs 2]
                                   [--branches]
    python -m benchmarks --only callgrind

Instruction counts do not depend on the machine's noise, so small differences show that
timings on a noisy machine cannot.  The text is the first ``--bytes`` of ``--corpus``
(english.txt unless named; from ``$BPE_SHARED_DATA/corpora``, the bundled sample without
it), cut into the ~8 KB documents of ``python -m benchmarks`` and encoded one
encode_ordinary call per document on one thread.
For each encoding and encoder, three child processes run under ``valgrind --tool=callgrind``;
each loads the encoder as ``benchmarks.run.peers`` does (the peers from the rank file), reads
the text, starts the encoder cold as the ``regimes`` section's cold rounds do (untimed passes
over the text for one-time lazy set-up, ``benchmarks.run.prime``, then ``cold_start``: caches
emptied; fastokens and gigatoken, which ``cold_start`` would rebuild, are simply used as just
loaded), takes fresh str copies of the documents and encodes a short warm-up string, then:

* base: stops there;
* cold: encodes the text once;
* warm: encodes the text twice (the second pass over the same str objects, caches kept).

cold Ir/byte = (cold - base) / bytes, warm Ir/byte = (warm - cold) / bytes, where Ir is the
instructions executed by the whole process (every thread).  Peers' thread pools are held to
one thread (RAYON_NUM_THREADS=1, FASTOKENS_BPE_THREADS=1 and FASTOKENS_SPIN_US=0, so that no
worker spins while it waits).  Before that, every encoder named by ``--peers`` runs once
without valgrind: its ids are compared with tiktoken's (bpe's, without tiktoken), and its
one cold pass is timed; bpe and the ``--top`` fastest peers with exact ids are then
measured (the others are listed with their ids and native speed).  PYTHONHASHSEED=0 in
every child.  Instruction counts are not time: a cache miss costs no instruction, nor does
a mispredicted branch.

``--branches`` runs the same children under ``valgrind --tool=cachegrind --branch-sim=yes``
instead (bpe's instruction counts agree with callgrind's to within 0.3%), and adds mispredicted
branches per byte (conditional and indirect), cold and warm, from cachegrind's model of a
branch predictor: not a real CPU's count, but repeatable, and the main cost that
instructions per byte do not show (on this project's machines each one costs roughly the
time of 15 to 30 instructions).  Encoders that seed their hash tables at random (Rust's
default hasher) vary from run to run, under either tool: fastokens' warm count moved
between 43 and 50 instructions per byte, its mispredicts by a few hundredths per byte.
"""

from __future__ import annotations

import argparse
import array
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zlib
from concurrent.futures import ThreadPoolExecutor
from typing import Optional

from .run import documents, peers, table

_CHILD = r"""
import array, json, sys, time, zlib
from benchmarks.run import cold_start, documents, peers, prime
label, name, mode, limit, corpus = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
enc = peers(name, frozenset([label]))[label]
docs = documents([corpus], limit)
if not getattr(enc, "cold_by_rebuild", False):
    prime(enc, docs)  # one-time lazy set-up, done before any cold round of `regimes` too
    cold_start(enc)()
docs = [d.encode("utf-8").decode("utf-8") for d in docs]
enc.encode_ordinary("warm up")
if mode == "check":
    t = time.perf_counter()
    ids = [enc.encode_ordinary(d) for d in docs]
    seconds = time.perf_counter() - t
    crc = 0
    for x in ids:
        crc = zlib.crc32(array.array("I", x).tobytes(), crc)
    print(json.dumps({"crc": crc, "seconds": seconds}))
elif mode in ("cold", "warm"):
    for _ in range(1 if mode == "cold" else 2):
        for d in docs:
            enc.encode_ordinary(d)
"""

DEFAULT_PEERS = "tiktoken,riptoken,bpe-openai,hf-tokenizers,fastokens,gigatoken,quicktok"


def _env() -> dict:
    path = os.pathsep.join(p or os.getcwd() for p in sys.path)
    return dict(os.environ, PYTHONPATH=path, PYTHONHASHSEED="0", RAYON_NUM_THREADS="1",
                FASTOKENS_BPE_THREADS="1", FASTOKENS_SPIN_US="0")


def _child(label: str, name: str, mode: str, limit: int, valgrind: Optional[str] = None,
           branches: bool = False, corpus: str = "english.txt") -> dict:
    """Run the child once; under valgrind, return its instruction count as {"ir": n} (with
    ``branches``, from cachegrind with its branch simulation, plus "mispredicted": the
    mispredicted conditional and indirect branches)."""
    argv = [sys.executable, "-c", _CHILD, label, name, mode, str(limit), corpus]
    if valgrind is None:
        out = subprocess.run(argv, capture_output=True, text=True, env=_env(), check=True, cwd="/")
        return json.loads(out.stdout)
    tool = "cachegrind" if branches else "callgrind"
    with tempfile.TemporaryDirectory() as folder:
        result = os.path.join(folder, f"{tool}.out")
        options = ["--cache-sim=no", "--branch-sim=yes"] if branches else []
        run = subprocess.run([valgrind, f"--tool={tool}", f"--{tool}-out-file={result}"] + options + argv,
                             capture_output=True, text=True, env=_env(), cwd="/")
        if run.returncode != 0:
            raise RuntimeError(f"{label} {name} {mode}: valgrind exited {run.returncode}: {run.stderr[-500:]}")
        counts = totals(result)
    if counts is None or "Ir" not in counts or (branches and not {"Bcm", "Bim"} <= set(counts)):
        raise RuntimeError(f"{label} {name} {mode}: no instruction total in {tool}'s output")
    if not branches:
        return {"ir": counts["Ir"]}
    return {"ir": counts["Ir"], "mispredicted": counts["Bcm"] + counts["Bim"]}


def totals(path: str) -> Optional[dict]:
    """The whole run's count of every event (Ir, and Bc, Bcm, Bi, Bim under the branch
    simulation) from a callgrind or cachegrind output file; None without a total line."""
    events = ["Ir"]
    with open(path) as f:
        for line in f:
            if line.startswith("events:"):
                events = line.split()[1:]
            found = re.match(r"(?:summary|totals):\s*([\d\s]+)$", line)
            if found:
                return dict(zip(events, map(int, found.group(1).split())))
    return None


def bench_callgrind(encodings: list[str], labels: list[str], limit: int, top: int = 3, jobs: int = 2,
                    branches: bool = False, corpus: str = "english.txt") -> None:
    """Instructions per byte of bpe and of the ``top`` fastest of the exact peers in ``labels``
    (see the module's docstring); with ``branches``, mispredicted branches per byte too."""
    tool = "cachegrind --branch-sim=yes" if branches else "callgrind"
    print(f"\n## Instructions per byte (valgrind --tool={tool}), one encode_ordinary call per ~8 KB document "
          f"of the first {limit / 1e6:.1f} MB of {corpus}, single thread")
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        print("\n(needs valgrind: apt-get install valgrind)")
        return
    docs = documents([corpus], limit)
    n_bytes = sum(len(d.encode("utf-8")) for d in docs)
    for name in encodings:
        available = [k for k in labels if k in peers(name, frozenset(labels))]
        ref = peers(name, frozenset(["tiktoken"]))
        ref = ref.get("tiktoken", ref["bpe"])
        want = 0
        for d in docs:
            want = zlib.crc32(array.array("I", ref.encode_ordinary(d)).tobytes(), want)
        # a native run of each encoder: its ids (against tiktoken's) and its speed on one cold pass
        checks = {k: _child(k, name, "check", limit, corpus=corpus) for k in ["bpe"] + available}
        exact = {k: c["crc"] == want for k, c in checks.items()}
        speed = {k: n_bytes / c["seconds"] / 1e6 for k, c in checks.items()}
        fastest = sorted((k for k in available if exact[k]), key=speed.get, reverse=True)[:top]
        chosen = ["bpe"] + fastest
        runs = [(k, mode) for k in chosen if exact[k] for mode in ("base", "cold", "warm")]
        with ThreadPoolExecutor(max_workers=jobs) as pool:  # counts do not depend on what runs beside
            results = dict(zip(runs, pool.map(lambda r: _child(r[0], name, r[1], limit, valgrind, branches, corpus), runs)))
        counts = {r: c["ir"] for r, c in results.items()}
        per_byte = {k: ((counts[k, "cold"] - counts[k, "base"]) / n_bytes,
                        (counts[k, "warm"] - counts[k, "cold"]) / n_bytes) for k in chosen if exact[k]}
        missed = {k: ((results[k, "cold"]["mispredicted"] - results[k, "base"]["mispredicted"]) / n_bytes,
                      (results[k, "warm"]["mispredicted"] - results[k, "cold"]["mispredicted"]) / n_bytes)
                  for k in per_byte} if branches else {}
        ours = per_byte.get("bpe")
        rows = []
        extra = 2 if branches else 0
        for k in ["bpe"] + available:
            if not exact[k]:
                rows.append([k, "wrong ids", f"{speed[k]:.1f}"] + ["-"] * (5 + extra))
            elif k not in per_byte:
                rows.append([k, "exact", f"{speed[k]:.1f}", "(not among the fastest)"] + [""] * (4 + extra))
            else:
                cold, warm = per_byte[k]
                rows.append([k, "exact", f"{speed[k]:.1f}", f"{cold:.1f}", f"{warm:.1f}",
                             f"{cold / ours[0]:.2f}x" if ours else "-", f"{warm / ours[1]:.2f}x" if ours else "-",
                             f"{counts[k, 'base'] / 1e9:.2f}"] + [f"{x:.3f}" for x in missed.get(k, ())])
        print(f"\n### {name} ({n_bytes / 1e6:.2f} MB, {len(docs)} documents)\n")
        print(table(["encoder", "ids", "native cold MB/s (one pass)", "cold Ir/byte", "warm Ir/byte",
                     "cold: encoder / bpe", "warm: encoder / bpe", "base run (G Ir)"]
                    + (["cold mispredicts/byte", "warm mispredicts/byte"] if branches else []), rows))
        missing = [k for k in labels if k not in available]
        if missing:
            print(f"\n(not installed, or not loadable offline for {name}: {', '.join(missing)})")
    print(f"\n(measured: bpe and the {top} exact peers fastest in the native pass; encoder / bpe above 1: the "
          "encoder executes more instructions per byte than bpe)")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.callgrind", description=__doc__.split("\n\n")[0])
    parser.add_argument("--encodings", default="o200k_base,cl100k_base")
    parser.add_argument("--peers", default=DEFAULT_PEERS, help="labels of benchmarks.run.peers")
    parser.add_argument("--bytes", type=int, default=800_000, help="bytes of the corpus file")
    parser.add_argument("--corpus", default="english.txt",
                        help="a file of $BPE_SHARED_DATA/corpora (code_python.txt, multilingual.txt, ...)")
    parser.add_argument("--top", type=int, default=3, help="how many of the fastest exact peers to measure")
    parser.add_argument("--jobs", type=int, default=2, help="valgrind runs at once")
    parser.add_argument("--branches", action="store_true",
                        help="count with cachegrind's branch simulation: mispredicted branches per byte too")
    args = parser.parse_args(argv)
    bench_callgrind(args.encodings.split(","), [k for k in args.peers.split(",") if k and k != "bpe"], args.bytes,
                    args.top, args.jobs, args.branches, args.corpus)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
