"""Running code as on a machine without an optional extra (jinja2, numpy): a fresh Python
process where importing that module fails, for the tests that check bpe still works there
and says what to install."""

import subprocess
import sys


def run_without(module: str, code: str) -> str:
    """The standard output of ``code`` run in a new interpreter where ``import module``
    fails; the run itself must succeed."""
    out = subprocess.run([sys.executable, "-c", f"import sys; sys.modules[{module!r}] = None\n{code}"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout
