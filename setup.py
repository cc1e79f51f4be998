"""Builds the extension with the project's own CMake build (target footprint_python) and
installs it with the pure-Python package. FOOTPRINT_BUILD_DIR reuses a configured build folder
(e.g. build/release) instead of configuring a new one under setuptools' build_temp."""

import os
import pathlib
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


def version():
    text = (ROOT / "CMakeLists.txt").read_text()
    return re.search(r"project\(footprint VERSION ([0-9.]+)", text).group(1)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = pathlib.Path(os.environ.get("FOOTPRINT_BUILD_DIR") or
                             pathlib.Path(self.build_temp).resolve() / "cmake")
        if not (build / "CMakeCache.txt").exists():
            subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), "-G", "Ninja",
                            "-DCMAKE_BUILD_TYPE=Release", "-DFOOTPRINT_TESTS=OFF",
                            "-DFOOTPRINT_BENCH=OFF", f"-DPython_EXECUTABLE={sys.executable}"],
                           check=True)
        subprocess.run(["cmake", "--build", str(build), "--target", "footprint_python"],
                       check=True)
        [built] = (build / "python" / "footprint").glob("_footprint*.so")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)


setup(
    version=version(),
    packages=["footprint", "footprint.bench"],
    package_dir={"": "python"},
    ext_modules=[Extension("footprint._footprint", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
)
