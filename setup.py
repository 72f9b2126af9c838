"""Build script: cythonizes the compiled core (bpe/_scanner.pyx, bpe/_core.pyx, bpe/_train.pyx).

Set BPE_DEBUG_BUILD=1 to turn bounds and wraparound checks back on (and to build without
the word-at-a-time reads of short byte strings, for memory checkers).  Set BPE_SANITIZE=1 to
build with AddressSanitizer and UndefinedBehaviorSanitizer (gcc or clang; the interpreter
must preload the sanitizer runtime: see .ci/run, which fuzzes and tests such a build).  When Cython or a C
compiler is missing the package still installs and runs on the pure-Python backend only if
BPE_ALLOW_PURE_INSTALL=1 is set; otherwise the build fails loudly.
"""

import os

from setuptools import Extension, setup

DEBUG = os.environ.get("BPE_DEBUG_BUILD") == "1"
SANITIZE = os.environ.get("BPE_SANITIZE") == "1"

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
    link_args = []
    if SANITIZE:  # (no word reads past a buffer's end there: the sanitizer would rightly flag them)
        compile_args = ["-O1", "-g", "-fno-omit-frame-pointer", "-fsanitize=address,undefined",
                        "-fno-sanitize-recover=undefined"]
        link_args = ["-fsanitize=address,undefined"]
    exts = [
        Extension(f"bpe.{name}", [f"bpe/{name}.pyx"], include_dirs=["bpe"], extra_compile_args=compile_args,
                  extra_link_args=link_args,
                  define_macros=[("BPE_NO_OVERREAD", "1")] if DEBUG or SANITIZE else [])
        for name in ("_scanner", "_core", "_train")
    ]
    return cythonize(exts, compiler_directives=DIRECTIVES)


if os.environ.get("BPE_ALLOW_PURE_INSTALL") == "1":
    try:
        ext_modules = extensions()
    except Exception as exc:  # pragma: no cover - depends on the build machine
        print(f"bpe: building without the compiled core ({exc}); the pure-Python backend will be used")
        ext_modules = []
else:
    ext_modules = extensions()

setup(ext_modules=ext_modules)
