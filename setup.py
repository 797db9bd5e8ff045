"""Builds the whole-scene engine's inner loops (``bridge/core/_loops.py``, Cython's pure-Python mode) into
a C extension; everything else is declared in ``pyproject.toml``.

Where no C compiler (or no Python headers) is found, the build goes on without the extension, saying so:
the package then runs the same loops as plain Python (slower, same answers; the bridge logs a warning).
With ``SIGHTLINE_REQUIRE_COMPILED`` set (the release's wheels), a failed compile fails the build.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

LOOPS_SOURCE = "bridge/core/_loops.py"


class OptionalBuildExt(build_ext):
    """``build_ext`` that never fails the install: the loops run uncompiled where they cannot be built."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # no compiler at all (e.g. MSVC missing on Windows): DistutilsPlatformError
            self._skipped(exc)

    def build_extension(self, ext: Extension) -> None:
        if self.compiler.compiler_type == "unix":
            # The error bounds assume each product rounded on its own: no fused multiply-add (arm64 has
            # them in its baseline, and GCC and Clang contract by default). MSVC does not contract.
            ext.extra_compile_args = [*ext.extra_compile_args, "-ffp-contract=off"]
        try:
            super().build_extension(ext)
        except Exception as exc:  # the compiler failed: no Python headers, say
            self._skipped(exc)
            return
        # Beside the source, the digest of what was compiled: an editable install (its extension is
        # copied beside the source) whose _loops.py changed since — a pull, a merge — is told to rebuild
        # (bridge.core.meetings warns). Elsewhere the installed extension has no digest beside it.
        source = Path(__file__).parent / LOOPS_SOURCE
        digest = hashlib.sha256(source.read_bytes()).hexdigest()
        source.with_name("_loops.sha256").write_text(digest + "\n")

    @staticmethod
    def _skipped(exc: Exception) -> None:
        if os.environ.get("SIGHTLINE_REQUIRE_COMPILED"):  # building release wheels: no plain-Python loops
            raise exc
        print(
            f"WARNING: the engine's loops were not compiled ({type(exc).__name__}: {exc}); Sightline will run "
            "them as plain Python, with the same answers but many times slower. Install a C compiler and "
            "Python's headers (Debian: apt install gcc python3-dev) and reinstall for full speed.",
            file=sys.stderr,
        )


setup(
    ext_modules=cythonize(
        [Extension("bridge.core._loops", [LOOPS_SOURCE])],
        compiler_directives={"language_level": 3},
    ),
    cmdclass={"build_ext": OptionalBuildExt},
)
