"""The README's Python examples run as written (in a scratch directory)."""

import os
import re

import pytest

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "README.md")


def test_api_tour_runs(tmp_path, monkeypatch):
    if not os.path.exists(README):
        pytest.fail(f"README.md not found at {README}")
    with open(README, encoding="utf-8") as f:
        blocks = re.findall(r"```python\n(.*?)```", f.read(), flags=re.S)
    assert blocks, "the README has no python example"
    monkeypatch.chdir(tmp_path)
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})
    assert (tmp_path / "my.bpe").exists()
