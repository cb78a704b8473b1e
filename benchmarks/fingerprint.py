"""The numbers' fingerprint: one hash of every bit of the answers on 60 random logs.

A refactoring that claims "numbers unchanged" runs this before and after, on each kernel, and
compares the hashes (``python benchmarks/fingerprint.py``; ``ELCVX_KERNELS=numpy`` or
``numba`` chooses the kernels, as everywhere). The logs cover the estimate, both ends of the
interval (chi-square and F), the one-sided bound, the profile at three points and the
constrained estimate; with and without counts, finite and infinite ``wmax``, and on the fast
and the cvxpy path (status included, so a changed verdict changes the hash). ``--verbose``
prints each log's numbers to find the first that differs.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import struct
import sys

import numpy as np

import elcvx
from elcvx.constraints import MomentConstraint

LOGS = 60


def log(seed: int) -> tuple[elcvx.Sample, MomentConstraint]:
    """The ``seed``-th random log and a moment constraint it satisfies in expectation."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(8, 400))
    wmax = float(rng.choice([5.0, 20.0, 200.0]))
    w = rng.choice([0.0, 0.5, 1.0, 2.0, wmax], size=n, p=[0.3, 0.2, 0.2, 0.2, 0.1])
    w = np.where(rng.random(n) < 0.5, w, rng.uniform(0, wmax, n))
    r = rng.random(n).round(int(rng.integers(1, 4)))
    counts = rng.integers(1, 5, n).astype(float) if seed % 3 == 0 else None
    sample = elcvx.Sample(w, r, counts=counts, wmax=np.inf if seed % 7 == 0 else wmax)
    f = rng.random(n)
    return sample, MomentConstraint(f, target=float(f.mean()), atom_range=(0.0, 1.0))


def answers(seed: int) -> list:
    """The numbers and statuses of the ``seed``-th log, in a fixed order."""
    sample, constraint = log(seed)
    method = "cvxpy" if seed % 10 == 9 else "fast"
    out: list = []
    e = elcvx.estimate(sample, method=method)
    out += [e.value, *e.value_range, e.loglik, e.status]
    for calibration in ("chi2", "f"):
        i = elcvx.interval(sample, calibration=calibration, method=method)
        out += [i.low, i.high, i.status]
    g = elcvx.interval(sample, alternative="greater", calibration="chi2", method=method)
    out += [g.low, g.status]
    v = np.quantile(sample.r, [0.2, 0.5, 0.8])
    p = elcvx.profile(sample, v, method=method)
    out += list(np.asarray(p.statistic, float))
    c = elcvx.estimate(sample, constraints=constraint, method=method)
    out += [c.value, c.status]
    return out


def digest(values: list) -> bytes:
    """The bytes of ``values``: floats by their IEEE bits, the rest by their text."""
    parts = []
    for x in values:
        if isinstance(x, (float, np.floating)):
            parts.append(struct.pack("<d", float(x)))
        else:
            parts.append(str(x).encode())
    return b"\x00".join(parts)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", type=int, default=LOGS)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    whole = hashlib.sha256()
    for seed in range(args.logs):
        values = answers(seed)
        whole.update(digest(values))
        if args.verbose:
            print(seed, hashlib.sha256(digest(values)).hexdigest()[:12], values)
    kernels = os.environ.get("ELCVX_KERNELS", "auto")
    print(f"fingerprint ({args.logs} logs, ELCVX_KERNELS={kernels}): {whole.hexdigest()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
