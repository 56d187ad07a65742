"""Builds the one compiled module, ``bytepair._engine``, from Cython (C++ mode).

The engine's C++ lives in ``src/bytepair/engine/*.hpp`` (header-only, one file per structure);
``_engine.pyx`` declares and wraps it. The native tests (tests/native) build those headers
alone with the same flags.
"""

import glob

from Cython.Build import cythonize
from setuptools import Extension, setup

# -Wall -Wextra: the engine's headers compile clean under them (tests/engine/test_native.py checks
# the headers alone); what remains in a build comes from Cython's generated code.
COMPILE_ARGS = ["-O3", "-std=c++17", "-Wall", "-Wextra"]

extension = Extension(
    "bytepair._engine",
    sources=["src/bytepair/_engine.pyx"],
    include_dirs=["src/bytepair"],
    depends=sorted(glob.glob("src/bytepair/engine/*.hpp") + glob.glob("src/bytepair/_*.pxi")),
    language="c++",
    extra_compile_args=COMPILE_ARGS,
)

setup(
    ext_modules=cythonize(
        [extension],
        language_level=3,
        compiler_directives={"boundscheck": False, "wraparound": False, "cdivision": True},
    )
)
