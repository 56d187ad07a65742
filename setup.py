"""Builds the one compiled module, ``bytepair._engine``, from Cython (C++ mode)."""

from Cython.Build import cythonize
from setuptools import Extension, setup

extension = Extension(
    "bytepair._engine",
    sources=["src/bytepair/_engine.pyx"],
    language="c++",
    extra_compile_args=["-O3", "-std=c++17"],
)

setup(
    ext_modules=cythonize(
        [extension],
        language_level=3,
        compiler_directives={"boundscheck": False, "wraparound": False, "cdivision": True},
    )
)
