"""__main__.py - the `ppqfmt` console script (and `python -m ppqfmt`): the
command line itself, the binary built with the package, with the same
arguments, messages and exit codes."""
import os
import sys


def main():
    binary = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ppqfmt")
    os.execv(binary, [binary] + sys.argv[1:])


if __name__ == "__main__":
    main()
