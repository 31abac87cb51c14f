"""`mblint` and `python -m mblint`: replace this process with the bundled binary."""
import os
import sys

from mblint import binary_path


def main() -> None:
    binary = binary_path()
    # The process becomes mblint: its exit code, signals and stdio are mblint's.
    os.execv(binary, [binary, *sys.argv[1:]])


if __name__ == "__main__":
    main()
