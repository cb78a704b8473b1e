"""The ``elcvx`` command whole: the library's commands (:mod:`elcvx.cli`) and the studies'
``elcvx reproduce ...`` (:mod:`elcvx.experiments.cli`).

The library never imports its studies; this module, the top layer of the package, puts the two
together. The console script ``elcvx`` and ``python -m elcvx`` both run :func:`main`.
"""

from __future__ import annotations

import sys

from .cli import build_parser as _library_parser
from .cli import main as _library_main
from .experiments.cli import add_reproduce_parser

#: The subcommands added to the library's: each registers itself on the sub-parser collection.
COMMANDS = (add_reproduce_parser,)


def build_parser():
    """The ``elcvx`` command's parser, the studies' subcommands included."""
    return _library_parser(COMMANDS)


def main(argv=None):
    """Run the ``elcvx`` command with ``argv`` (default ``sys.argv[1:]``); return the exit status."""
    return _library_main(argv, COMMANDS)


if __name__ == "__main__":
    sys.exit(main())
