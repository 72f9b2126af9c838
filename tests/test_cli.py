"""The command line: the demo (the README's main job) and encode/decode/train."""

import json
import subprocess
import sys

import bpe
from bpe import cli
from conftest import read_text


def test_demo_runs_offline_and_compares(capsys):
    assert cli.main(["demo", "--vocab-size", "600"]) == 0
    out = capsys.readouterr().out
    assert "trained vocab_size=600" in out
    for label in ("demo", "o200k_base", "cl100k_base"):
        line = next(l for l in out.splitlines() if l.startswith(label + " "))
        assert line.endswith("ok"), line


def test_python_dash_m_entry_point():
    proc = subprocess.run([sys.executable, "-m", "bpe", "encode", "cl100k_base", "hello world"],
                          capture_output=True, text=True, check=True)
    assert proc.stdout.split() == [str(i) for i in bpe.get_encoding("cl100k_base").encode("hello world")]


def test_encode_decode_train(tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text(read_text("austen.txt"), encoding="utf-8")
    out = tmp_path / "tok.bpe"
    assert cli.main(["train", str(corpus), "--vocab-size", "280", "--out", str(out), "--special", "<|e|>", "--min-frequency", "1"]) == 0
    tok = bpe.Tokenizer.load(out)
    assert tok.n_vocab == 280 and tok.special_tokens == {"<|e|>": 279}
    capsys.readouterr()
    assert cli.main(["encode", str(out), "two three", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == tok.encode("two three")
    assert cli.main(["decode", str(out)] + [str(i) for i in tok.encode("two three")]) == 0
    assert capsys.readouterr().out == "two three\n"


def test_errors_are_reported_not_raised(capsys):
    assert cli.main(["encode", "no-such-encoding", "x"]) == 2
    assert "bpe: error:" in capsys.readouterr().err
