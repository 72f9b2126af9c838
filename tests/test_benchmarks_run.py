"""The benchmark suite stays runnable (a smoke run of a few small sections; no timing is judged)."""

import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def test_benchmark_suite_runs():
    env = dict(os.environ, BPE_SHARED_DATA=os.path.join(ROOT, "no-such-folder"))  # bundled sample only
    out = subprocess.run([sys.executable, "-m", "benchmarks", "--quick", "--rounds", "1", "--only", "count,scripts,batch",
                          "--encodings", "cl100k_base"], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "corpora: bundled sample only" in out.stdout
    assert "| cl100k_base |" in out.stdout and "bpe count" in out.stdout
    assert "(needs ../shared/data/corpora)" in out.stdout          # scripts: no corpora here
    assert "machine: sha256 2 threads / 1 thread" in out.stdout
