"""mblint, the linter for Megatron Bridge training launches: the bundled binary."""
import os


def binary_path() -> str:
    """The mblint binary this package bundles."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "mblint")
