"""Installs the neuroc Python package with libneuroc bundled into it.

Where the C library comes from (see docs/python.md):
  NEUROC_BUILD_DIR=<a CMake build of neuroc>  `cmake --install` of that build
                     into a temporary prefix; its libneuroc.so (and backend
                     modules, lib/neuroc/*.so) are copied into neuroc/_lib/
  otherwise          the repository this folder sits in (..) is configured and
                     built with CMake into python/build/cmake (Release, no
                     tests; NEUROC_BUILD_JOBS jobs, default 2), then installed as above
  NEUROC_BUNDLE=0    nothing is bundled: at import the package uses
                     $NEUROC_LIBRARY or the system's libneuroc (ldconfig, pkg-config)

Offline over Debian's python3 (setuptools and wheel from Debian):
  python3 -m venv --system-site-packages venv && venv/bin/pip install ./python
(no pyproject.toml on purpose: pip then builds with the setuptools it sees
instead of downloading one; newer pips: add --no-build-isolation).
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _run(cmd):
    print("neuroc setup:", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def _say(msg):
    """What the setup is doing, on the terminal: pip shows a build's own
    output only with -v (or when it fails), and compiling the library takes
    a while, so the terminal is written to directly (nothing without one)."""
    print("neuroc setup:", msg, flush=True)  # pip -v, logs
    try:
        with open("/dev/tty", "w") as tty:
            tty.write("neuroc setup: %s\n" % msg)
    except OSError:
        pass


def _cmake_build():
    """A fresh Release build of the repository around this folder."""
    if not os.path.exists(os.path.join(ROOT, "CMakeLists.txt")) or not shutil.which("cmake"):
        sys.exit("neuroc setup: cannot build libneuroc: no CMakeLists.txt in %s or no cmake; set "
                 "NEUROC_BUILD_DIR to a build of neuroc, or NEUROC_BUNDLE=0 to use an installed library" % ROOT)
    build = os.path.join(HERE, "build", "cmake")
    jobs = os.environ.get("NEUROC_BUILD_JOBS", "2")
    _say("compiling the C library libneuroc with CMake into %s (Release, %s jobs; the first build takes a "
         "while: set NEUROC_BUILD_DIR to an existing build to skip it)" % (build, jobs))
    _run(["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DNEUROC_TESTS=OFF"])
    _run(["cmake", "--build", build, "-j", jobs])
    return build


def bundle_library(dest):
    if os.environ.get("NEUROC_BUNDLE", "1") == "0":
        return
    build = os.environ.get("NEUROC_BUILD_DIR") or _cmake_build()
    _say("bundling libneuroc from %s into the package" % build)
    prefix = tempfile.mkdtemp(prefix="neuroc-install-")
    try:
        # the project's own install rules: the library, its SONAME and its modules
        _run(["cmake", "--install", build, "--prefix", prefix])
        libs = glob.glob(os.path.join(prefix, "lib*", "libneuroc.so.*")) + \
            glob.glob(os.path.join(prefix, "lib", "*", "libneuroc.so.*"))
        if not libs:
            sys.exit("neuroc setup: cmake --install of %s gave no libneuroc.so" % build)
        libdir = os.path.dirname(libs[0])
        soname = min((os.path.basename(p) for p in libs), key=len)  # libneuroc.so.0
        os.makedirs(dest, exist_ok=True)
        shutil.copy(os.path.realpath(os.path.join(libdir, soname)), os.path.join(dest, soname))
        modules = [p for p in glob.glob(os.path.join(libdir, "neuroc", "*.so")) if "mpi" not in os.path.basename(p)]
        if modules:  # backend modules (cuda), found by the library in neuroc/ beside itself
            os.makedirs(os.path.join(dest, "neuroc"), exist_ok=True)
            for m in modules:
                shutil.copy(m, os.path.join(dest, "neuroc", os.path.basename(m)))
    finally:
        shutil.rmtree(prefix, ignore_errors=True)


class BuildPy(build_py):
    def run(self):
        super().run()
        bundle_library(os.path.join(self.build_lib, "neuroc", "_lib"))


class BinaryDistribution(Distribution):
    """The wheel holds a shared library: tag it for this platform."""

    def has_ext_modules(self):
        return os.environ.get("NEUROC_BUNDLE", "1") != "0"


setup(
    name="neuroc",
    version="0.1.0",
    description="Convert trained ANNs (ONNX, PyTorch) into spiking neural networks and run them (bindings of libneuroc)",
    packages=["neuroc"],
    python_requires=">=3.8",
    install_requires=["numpy"],
    extras_require={"torch": ["torch"], "plot": ["matplotlib"], "progress": ["tqdm"]},
    cmdclass={"build_py": BuildPy},
    distclass=BinaryDistribution,
    zip_safe=False,
)
