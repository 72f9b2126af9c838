"""Build script: cythonizes the compiled core (bpe/_scanner.pyx, bpe/_core.pyx, bpe/_train.pyx).

Set BPE_DEBUG_BUILD=1 to turn bounds and wraparound checks back on (and to build without
the word-at-a-time reads of short byte strings, for memory checkers).  Set BPE_SANITIZE=1 to
build with AddressSanitizer and UndefinedBehaviorSanitizer (gcc or clang; the interpreter
must preload the sanitizer runtime: see .ci/sanitize, which fuzzes and tests such a build);
that build also leaves out the SSE2 loops (BPE_NO_SIMD) and the 128-bit multiply of the hash
(BPE_NO_INT128), so the checks run over the portable code that machines without them get,
while the other builds test the fast code.

Without Cython or a working C compiler the package still installs, on the pure-Python backend,
with a loud message saying so (and bpe warns at import that its core is missing).  Set
BPE_PURE_PYTHON=1 when building to make a pure-Python install on purpose: no compiler is
tried, and bpe then uses the pure backend without a warning.
"""

import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

DEBUG = os.environ.get("BPE_DEBUG_BUILD") == "1"
SANITIZE = os.environ.get("BPE_SANITIZE") == "1"
PURE = os.environ.get("BPE_PURE_PYTHON") == "1"

DIRECTIVES = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": True,
    "embedsignature": True,
}


def extensions():
    from Cython.Build import cythonize

    compile_args = ["-O0", "-g"] if DEBUG else ["-O3"]
    # release builds on Linux lose their debug info (Python's own flags add -g: 3 MB of it
    # otherwise) and their symbol table (the exported init functions stay in the dynamic
    # symbols Python loads them by); profile a build made with BPE_DEBUG_BUILD=1
    link_args = ["-Wl,--strip-all"] if not DEBUG and sys.platform.startswith("linux") else []
    if SANITIZE:  # (no word reads past a buffer's end there: the sanitizer would rightly flag them)
        compile_args = ["-O1", "-g", "-fno-omit-frame-pointer", "-fsanitize=address,undefined",
                        "-fno-sanitize-recover=undefined"]
        link_args = ["-fsanitize=address,undefined"]
    exts = [
        Extension(f"bpe.{name}", [f"bpe/{name}.pyx"], include_dirs=["bpe"], extra_compile_args=compile_args,
                  extra_link_args=link_args,
                  define_macros=([("BPE_NO_OVERREAD", "1")] if DEBUG or SANITIZE else [])
                  + ([("BPE_NO_SIMD", "1"), ("BPE_NO_INT128", "1")] if SANITIZE else []))
        for name in ("_scanner", "_core", "_train")
    ]
    return cythonize(exts, compiler_directives=DIRECTIVES)


def _loud(reason: str) -> None:
    bar = "!" * 78
    sys.stderr.write(f"\n{bar}\nbpe: {reason}\nbpe: installing WITHOUT the compiled core: the pure-Python backend "
                     "works the same but is tens of times slower.\nbpe: to get the core, install a C compiler "
                     f"(and Cython >= 3) and reinstall; set BPE_PURE_PYTHON=1 to choose this on purpose.\n{bar}\n\n")


class BuildExtOrPure(build_ext):
    """build_ext that, when the compiler fails, leaves the package pure-Python (loudly)."""

    def run(self):
        from setuptools.errors import CCompilerError, CompileError, ExecError, LinkError, PlatformError

        try:
            super().run()
        except (CCompilerError, CompileError, ExecError, LinkError, PlatformError, OSError) as exc:
            _loud(f"the C extension could not be built ({type(exc).__name__}: {exc})")
            for ext in self.extensions:  # (a module built before the failure would be half a core)
                built = self.get_ext_fullpath(ext.name)
                if os.path.exists(built):
                    os.remove(built)


class BuildPyMarked(build_py):
    """build_py that marks a pure-Python install made on purpose (bpe/PURE_INSTALL)."""

    def run(self):
        super().run()
        if PURE:
            with open(os.path.join(self.build_lib, "bpe", "PURE_INSTALL"), "w") as f:
                f.write("built with BPE_PURE_PYTHON=1: the pure-Python backend, on purpose\n")


if PURE:
    ext_modules = []
else:
    try:
        ext_modules = extensions()
    except ImportError as exc:  # pragma: no cover - depends on the build machine
        _loud(f"Cython is missing ({exc})")
        ext_modules = []

setup(ext_modules=ext_modules, cmdclass={"build_ext": BuildExtOrPure, "build_py": BuildPyMarked})
