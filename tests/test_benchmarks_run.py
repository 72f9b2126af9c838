"""The benchmark suite stays runnable (a smoke run of a few small sections; no timing is judged)."""

import os
import re
import subprocess
import sys

import pytest

from bpe import _backend

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def test_benchmark_suite_runs(tmp_path):
    # the smoke run imports the same bpe as this test process (in CI: the installed, compiled
    # package, not the source tree next to benchmarks/), from a scratch directory
    import bpe

    build = os.path.dirname(os.path.dirname(os.path.abspath(bpe.__file__)))
    run = ("import runpy, sys; sys.path[:0] = [%r]; sys.path.append(%r); "
           "runpy.run_module('benchmarks', run_name='__main__', alter_sys=True)" % (build, ROOT))
    env = dict(os.environ, BPE_SHARED_DATA=os.path.join(ROOT, "no-such-folder"))  # bundled sample only
    out = subprocess.run([sys.executable, "-c", run, "--quick", "--rounds", "1", "--only", "short,count,decode,scripts,split,batch,memory,regimes",
                          "--encodings", "cl100k_base"], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "corpora: bundled sample only" in out.stdout
    assert "| cl100k_base |" in out.stdout and "bpe count" in out.stdout
    assert "## Decode" in out.stdout and "bpe / fastest correct peer" in out.stdout
    assert "encode(text) with the default arguments" in out.stdout
    assert "(needs ../shared/data/corpora)" in out.stdout          # scripts: no corpora here
    assert "machine: sha256 2 threads / 1 thread" in out.stdout
    # regimes: cold, streaming, warm and hot rows per group, and the ratio to the fastest exact
    # peer (or "-" when no peer is installed); the file-only peers need the shared rank files
    assert "## Regimes" in out.stdout and "bpe / fastest exact peer" in out.stdout
    for regime in ("cold", "streaming", "warm", "hot"):
        assert re.search(r"\|\s+prose \|\s+%s \|" % regime, out.stdout), regime
    if sys.platform.startswith("linux"):
        assert "## Memory" in out.stdout and "encode_with_offsets |" in out.stdout
    # the first line names the backend the run chose, from the same build as this process's
    compiled = _backend.COMPILED is not None
    chosen = "cython" if compiled and os.environ.get("BPE_PURE_PYTHON") != "1" else "python"
    assert out.stdout.splitlines()[0].endswith(f"({chosen})")
    # split: the compiled scanner's table, or a note where there is none
    assert ("| bpe scanner | regex.findall |" if compiled else "(needs the compiled scanner)") in out.stdout


def _run_ab(tmp_path, *extra):
    """``python -m benchmarks.ab`` on this build twice, over the bundled sample, with ``extra``
    arguments (the test is skipped on the pure-Python backend)."""
    import bpe

    if bpe.backend != "cython":
        pytest.skip("benchmarks.ab times compiled builds (it forgets their caches between rounds)")
    build = os.path.dirname(os.path.dirname(os.path.abspath(bpe.__file__)))
    corpora = tmp_path / "corpora"
    corpora.mkdir(exist_ok=True)
    (corpora / "sample.txt").write_text(open(bpe.sample_path(), encoding="utf-8").read(), encoding="utf-8")
    env = dict(os.environ, BPE_SHARED_DATA=str(tmp_path))
    return subprocess.run([sys.executable, "-m", "benchmarks.ab", build, build, "--files", "sample.txt",
                           "--rounds", "1", "--encoding", "cl100k_base", *extra], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def test_ab_runs_on_two_builds(tmp_path):
    """``python -m benchmarks.ab`` compares two build folders (here: the same one twice), as a
    ratio of medians and per round."""
    out = _run_ab(tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "B/A" in out.stdout and "per round" in out.stdout


def test_ab_in_process_pairs_the_rounds_of_two_cores(tmp_path):
    """``--in-process`` loads both builds' cores in one process and reports B/A per round (here
    one build twice); builds whose scanners differ are refused, since both cores would run
    beside one of them."""
    for mode in ("cold", "warm", "streaming"):
        out = _run_ab(tmp_path, "--in-process", "--mode", mode)
        assert out.returncode == 0, out.stderr[-2000:]
        assert f"sample.txt {mode}, " in out.stdout and "B faster in" in out.stdout
    import bpe
    build = os.path.dirname(os.path.dirname(os.path.abspath(bpe.__file__)))
    other = tmp_path / "other" / "bpe"
    other.mkdir(parents=True)
    (other / "_scanner.pyx").write_text("# another scanner\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "benchmarks.ab", build, str(other.parent), "--in-process",
                          "--files", "sample.txt"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode != 0 and "scanners differ" in out.stderr


def test_ab_refuses_a_mode_it_would_not_time(tmp_path):
    """Without ``--in-process`` each round is a fresh process that times cold passes, so
    ``--mode warm`` or ``--mode streaming`` there is refused with what to add, not ignored."""
    for mode in ("warm", "streaming"):
        # (refused before any build is loaded: on either backend, with folders that hold none)
        out = subprocess.run([sys.executable, "-m", "benchmarks.ab", str(tmp_path), str(tmp_path), "--mode", mode],
                             cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert out.returncode != 0, out.stdout
        assert f"--mode {mode} is timed in one process: add --in-process" in out.stderr
        assert "B/A" not in out.stdout


def test_ab_streaming_encodes_whole_files(tmp_path):
    """``--mode streaming`` times the whole corpus files, where cold and warm take their first
    800 KB: here a file of about 900 KB."""
    import bpe

    text = open(bpe.sample_path(), encoding="utf-8").read()
    corpora = tmp_path / "corpora"
    corpora.mkdir()
    long = text * (900_000 // len(text) + 1)
    (corpora / "long.txt").write_text(long, encoding="utf-8")
    want = {"cold": len(long[:800_000].encode("utf-8")) / 1e6, "streaming": len(long.encode("utf-8")) / 1e6}
    for mode in ("cold", "streaming"):
        out = _run_ab(tmp_path, "--in-process", "--mode", mode, "--files", "long.txt")
        assert out.returncode == 0, out.stderr[-2000:]
        timed = float(out.stdout.split(f"long.txt {mode}, ")[1].split(" MB a round")[0])
        assert timed == pytest.approx(want[mode], abs=0.006), (mode, timed, want)


def test_ab_both_orders_combines_two_in_process_runs(tmp_path):
    """``--both-orders`` runs the in-process A/B with the builds in each place and prints the
    effect that both runs agree on; without ``--in-process`` it is refused."""
    out = _run_ab(tmp_path, "--in-process", "--both-orders")
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.count("B faster in") == 2
    firsts = [float(x.split()[0]) for x in out.stdout.split("B/A per round ")[1:]]
    line = out.stdout.strip().splitlines()[-1]
    assert line.startswith("both orders: B/A"), line
    effect = float(line.split("effect of B ")[1].split()[0])
    assert effect == pytest.approx((firsts[0] / firsts[1]) ** 0.5, abs=0.002)
    refused = _run_ab(tmp_path, "--both-orders")
    assert refused.returncode != 0 and "add --in-process" in refused.stderr


def _fake_build(folder, extra_id):
    """A folder holding a stand-in ``bpe`` package whose encoder gives one id per document:
    its length, plus ``extra_id``."""
    package = folder / "bpe"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        "class _Core:\n"
        "    def _forget_cached_pieces(self):\n"
        "        pass\n"
        "class _Encoding:\n"
        "    _core = _Core()\n"
        "    def encode_ordinary(self, text):\n"
        f"        return [len(text) + {extra_id}]\n"
        "def get_encoding(name):\n"
        "    return _Encoding()\n", encoding="utf-8")
    return str(folder)


def test_ab_refuses_builds_whose_ids_differ(tmp_path):
    """A faster build that gives other ids is no speed-up: benchmarks.ab compares a digest of
    each build's ids and stops when they differ."""
    corpora = tmp_path / "corpora"
    corpora.mkdir()
    (corpora / "sample.txt").write_text("some text to encode. " * 500, encoding="utf-8")
    env = dict(os.environ, BPE_SHARED_DATA=str(tmp_path))
    a, b = _fake_build(tmp_path / "a", 0), _fake_build(tmp_path / "b", 1)

    def ab(x, y):
        return subprocess.run([sys.executable, "-m", "benchmarks.ab", x, y, "--files", "sample.txt",
                               "--rounds", "1"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)

    same = ab(a, a)
    assert same.returncode == 0 and "B/A" in same.stdout, same.stderr[-2000:]
    differ = ab(a, b)
    assert differ.returncode != 0 and "different ids" in differ.stderr


def test_ab_with_peers_reports_the_ratio_to_tiktoken(tmp_path):
    """``--peers tiktoken`` times tiktoken between bpe's rounds in each process and compares
    bpe's speed relative to it; an unknown peer is refused by name."""
    pytest.importorskip("tiktoken")
    out = _run_ab(tmp_path, "--peers", "tiktoken")
    assert out.returncode == 0, out.stderr[-2000:]
    assert "bpe/tiktoken A" in out.stdout and "B/A" in out.stdout
    bad = _run_ab(tmp_path, "--peers", "no-such-peer")
    assert bad.returncode != 0 and "no-such-peer" in bad.stderr


def test_callgrind_section_reads_both_tools_totals(tmp_path):
    # benchmarks.callgrind reads the instruction total of callgrind's output and, with
    # --branches, cachegrind's branch events by the names its "events:" line gives them
    sys.path.insert(0, ROOT)
    try:
        from benchmarks.callgrind import totals
    finally:
        sys.path.remove(ROOT)
    callgrind = tmp_path / "callgrind.out"
    callgrind.write_text("version: 1\ncreator: callgrind-3.19.0\nevents: Ir\nfl=(1) a.c\nfn=(1) f\n16 5\n"
                         "totals: 123456\n")
    cachegrind = tmp_path / "cachegrind.out"
    cachegrind.write_text("desc: I1 cache: none\ncmd: python\nevents: Ir Bc Bcm Bi Bim\nfl=a.c\nfn=f\n"
                          "16 5 2 1 0 0\nsummary: 987654 4321 210 55 7\n")
    assert totals(str(callgrind)) == {"Ir": 123456}
    assert totals(str(cachegrind)) == {"Ir": 987654, "Bc": 4321, "Bcm": 210, "Bi": 55, "Bim": 7}
    (tmp_path / "cut.out").write_text("events: Ir\nfl=a.c\n16 5\n")
    assert totals(str(tmp_path / "cut.out")) is None


def test_prime_builds_the_signatures_on_text_with_few_pieces_to_merge(cython_backend):
    # benchmarks.run.prime leaves bpe with its pair signatures built even where its passes
    # merge too few pieces for the encoder's own threshold (the callgrind section's 400 KB of
    # Python code merge about 1,700 a pass), so that what is timed or counted runs the merge
    # loop with the split table, as the regimes' larger texts do
    sys.path.insert(0, ROOT)
    try:
        from benchmarks.run import prime
    finally:
        sys.path.remove(ROOT)
    import bpe

    enc = bpe.Tokenizer(bpe.get_encoding("cl100k_base").mergeable_ranks, pattern="cl100k_base")
    docs = [" zorblat quinxet vrumble"] * 3          # three pieces to merge, 20,000 needed
    assert enc._core._signatures_state() == "unbuilt"
    prime(enc, docs)
    assert enc._core._signatures_state() == "ready"
    assert enc._core._pieces_merged() < 100
    assert enc.encode_ordinary(docs[0]) == bpe.get_encoding("cl100k_base").encode_ordinary(docs[0])
