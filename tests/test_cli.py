"""The command line, driven as a user drives it: ``python -m bpe`` in a subprocess (run from a
temporary folder, so that it imports the installed package, not a source tree), checking
outputs, exit codes and every error message the commands promise; the demo in-process."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import bpe
from bpe import cli
from conftest import read_text
from optional_extras import run_without


def bpe_cli(*args, stdin: bytes = b"", cwd=None, env=None):
    """``(exit status, stdout, stderr)`` of ``python -m bpe ARGS``."""
    run_env = {**os.environ, "NO_COLOR": "1", **(env or {})}
    out = subprocess.run([sys.executable, "-m", "bpe", *map(str, args)], input=stdin, capture_output=True,
                         cwd=cwd or os.path.dirname(os.path.abspath(__file__)) + "/data", env=run_env, timeout=300)
    return out.returncode, out.stdout.decode("utf-8"), out.stderr.decode("utf-8")


O200K = bpe.get_encoding("o200k_base")
CL100K = bpe.get_encoding("cl100k_base")


def test_demo_runs_offline_and_compares(capsys):
    assert cli.main(["demo", "--vocab-size", "600"]) == 0
    out = capsys.readouterr().out
    assert "trained vocab_size=600" in out
    for label in ("demo", "o200k_base", "cl100k_base"):
        line = next(l for l in out.splitlines() if l.startswith(label + " "))
        assert line.endswith("ok"), line


def test_version():
    code, out, _ = bpe_cli("--version")
    assert code == 0 and out.strip() == f"bpe {bpe.__version__}"


def test_encode_from_arguments_files_and_stdin(tmp_path):
    text = "Hello wörld 日本 😀"
    (tmp_path / "t.txt").write_text(text, encoding="utf-8")
    want = " ".join(map(str, O200K.encode(text)))
    assert bpe_cli("encode", "Hello", "wörld", "日本", "😀")[1].strip() == want
    assert bpe_cli("encode", "-f", tmp_path / "t.txt")[1].strip() == want
    assert bpe_cli("encode", stdin=text.encode())[1].strip() == want
    assert bpe_cli("encode", "-f", "-", stdin=text.encode())[1].strip() == want
    code, out, _ = bpe_cli("encode", "-e", "cl100k_base", "--json", text)
    assert code == 0 and json.loads(out) == CL100K.encode(text)
    code, out, _ = bpe_cli("encode", "--lines", "--display", "hi there")
    assert out.splitlines() == [f"{i}\t{s}" for i, s in zip(O200K.encode("hi there"), ["hi", "Ġthere"])]


def test_decode_reads_what_encode_prints():
    text = "Offsets: São Paulo 🚀 and\ttabs\n"
    for flag in ([], ["--json"], ["--lines"]):
        _, printed, _ = bpe_cli("encode", *flag, "-f", "-", stdin=text.encode())
        code, out, err = bpe_cli("decode", "-n", stdin=printed.encode())
        assert code == 0 and out == text, (flag, err)
    ids = O200K.encode("abc")
    assert bpe_cli("decode", *ids)[1] == "abc\n"


def test_tokens_brackets_ids_partial_bytes_and_display():
    code, out, err = bpe_cli("tokens", "--ids", "Visit São")
    ids = O200K.encode("Visit São")
    assert code == 0 and out.strip() == "".join(f"[{O200K.decode([i])}|{i}]" for i in ids)
    assert f"{len(ids)} tokens" in err
    # a token over part of a character shows its bytes escaped
    _, out, _ = bpe_cli("tokens", "-e", "r50k_base", "日")
    assert out.strip() == "[\\xe6\\x97][\\xa5]"
    _, out, _ = bpe_cli("tokens", "--display", "a b")
    assert out.strip() == "[a][Ġb]"
    # in a terminal, colours (NO_COLOR and --plain turn them off): driven through the function
    assert "\x1b[" not in out


def test_compare_table_json_and_csv(tmp_path):
    en, es = tmp_path / "en.txt", tmp_path / "es.txt"
    en.write_text(read_text("austen.txt")[:5000], encoding="utf-8")
    es.write_text("¿Dónde está la biblioteca? Está al lado de la estación. " * 40, encoding="utf-8")
    code, out, _ = bpe_cli("compare", en, es, "--json")
    rows = json.loads(out)
    assert code == 0 and len(rows) == 6
    for row in rows:
        tok = bpe.get_encoding(row["tokenizer"])
        text = (en if row["file"] == str(en) else es).read_text("utf-8")
        assert row["tokens"] == len(tok.encode_ordinary(text))
        assert row["bytes_per_token"] == round(len(text.encode()) / row["tokens"], 3)
    for path in (en, es):
        assert min(r["overhead"] for r in rows if r["file"] == str(path)) == 0
    code, out, _ = bpe_cli("compare", es, "--csv", "--encodings", "o200k_base,gpt2")
    assert out.splitlines()[0].startswith("file,tokenizer,tokens") and len(out.splitlines()) == 3
    code, out, _ = bpe_cli("compare", en)
    assert code == 0 and "best" in out and "bytes/token" in out


def test_inspect_and_one_token():
    code, out, _ = bpe_cli("inspect", "-e", "cl100k_base")
    assert code == 0
    assert "100,277 ids" in out and "<|endoftext|> 100257" in out and "byte 32 is id 220" in out
    code, out, _ = bpe_cli("inspect", "-e", "cl100k_base", "--token", CL100K.encode("hello")[0])
    assert code == 0 and "b'hello'" in out and "merge tree:" in out
    # the tree's leaves are single bytes, and each node's parts spell it
    assert "b'h' 71" in out


def test_train_then_use_the_model(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text(read_text("austen.txt"), encoding="utf-8")
    out = tmp_path / "tok.bpe"
    code, _, err = bpe_cli("train", corpus, "--vocab-size", 280, "-o", out, "--special", "<|e|>",
                           "--min-frequency", 1)
    assert code == 0, err
    assert "trained n_vocab=280" in err and "bytes per token on the training text" in err
    assert "learned merges" in err and "\x1b" not in err and "\r" not in err  # (not a terminal: plain lines)
    tok = bpe.Tokenizer.load(out)
    assert tok.n_vocab == 280 and tok.special_tokens == {"<|e|>": 279}
    assert bpe_cli("encode", "-m", out, "--json", "two three")[1].strip() == json.dumps(tok.encode("two three"))
    code, _, err = bpe_cli("train", corpus, "--vocab-size", 300000, "-o", tmp_path / "big.bpe", "--quiet")
    assert code == 0 and err == ""


def test_curve_table_and_plot(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text(read_text("austen.txt"), encoding="utf-8")
    code, out, _ = bpe_cli("curve", corpus, "--max-vocab", 600, "--plot", tmp_path / "curve.png")
    assert code == 0
    rows = [line.split() for line in out.splitlines()[2:]]
    assert [r[0] for r in rows] == ["256", "512", "600"] and rows[0][1] == "1.00"
    assert float(rows[1][1]) < float(rows[2][1])
    png = (tmp_path / "curve.png").read_bytes()  # (matplotlib is a test dependency)
    assert png.startswith(b"\x89PNG") and len(png) > 5000


def test_curve_plot_without_matplotlib_says_what_to_install(tmp_path):
    out = run_without("matplotlib", f"""
