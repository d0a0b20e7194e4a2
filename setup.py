"""The hot modules compiled by mypyc wherever a C compiler is available, pure Python otherwise.

``pip install .`` compiles the hot modules of the referee, the SDK's requests and the replay
checks (referee/build.py's ``COMPILED_MODULES``) to C extensions with mypyc (the same typed source
that ``mypy --strict`` checks), in one group, into each package's ``_mypyc/``, and writes there
the digest of the sources they were built from: the packages load them only while their sources
match (referee/build.py). Without a working C compiler, or with ``GONGZHU_COMPILE=0``, it
installs pure Python. Either way it says which on stderr (``pip install -v`` shows it), and so
does ``python -m referee --version`` afterwards.
"""

import importlib.util
import os
import shutil
import sys
import tempfile
from pathlib import Path
from types import ModuleType

from setuptools import Extension, setup
from setuptools._distutils.ccompiler import new_compiler
from setuptools._distutils.errors import CCompilerError, DistutilsError
from setuptools._distutils.sysconfig import customize_compiler, get_python_inc
from setuptools.command.build_ext import build_ext
from setuptools.command.editable_wheel import editable_wheel

try:
    from mypyc.build import mypycify
except ImportError:  # a build without its build requirements (--no-build-isolation)
    mypycify = None


def load_build_module() -> ModuleType:
    """referee/build.py (standard library only), without importing the package itself."""
    spec = importlib.util.spec_from_file_location("referee_build", Path("referee", "build.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BUILD = load_build_module()
PACKAGES = ", ".join(BUILD.COMPILED_MODULES)


def say(message: str) -> None:
    print(f"gongzhu-arena: {message}", file=sys.stderr)


def c_compiler_error(build_dir: str) -> str | None:
    """Why no C extension can be built here, or None: builds a tiny one, including Python.h, with
    the compiler and flags that build_ext uses (``CC`` and the others from the environment)."""
    compiler = new_compiler()
    customize_compiler(compiler)
    source = Path(build_dir, "probe.c")
    source.write_text("#include <Python.h>\nint probe(void) { return Py_IsInitialized(); }\n")
    try:
        objects = compiler.compile(
            [str(source)], output_dir=build_dir, include_dirs=[get_python_inc()]
        )
        compiler.link_shared_object(objects, str(Path(build_dir, "probe.so")))
    except (CCompilerError, DistutilsError, OSError) as error:
        return str(error) or type(error).__name__
    return None


DEFERRED = Extension(f"referee.{BUILD.SUBDIR}.mypyc", sources=[])
"""Stands for mypyc's extensions until they are built: mypyc generates them (and their C) in
build_ext, not each time the build backend runs this file for metadata."""


class BuildExt(build_ext):
    """Builds mypyc's extensions, then writes beside them the digest of their sources."""

    def finalize_options(self) -> None:
        if self.distribution.ext_modules == [DEFERRED]:
            build_temp = self.get_finalized_command("build").build_temp
            self.distribution.ext_modules = compiled_extensions(build_temp)
        super().finalize_options()

    def run(self) -> None:
        root = Path(self.get_finalized_command("build_py").get_package_dir("referee")).parent
        targets = []
        for package in BUILD.COMPILED_MODULES:
            targets.append(BUILD.compiled_dir(package, Path(self.build_lib)))
            if self.inplace:  # an editable install: the extensions are copied beside the sources
                targets.append(BUILD.compiled_dir(package, root))
                targets[-1].mkdir(exist_ok=True)
        super().run()
        digests = BUILD.sources_digests(root)
        for target in targets:
            (target / BUILD.DIGEST_FILE).write_text(digests)


def compiled_extensions(build_dir: str) -> list[Extension]:
    """mypyc's extensions, in one group, each module's under its package's _mypyc/ (where
    referee/build.py looks)."""
    assert mypycify is not None
    modules = {f"{p}.{m}" for p, names in BUILD.COMPILED_MODULES.items() for m in names}
    paths = sorted(f"{name.replace('.', '/')}.py" for name in modules)
    extensions = mypycify(paths, opt_level="3", target_dir=build_dir)
    for extension in extensions:
        if extension.name in modules:  # the modules; their shared library is not
            package, module = extension.name.split(".")
            extension.name = f"{package}.{BUILD.SUBDIR}.{module}"
    return extensions


class EditableWheel(editable_wheel):
    """An editable install replaces the compiled modules that an earlier one left in the source
    tree, compiled or not this time."""

    def run(self) -> None:
        for package in BUILD.COMPILED_MODULES:
            shutil.rmtree(BUILD.compiled_dir(package, Path()), ignore_errors=True)
        super().run()


def main() -> None:
    # A fresh build directory each time: an extension left in ./build by an earlier build (of a
    # module since dropped from the list) would otherwise be installed too.
    build_base = tempfile.mkdtemp(prefix="gongzhu-build-")
    try:
        compiling = False
        if os.environ.get("GONGZHU_COMPILE") == "0":
            say(f"GONGZHU_COMPILE=0: {PACKAGES} are installed as pure Python")
        elif mypycify is None:
            say(f"mypyc is not installed: {PACKAGES} are installed as pure Python")
        elif (error := c_compiler_error(build_base)) is not None:
            say(f"no working C compiler ({error}): {PACKAGES} are installed as pure Python")
        else:
            say(f"{PACKAGES} are compiled with mypyc (GONGZHU_COMPILE=0 installs pure Python)")
            compiling = True
        setup(
            ext_modules=[DEFERRED] if compiling else [],
            cmdclass={"build_ext": BuildExt, "editable_wheel": EditableWheel},
            options={"build": {"build_base": build_base}},
        )
    finally:
        shutil.rmtree(build_base, ignore_errors=True)


main()
