"""setup.py - builds libppqfmt.so and the ppqfmt binary with make (the C core
needs no Python), protobuf-c linked in statically, and puts them inside the
package; pyproject.toml has the rest. The wheel is platform-specific: it
carries compiled code, which needs only the C library (glibc) where it runs."""
import os
import shutil
import subprocess

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
# make's build folder: its own under build/, unless PPQFMT_BUILD_DIR names one
# (the tests: make test compiled the objects there already)
BUILD = os.environ.get("PPQFMT_BUILD_DIR", os.path.join("build", "pip"))


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        # NODEPS: no test dependencies (venvs, npm); protoc-c and
        # libprotobuf-c-dev must be installed (README, "Install").
        built = [f"{BUILD}/python/libppqfmt.so", f"{BUILD}/python/ppqfmt"]
        subprocess.run(["make", "-C", HERE, "NODEPS=1", f"B={BUILD}", *built], check=True)
        target = os.path.join(self.build_lib, "ppqfmt")
        os.makedirs(target, exist_ok=True)
        for path in built:
            shutil.copy2(os.path.join(HERE, path), os.path.join(target, os.path.basename(path)))


class BinaryDistribution(Distribution):
    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithLibrary}, distclass=BinaryDistribution)
