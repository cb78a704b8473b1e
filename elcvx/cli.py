"""The ``elcvx`` command line."""

from __future__ import annotations

import argparse
import sys

import numpy as np

from . import __version__
from .errors import ElcvxError


def _report(sample, *, title, confidence_level=0.95, calibration="chi2", method="auto", out=sys.stdout):
    """Print EL's estimate and interval beside IPS for a sample."""
    from .estimate import estimate
    from .interval import interval

    est = estimate(sample, method=method)
    ci = interval(sample, confidence_level=confidence_level, calibration=calibration, method=method)
    ips = sample.rmin + float(np.dot(sample.c, sample.w * sample.u)) / sample.n * (sample.rmax - sample.rmin)
    level = f"{100 * confidence_level:g}%"
    print(title, file=out)
    print(f"N = {sample.n:g}, weights in [{sample.wmin:g}, {sample.wmax:g}] "
          f"(observed {sample.w.min():g} to {sample.w.max():g}), rewards in [{sample.rmin:g}, {sample.rmax:g}]",
          file=out)
    print(f"{'method':<8}{'estimate':>10}   {level} interval ({calibration})", file=out)
    print(f"{'EL':<8}{est.value:>10.4f}   [{ci.low:.4f}, {ci.high:.4f}]", file=out)
    print(f"{'IPS':<8}{ips:>10.4f}", file=out)


def _demo(args):
    from .datasets import example_log, example_log_path

    _report(example_log(), title=f"elcvx {__version__}: the bundled example log ({example_log_path().name})")
    return 0


def build_parser():
    parser = argparse.ArgumentParser(prog="elcvx", description="Empirical likelihood for contextual bandits.")
    parser.add_argument("--version", action="version", version=f"elcvx {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="estimate and interval on the bundled example log")
    demo.set_defaults(func=_demo)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except ElcvxError as exc:
        print(f"elcvx: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
