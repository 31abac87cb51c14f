# The mblint wheel: the static mblint binary (tools/release.sh puts it at
# mblint/bin/mblint) and a console entry `mblint` that execs it. Built by
# tools/release.sh with `python3 -m build --wheel --no-isolation`; the version
# comes from CMake's project(VERSION) through MBLINT_VERSION.
import os

from setuptools import setup
from wheel.bdist_wheel import bdist_wheel

# The binary is linked with -static: it needs no glibc of the host, so the
# manylinux promise (runs on glibc >= 2.17) holds, and PyPI accepts the tag
# (it rejects plain linux_x86_64 wheels).
PLATFORM = os.environ.get("MBLINT_WHEEL_PLATFORM", "manylinux_2_17_x86_64.manylinux2014_x86_64")


class BinaryWheel(bdist_wheel):
    """A wheel that holds a native binary and no Python extension: py3-none-PLATFORM."""

    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self):
        return "py3", "none", PLATFORM


setup(
    name="mblint",
    version=os.environ["MBLINT_VERSION"],
    description="Lint Megatron Bridge / Megatron-LM / NeMo training launches before the job is submitted",
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    url="https://github.com/mblint/mblint",
    license="Apache-2.0",
    license_files=["LICENSE"],
    classifiers=["License :: OSI Approved :: Apache Software License"],
    packages=["mblint"],
    package_data={"mblint": ["bin/mblint"]},
    python_requires=">=3.8",
    entry_points={"console_scripts": ["mblint = mblint.__main__:main"]},
    cmdclass={"bdist_wheel": BinaryWheel},
    zip_safe=False,
)
