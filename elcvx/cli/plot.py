"""The plots of ``elcvx profile --plot``: the profile curve and the confidence sequences over ``t``,
each written to a temporary file renamed into place (a failed run leaves no partial file)."""

from __future__ import annotations

import math
import os
import tempfile

from .report import CannotWrite, UsageError, _n
from ..errors import _require


def require_matplotlib():
    """matplotlib with the Agg backend, or MissingDependencyError naming the ``plot`` extra."""
    mpl = _require("matplotlib", "plot", "elcvx profile --plot")
    mpl.use("Agg", force=True)
    return mpl


def draw_profile(path, log, est, ci, v, statistic, level):
    """Draw the profile curve to a temporary file beside ``path``, then rename it into place."""
    import numpy as np

    require_matplotlib()
    from matplotlib.figure import Figure

    q = ci.quantile
    stat = np.where(np.isfinite(statistic), statistic, np.nan)
    fig = Figure(figsize=(7, 4.5), dpi=120, layout="constrained")
    ax = fig.add_subplot()
    ax.axvspan(ci.low, ci.high, color="tab:blue", alpha=0.12,
               label=f"{100 * level:g}% interval [{ci.low:.4f}, {ci.high:.4f}]")
    ax.plot(v, stat, color="tab:blue", lw=2, label=r"$2\,(L_{\mathrm{mle}} - L(v))$")
    if math.isfinite(q):
        ax.axhline(q, color="tab:red", ls="--", lw=1.2,
                   label=f"threshold q = {q:.3f} ({ci.calibration})")
    for x in (ci.low, ci.high):
        ax.axvline(x, color="tab:blue", ls=":", lw=1)
    ax.plot([est.value], [0.0], marker="o", ms=8, color="black", ls="none", clip_on=False,
            zorder=5, label=f"EL estimate {est.value:.4f}")
    finite = stat[np.isfinite(stat)]
    top = float(finite.max()) if finite.size else 1.0
    if math.isfinite(q):
        ax.set_ylim(0, min(max(2.5 * q, 1.0), max(top, q) * 1.1))
    else:
        ax.set_ylim(0, max(top * 1.1, 1.0))
    ax.set_xlim(v.min(), v.max())
    ax.set_xlabel("value v of the target policy")
    ax.set_ylabel("profile likelihood-ratio statistic")
    ax.set_title(f"Profile likelihood ratio, {os.path.basename(log.path)} (N = {_n(log.sample.n)})")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper center", fontsize=9, framealpha=0.9)
    _save(fig, path)


def draw_sequence(path, log, level, args):
    """``profile --plot FILE --sequence``: the sequences over t beside EL at each t, to FILE-sequence."""
    from . import sequence_plot as _sequence_plot
    from ..sequences import betting_sequence, ddrm_sequence

    s = log.sample
    if s.counts is not None:
        raise UsageError("--sequence needs one row per example in log order; this log has counts")
    from matplotlib.figure import Figure

    seqs = {name: fn(s.w, s.r, confidence_level=level, rmin=s.rmin, rmax=s.rmax)
            for name, fn in (("betting CS", betting_sequence), ("DDRM CS", ddrm_sequence))}
    el = _sequence_plot.el_looks(s, s.n_rows, confidence_level=level,
                                 calibration=args.calibration, method=args.method)
    fig = Figure(figsize=(7, 4.5), dpi=120, layout="constrained")
    _sequence_plot.draw(fig.add_subplot(), seqs, el, title=f"{100 * level:g}% bounds over t, "
                        f"{os.path.basename(log.path)} (N = {_n(s.n)})")
    stem, ext = os.path.splitext(path)
    out = f"{stem}-sequence{ext}"
    _save(fig, out)
    return out


def _save(fig, path):
    """Write ``fig`` to a temporary file beside ``path``, then rename it into place."""
    directory, name = os.path.split(path)
    ext = os.path.splitext(name)[1].lower()
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=ext, dir=directory)
    except OSError as exc:
        raise CannotWrite(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            fig.savefig(f, format=ext[1:])
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes it private; give it a new file's mode
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise CannotWrite(f"cannot write {path}: {exc.strerror or exc}") from None
        raise

