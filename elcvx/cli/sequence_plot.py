"""The companion plot of ``elcvx profile --sequence`` and of the sequences study: the confidence
sequences' bounds over ``t`` beside the EL interval computed at a few ``t``.

The problem it shows: the EL interval is valid for one look at a fixed ``N``; the sequences hold
at every ``t`` at once and so are wider. Drawing both over ``t`` (log scale) shows the price of
looking at any time, and where the EL interval, looked at repeatedly, strays.
"""

from __future__ import annotations

import numpy as np

from ..interval import interval
from ..sample import Sample

#: Times at which the EL interval is drawn: about 30, log-spaced from 10 to N.
EL_LOOKS = 30


def el_looks(sample: Sample, n: int, *, confidence_level: float, calibration: str = "chi2",
             method: str = "auto"):
    """``(t, low, high)``: the EL interval of the first ``t`` rows at log-spaced ``t`` up to ``n``."""
    t = np.unique(np.round(np.geomspace(min(10, n), n, EL_LOOKS)).astype(int))
    lows, highs = [], []
    for k in t:
        part = Sample(sample.w[:k], sample.r[:k], wmin=sample.wmin, wmax=sample.wmax,
                      rmin=sample.rmin, rmax=sample.rmax)
        ci = interval(part.compress(), confidence_level=confidence_level,
                      calibration=calibration, method=method)
        lows.append(ci.low)
        highs.append(ci.high)
    return t, np.array(lows), np.array(highs)


def draw(ax, sequences, el, *, truth=None, title=""):
    """Draw each sequence's bounds (``{label: SequenceResult}``) and EL's ``(t, low, high)``."""
    colours = {"betting": "tab:blue", "ddrm": "tab:green"}
    for label, res in sequences.items():
        colour = colours.get(res.method, "tab:purple")
        ax.fill_between(res.t, res.low, res.high, color=colour, alpha=0.12, step="post")
        ax.plot(res.t, res.low, color=colour, lw=1.4, label=label, drawstyle="steps-post")
        ax.plot(res.t, res.high, color=colour, lw=1.4, drawstyle="steps-post")
    t, low, high = el
    ax.vlines(t, low, high, color="tab:red", lw=1.6, label="EL interval at t (one look each)")
    ax.plot(t, low, "_", color="tab:red", ms=6)
    ax.plot(t, high, "_", color="tab:red", ms=6)
    if truth is not None:
        ax.axhline(truth, color="black", ls="--", lw=1, label=f"true value {truth:.4g}")
    ax.set_xscale("log")
    ax.set_xlabel("examples seen, t")
    ax.set_ylabel("bounds on the value")
    ax.grid(alpha=0.3)
    if title:
        ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="best")
