"""bpe._backend: without its compiled core, bpe warns once at import, saying why and what to
do, unless the pure-Python backend was asked for (BPE_PURE_PYTHON=1, or an install made pure
on purpose, marked by bpe/PURE_INSTALL)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import bpe

PACKAGE = os.path.dirname(bpe.__file__)


def _copy(tmp_path, with_sources: bool, marker: bool = False):
    """The package's Python files (no compiled modules) in tmp_path/bpe."""
    def skip(folder, names):
        return [n for n in names if n.endswith((".so", ".pyd", ".c")) or n == "__pycache__"
                or (not with_sources and n.endswith((".pyx", ".pxi", ".pxd", ".h")))]

    shutil.copytree(PACKAGE, tmp_path / "bpe", ignore=skip)
    if with_sources and not (tmp_path / "bpe" / "_core.pyx").exists():  # (an installed package has none)
        (tmp_path / "bpe" / "_core.pyx").write_text("# the core's source, as in a repository\n")
    if marker:
        (tmp_path / "bpe" / "PURE_INSTALL").write_text("on purpose\n")
    return tmp_path


def _import(folder, **env):
    code = "import warnings, bpe; print(bpe.backend, bpe.get_encoding('r50k_base').encode('hi there'))"
    run_env = {k: v for k, v in os.environ.items() if k not in ("BPE_PURE_PYTHON", "PYTHONPATH")}
    run_env.update(env, PYTHONPATH=str(folder))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=run_env, cwd=folder)


def test_the_source_tree_without_its_core_warns_and_says_what_to_do(tmp_path):
    out = _import(_copy(tmp_path, with_sources=True))
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("python [")
    assert out.stderr.count("RuntimeWarning") == 1
    assert "source tree" in out.stderr and "build_ext --inplace" in out.stderr and "BPE_PURE_PYTHON=1" in out.stderr


def test_an_install_without_its_core_warns(tmp_path):
    out = _import(_copy(tmp_path, with_sources=False))
    assert out.returncode == 0, out.stderr
    assert "no compiled module bpe._core" in out.stderr and "C compiler" in out.stderr


def test_the_pure_backend_asked_for_does_not_warn(tmp_path):
    for folder, env in ((_copy(tmp_path / "a", with_sources=False, marker=True), {}),
                        (_copy(tmp_path / "b", with_sources=True), {"BPE_PURE_PYTHON": "1"})):
        out = _import(folder, **env)
        assert out.returncode == 0 and out.stdout.startswith("python [") and "Warning" not in out.stderr, out.stderr