from bpe import cli
import sys, io, contextlib
err = io.StringIO()
with contextlib.redirect_stderr(err):
    code = cli.main(["curve", {str(tmp_path / 'x.txt')!r}, "--plot", "x.png"])
print(code, err.getvalue())
""")
    assert out.startswith("1 ") and "pip install matplotlib" in out and "cybpe[plot]" in out


@pytest.mark.parametrize("args, stdin, phrase", [
    (["encode", "-e", "nope", "x"], b"", "unknown encoding 'nope'; the encodings are cl100k_base"),
    (["encode", "hi <|endoftext|>"], b"", "pass --allow-special"),
    (["encode"], b"ab\xffcd", "standard input is not valid UTF-8 at byte 2"),
    (["decode", "99999999"], b"", "ids of this tokenizer are 0 to 200,018"),
    (["decode", "12", "x7"], b"", "'x7' is not a token id"),
    (["encode", "-m", "/no/such/file.bpe", "x"], b"", "cannot read the file"),
    (["encode", "-m", "/no/such/ranks.tiktoken", "x"], b"", "pass --pattern"),
    (["train", "README", "--vocab-size", "100", "-o", "t.bpe"], b"", "pass at least 256"),
    (["train", "no-such.txt", "--vocab-size", "300", "-o", "t.bpe"], b"", "cannot read no-such.txt"),
    (["train", "austen.txt", "--vocab-size", "300", "-o", "/no/such/dir/t.bpe"], b"", "not a writable folder"),
    (["inspect", "-e", "r50k_base", "--token", "60000"], b"", "ids of this tokenizer are 0 to 50,256"),
])
def test_errors_are_one_line_naming_the_cli_flag(args, stdin, phrase):
    code, out, err = bpe_cli(*args, stdin=stdin)
    assert code == 1, (out, err)
    assert err.startswith("bpe: error: ") and phrase in err and err.count("\n") == 1, err
    assert "Traceback" not in err


def test_debug_shows_the_traceback_and_bad_usage_exits_2():
    code, _, err = bpe_cli("--debug", "encode", "-e", "nope", "x")
    assert code != 0 and "Traceback" in err
    code, _, err = bpe_cli("encode", "--no-such-flag")
    assert code == 2 and "usage:" in err


def test_debug_after_the_command_shows_the_traceback_too():
    code, _, err = bpe_cli("encode", "-e", "nope", "x", "--debug")
    assert code != 0 and "Traceback" in err and "UnknownEncodingError" in err


def test_a_dash_reads_standard_input():
    code, out, _ = bpe_cli("encode", "-", stdin=b"hello world")
    assert code == 0 and out.split() == [str(i) for i in O200K.encode("hello world")]
    code, out, _ = bpe_cli("decode", "-", stdin=out.encode())
    assert code == 0 and out == "hello world\n"


def test_tokens_summary_counts_in_words():
    code, _, err = bpe_cli("tokens", "a")
    assert code == 0 and err == "1 token, 1 character, 1 byte\n"
    code, _, err = bpe_cli("tokens", "héllo wörld")
    n = len(O200K.encode("héllo wörld"))
    assert err == f"{n} tokens, 11 characters, 13 bytes\n"


def test_train_names_the_file_and_byte_that_is_not_utf8(tmp_path):
    good = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "austen.txt"), "rb").read()
    bad = tmp_path / "bad.txt"
    bad.write_bytes(good + b"caf\xe9 ok\n")
    code, out, err = bpe_cli("train", bad, "--vocab-size", "300", "-o", tmp_path / "t.bpe", "--quiet")
    assert code == 1 and not (tmp_path / "t.bpe").exists()
    assert err == (f"bpe: error: {bad} is not valid UTF-8 at byte {len(good) + 3:,} (b'\\xe9 ok'); fix the file "
                   "or read it with --errors replace (bad bytes become U+FFFD)\n"), err
    code, out, err = bpe_cli("train", bad, "--vocab-size", "300", "-o", tmp_path / "t.bpe", "--quiet",
                             "--errors", "replace")
    assert code == 0 and (tmp_path / "t.bpe").exists()
    assert "\ufffd" in bpe.Tokenizer.load(tmp_path / "t.bpe").decode(
        bpe.Tokenizer.load(tmp_path / "t.bpe").encode("caf\ufffd"))


def test_errors_replace_reads_bad_utf8():
    code, out, _ = bpe_cli("encode", "--errors", "replace", stdin=b"ab\xffcd")
    assert code == 0 and out.split() == [str(i) for i in O200K.encode("ab\ufffdcd")]


def test_a_closed_pipe_ends_quietly(tmp_path):
    big = tmp_path / "big.txt"
    big.write_text("word " * 400_000, encoding="utf-8")
    shell = f"{sys.executable} -m bpe tokens -f {big} | head -c 10; echo \" status=${{PIPESTATUS[0]}}\""
    out = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"},
                         cwd=tmp_path, timeout=300)
    assert out.stdout.endswith(" status=0\n"), out
    assert "Error" not in out.stderr and "Traceback" not in out.stderr, out.stderr


def test_colours_in_a_terminal(monkeypatch, capsys):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert cli.main(["tokens", "ab cd"]) == 0
    out = capsys.readouterr().out
    assert out.count("\x1b[48;5;") == len(O200K.encode("ab cd")) and "[" not in out.replace("\x1b[", "")
