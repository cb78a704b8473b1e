"""argparse types shared by the ``elcvx`` command and its ``reproduce`` subcommands."""

from __future__ import annotations

import argparse


def positive_int(text):
    """argparse's type for counts (``--max-pairs``; ``elcvx reproduce``'s ``--jobs``, ...)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be >= 1")
    return value
