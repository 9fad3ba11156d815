"""setup.py - builds libppqfmt.so and the ppqfmt binary with make (the C core
needs no Python) and puts them inside the package; pyproject.toml has the
rest. The wheel is platform-specific: it carries compiled code."""
import os
import shutil
import subprocess

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
# apart from the developer's build/, unless PPQFMT_BUILD_DIR names one (the tests: make test built it)
BUILD = os.environ.get("PPQFMT_BUILD_DIR", os.path.join("build", "python"))


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        # NODEPS: no test dependencies (venvs, npm); protoc-c and
        # libprotobuf-c-dev must be installed (README, "Install").
        subprocess.run(["make", "-C", HERE, "NODEPS=1", f"B={BUILD}",
                        f"{BUILD}/libppqfmt.so", f"{BUILD}/ppqfmt"], check=True)
        target = os.path.join(self.build_lib, "ppqfmt")
        os.makedirs(target, exist_ok=True)
        for name in ("libppqfmt.so", "ppqfmt"):
            shutil.copy2(os.path.join(HERE, BUILD, name), os.path.join(target, name))


class BinaryDistribution(Distribution):
    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithLibrary}, distclass=BinaryDistribution)
