"""The logged data: importance weights, rewards, optional counts, and their bounds."""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, cast, overload

import numpy as np

from . import _validation as iv
from .engines.rows import RowSource
from .errors import InvalidInputError

if TYPE_CHECKING:  # (annotations only)
    import pandas
    from numpy.typing import ArrayLike

#: :meth:`Sample.weight_check`'s rule: the mean weight is implausible when EL's likelihood-ratio
#: statistic of ``E[w] = 1`` exceeds ``WEIGHT_CHECK_Z**2`` (4 "standard errors") and the mean is
#: more than ``WEIGHT_CHECK_TOL`` from 1.
WEIGHT_CHECK_Z = 4.0
WEIGHT_CHECK_TOL = 0.05
#: With ``wmax = inf``, the estimate "depends on the unobserved weight" when its range over that
#: weight's reward is wider than this fraction of the reward range.
UNOBSERVED_TOL = 1e-3


@dataclass(frozen=True)
class WeightCheck:
    """The check of ``E[w] = 1`` on a sample's weights (:meth:`Sample.weight_check`).

    For every context, ``E_h[pi(a|x) / h(a|x)] = sum_a pi(a|x) = 1`` (when ``h`` gives every
    action of ``pi`` a positive probability), so a log whose weights average far from 1 was
    built from the wrong columns; its estimates would be confidently wrong.

    The rule: implausible when EL's likelihood-ratio statistic of ``E[w] = 1`` (``2 l*_mle``,
    the MLE's log-likelihood ratio, chi-square(1) for a correct log) exceeds ``4**2 = 16``
    (``p = 6.3e-5``, "4 standard errors") **and** ``|mean - 1| > 0.05``. The statistic, not
    ``(mean - 1) / se``, because it knows the weight bounds: a mean below 1 is expected in a
    small log where a rare, large weight (up to ``wmax``) has not been seen yet, and the
    statistic then stays small (with ``wmax = inf`` it is 0); the sample's standard error would
    call that implausible. The 0.05 keeps a huge log from being flagged for a harmless bias
    (e.g. probabilities rounded to a few digits).

    Attributes
    ----------
    mean, se : float
        The weights' mean ``sum c w / N`` and its standard error
        ``sqrt(sum c (w - mean)**2 / (N (N - 1)))`` (``nan`` when ``N <= 1``).
    n : float
        ``N``, the number of examples (sum of counts).
    n_rows : int
    statistic, pvalue : float
        EL's likelihood-ratio statistic of ``E[w] = 1`` given ``[wmin, wmax]`` and its
        chi-square(1) p-value.
    plausible : bool
        False when the rule above flags the mean.
    unobserved_wmass : float
        The importance-weighted mass the MLE puts on an unobserved extra atom: the EL
        estimate's range over that atom's reward, as a fraction of the reward range.
    depends_on_unobserved : bool
        ``wmax`` is infinite and ``unobserved_wmass > 1e-3``: the estimate depends on the reward
        of an unobserved, unbounded weight (give ``wmax`` or ``pmin``).
    message : str
        What a reader should know, or ``""``: the text of :class:`~elcvx.errors.WeightWarning`.
    """

    mean: float
    se: float
    n: float
    n_rows: int
    statistic: float
    pvalue: float
    plausible: bool
    unobserved_wmass: float
    depends_on_unobserved: bool
    message: str = ""

    def __bool__(self) -> bool:
        return self.plausible and not self.depends_on_unobserved


# The largest importance weight accepted: every formula stays finite in float64 up to it.
MAX_WEIGHT = 1e300


@dataclass(frozen=True, eq=False, init=False)
class RewardScale:
    """Mapping values between the user's reward scale ``[rmin, rmax]`` and the unit scale the
    solvers use (for anything with ``rmin`` and ``rmax``)."""

    if TYPE_CHECKING:  # (set by the subclasses; not dataclass fields)
        rmin: float
        rmax: float

    @overload
    def to_user(self, v: float) -> float: ...
    @overload
    def to_user(self, v: ArrayLike) -> float | np.ndarray: ...
    def to_user(self, v: ArrayLike) -> float | np.ndarray:
        """Map a value on the unit reward scale back to ``[rmin, rmax]`` (clipped to that range)."""
        if isinstance(v, float):  # (np.clip's operations on one float, without its calls)
            out = self.rmin + (self.rmax - self.rmin) * v
            out = self.rmin if out < self.rmin else out
            return float(self.rmax if out > self.rmax else out)
        out = self.rmin + (self.rmax - self.rmin) * np.asarray(v, dtype=float)
        out = np.clip(out, self.rmin, self.rmax)
        return float(out) if out.ndim == 0 else out

    @overload
    def to_unit(self, v: float) -> float: ...
    @overload
    def to_unit(self, v: ArrayLike) -> float | np.ndarray: ...
    def to_unit(self, v: ArrayLike) -> float | np.ndarray:
        """Map a value on ``[rmin, rmax]`` to the unit reward scale (not clipped)."""
        out = (np.asarray(v, dtype=float) - self.rmin) / (self.rmax - self.rmin)
        return float(out) if out.ndim == 0 else out


class Sample(RewardScale):
    """A validated, immutable off-policy sample.

    Parameters
    ----------
    w : array_like
        Importance weights ``w_n = pi(a_n|x_n) / h_n(a_n|x_n)``, in ``[wmin, wmax]`` and at
        most :data:`MAX_WEIGHT` (``1e300``).
    r : array_like
        Rewards, in ``[rmin, rmax]``.
    counts : array_like, optional
        Real, positive multiplicities: row ``n`` stands for ``counts[n]`` identical examples.
        Every computation treats ``Sample(w, r, counts=c)`` exactly as the uncompressed rows.
    wmin, wmax : float
        Bounds on the importance weight; ``wmin < 1 < wmax`` (else ``E[w] = 1`` is impossible).
        ``wmax`` defaults to ``np.inf``, as in every other entry point (:meth:`from_probs`,
        :mod:`elcvx.io`, the command line): always valid, but the interval is wider, and where
        the weights average below 1 the estimate depends on the reward of an unobserved,
        unbounded weight (:meth:`weight_check` says by how much). With per-action logging
        probabilities at least ``pmin``, ``wmax = 1/pmin`` (see :meth:`from_probs`).
    rmin, rmax : float
        Bounds on the reward. Rewards are rescaled to ``[0, 1]`` inside; every reported number is
        on this ``[rmin, rmax]`` scale.

    Attributes
    ----------
    n : int or float
        The number of examples: the number of rows (an ``int``) without counts, the sum of the
        counts (a ``float``; counts may be fractional) with them. ``n_rows`` is the rows stored.
    notes : tuple of str
        What the weight check found where the sample was built from a log's probabilities or
        columns (:meth:`from_probs`, :meth:`from_dataframe`, the readers of :mod:`elcvx.io`),
        also issued then as a :class:`~elcvx.errors.WeightWarning`; the results of
        :func:`elcvx.estimate`, :func:`elcvx.interval` and :func:`elcvx.evaluate` carry it in
        their ``notes``. Empty when the check found nothing, and for a sample built from weights
        by this constructor, which does not check them: weights given directly are what the
        package's own code passes around (:meth:`compress`, :meth:`with_rewards`, resamples,
        candidate policies while learning) and what simulations build on purpose with any mean,
        so a check of every construction would cost an EL solve each time and warn about
        samples that were meant to be as they are. Call :meth:`weight_check` to check them.

    Examples
    --------
    >>> import numpy as np
    >>> from elcvx import Sample
    >>> s = Sample([0.0, 2.0, 2.0, 0.5], [1.0, 0.0, 0.0, 1.0], wmax=10)
    >>> s.n, s.n_rows
    (4, 4)
    >>> c = s.compress()
    >>> c.n_rows, c.counts.tolist()
    (3, [1.0, 1.0, 2.0])
    >>> c  # a summary, not the rows
    Sample(N=4, rows=3, w: 0 to 2, mean 1.125 ± 0.52 (se), bounds [0, 10]; r: 0 to 1, bounds [0, 1])
    """

    w: np.ndarray
    r: np.ndarray
    counts: np.ndarray | None
    wmin: float
    wmax: float
    rmin: float
    rmax: float
    n: int | float = field(repr=False)

    def __init__(self, w: ArrayLike, r: ArrayLike, *, counts: ArrayLike | None = None,
                 wmin: float = 0.0, wmax: float = np.inf, rmin: float = 0.0,
                 rmax: float = 1.0) -> None:
        wmin = iv.finite_scalar("wmin", wmin)
        wmax = iv.finite_scalar("wmax", wmax, allow_inf=True)
        rmin = iv.finite_scalar("rmin", rmin)
        rmax = iv.finite_scalar("rmax", rmax)
        if wmin < 0:
            raise InvalidInputError(f"wmin={wmin!r} must be >= 0 (importance weights are ratios "
                                    "of probabilities)", field="wmin", value=wmin)
        if wmin >= 1:
            raise InvalidInputError(f"wmin={wmin!r} must be < 1, else E[w] = 1 is impossible",
                                    field="wmin", value=wmin)
        if not wmax > 1:
            raise InvalidInputError(f"wmax={wmax!r} must be > 1, else E[w] = 1 is impossible",
                                    field="wmax", value=wmax)
        if not rmin < rmax:
            raise InvalidInputError(f"rmin={rmin!r} must be < rmax={rmax!r}", field="rmin",
                                    value=rmin)
        if not np.isfinite(rmax - rmin):
            # Rewards are rescaled by rmax - rmin: an infinite range would make every u 0 or NaN.
            raise InvalidInputError(f"rmin={rmin!r}, rmax={rmax!r}: the range rmax - rmin must be "
                                    "finite (it overflows); rescale the rewards")
        w, w_span = iv.vector_and_range("w", w)
        r, r_span = iv.vector_and_range("r", r, n=w.size)
        # (A weight above wmax by rounding only, e.g. 1 / (eps / K) against K / eps, is wmax.)
        w, w_span = iv.onto_bounds(w, w_span, wmin, wmax)
        iv.within("w", w, wmin, wmax, hint=" (the weights must lie in [wmin, wmax])", span=w_span)
        iv.within("w", w, 0.0, MAX_WEIGHT, hint=(
            " : elcvx computes with N (1 + beta (w - 1)) and w^2, which overflow beyond it; a "
            "weight this large means a logging probability below 1e-300 (check the log)"),
            span=w_span)
        iv.within("r", r, rmin, rmax, hint=" (the rewards must lie in [rmin, rmax])", span=r_span)
        if counts is not None:
            counts, c_span = iv.vector_and_range("counts", counts, n=w.size)
            if not c_span[0] > 0:
                iv.first_bad("counts", counts, ~(counts > 0), "must be > 0", count=False)
            with np.errstate(over="ignore"):
                n = float(counts.sum())
            if not np.finfo(float).tiny <= n < np.inf:
                # Each row's probability is about counts / N: N must be finite and 1/N too.
                raise InvalidInputError(f"counts sum to N={n!r}; the number of examples must be "
                                        "finite and at least 2.2e-308 (rescale the counts)",
                                        field="counts", value=n)
        else:
            n = int(w.size)  # the number of rows, as an int: examples are counted, not measured
        for name, value in (("w", w), ("r", r), ("counts", counts), ("wmin", wmin), ("wmax", wmax),
                            ("rmin", rmin), ("rmax", rmax), ("n", n), ("_w_span", w_span)):
            object.__setattr__(self, name, value)

    #: The rows are held here (a :class:`RowSource`; a scanned log's are not).
    in_memory = True
    #: (See the class's attributes: the weight check's note where the sample was built, if any.)
    notes: tuple[str, ...] = ()

    def _record_notes(self, notes: Iterable[str]) -> Sample:
        """Keep ``notes`` (the weight check's, :func:`elcvx.checks.check_weights`) on this
        sample, which was just built and not yet handed out: the one write after construction.
        In place, not on a copy, so that the MLE the check may have cached (per sample object,
        :func:`elcvx.dispatch.mle`) is the one a later estimate finds."""
        object.__setattr__(self, "notes", tuple(notes))
        return self

    # -- derived views -------------------------------------------------------------------------
    @property
    def w_observed(self) -> tuple[float, float]:
        """The least and largest weight (found by the validation)."""
        low, high = getattr(self, "_w_span")  # (set by the validation; no field)
        return float(low), float(high)

    @property
    def n_rows(self) -> int:
        """Number of stored rows (``n`` counts the examples they stand for)."""
        return int(self.w.size)

    @property
    def c(self) -> np.ndarray:
        """The counts, or ones when the sample has none (read-only)."""
        return iv.frozen(np.ones_like(self.w)) if self.counts is None else self.counts

    @property
    def u(self) -> np.ndarray:
        """Rewards rescaled to ``[0, 1]``: ``(r - rmin) / (rmax - rmin)`` (read-only).

        In ``[0, 1]`` and finite for every accepted range: ``rmax - rmin`` is finite and, as
        ``rmin < rmax``, positive (subtraction does not underflow to 0).
        """
        if self.rmin == 0.0 and self.rmax == 1.0:
            return self.r
        return iv.frozen(np.clip((self.r - self.rmin) / (self.rmax - self.rmin), 0.0, 1.0))

    def with_rewards(self, r: ArrayLike) -> Sample:
        """The same weights, counts and bounds with other rewards (validated; the weights'
        :attr:`notes` kept, as they are about the weights)."""
        return Sample(self.w, r, counts=self.counts, wmin=self.wmin, wmax=self.wmax,
                      rmin=self.rmin, rmax=self.rmax)._record_notes(self.notes)

    # -- constructors ----------------------------------------------------------------------------
    @classmethod
    def from_probs(cls, target_prob: ArrayLike, logging_prob: ArrayLike, reward: ArrayLike, *,
                   pmin: float | None = None, wmax: float | None = None, wmin: float = 0.0,
                   counts: ArrayLike | None = None, rmin: float = 0.0,
                   rmax: float = 1.0, check: bool = True) -> Sample:
        """Build a sample from the probabilities of the logged actions.

        ``w = target_prob / logging_prob``. The weight bound comes from ``wmax`` if given, else
        from ``pmin`` (the smallest probability the logging policy gives any action, so that
        ``w <= 1/pmin``), else it is ``np.inf`` (always valid, but the interval is wider).

        The weights are checked (``check=True``, the default), as the readers of :mod:`elcvx.io`
        check a log's: probabilities claim ``E[w] = 1`` (see :class:`WeightCheck`), and two
        columns swapped, or a wrong one, break that claim and give confident wrong estimates.
        A failed check is issued once as a :class:`~elcvx.errors.WeightWarning` and kept in the
        sample's :attr:`notes`, which the results of :func:`elcvx.estimate` and
        :func:`elcvx.interval` carry. The check costs one pass over the weights on a log whose
        mean weight is plainly fine; otherwise it solves the EL MLE, which is cached per
        sample (:mod:`elcvx.cache`), so the estimate that follows does not solve it again
        (:func:`elcvx.checks.check_weights`). ``check=False`` skips it, for a caller that checks
        the weights itself.

        Examples
        --------
        >>> from elcvx import Sample
        >>> s = Sample.from_probs([1.0, 0.0], [0.5, 0.25], [1.0, 0.0], pmin=0.25)
        >>> s.w.tolist(), s.wmax
        ([2.0, 0.0], 4.0)
        """
        target = iv.vector("target_prob", target_prob)
        logging = iv.vector("logging_prob", logging_prob, n=target.size, length_of="target_prob")
        iv.within("target_prob", target, 0.0, 1.0)
        iv.first_bad("logging_prob", logging, ~((logging > 0) & (logging <= 1)),
                     "must lie in (0, 1]", count=False)
        if pmin is not None:
            pmin = iv.pmin(pmin)
            iv.first_bad("logging_prob", logging, logging < pmin * (1 - 1e-12),
                         f"is below pmin={pmin!r}", count=False)
        if wmax is None:
            wmax = np.inf if pmin is None else 1.0 / pmin
        w = target / logging
        if np.isfinite(wmax):
            # target/logging can exceed 1/pmin by a rounding error when logging == pmin.
            w = np.where((w > wmax) & (w <= wmax * (1 + 1e-12)), wmax, w)
        sample = cls(w, reward, counts=counts, wmin=wmin, wmax=wmax, rmin=rmin, rmax=rmax)
        if check:
            # (Imported at call time, as in the two methods below: the check solves the EL
            # MLE, a layer above this one; pyproject's contracts name these imports.)
            from .checks import check_weights

            check_weights(sample, "target_prob / logging_prob")
        return sample

    @staticmethod
    def from_dataframe(df: pandas.DataFrame, *, spec: object | None = None,
                       weight: str | None = None, target_prob: str | None = None,
                       logging_prob: str | None = None, reward: str | None = None,
                       cost: str | None = None, count: str | None = None,
                       wmin: float | None = None, wmax: float | None = None,
                       pmin: float | None = None, rmin: float | None = None,
                       rmax: float | None = None, cmin: float | None = None,
                       cmax: float | None = None, decimal: str | None = None) -> Sample:
        """A :class:`~elcvx.Sample` from the columns of a pandas DataFrame.

        Parameters
        ----------
        df : pandas.DataFrame
            One row per logged decision.
        spec : LogSpec, optional
            The columns and bounds (:class:`~elcvx.io.LogSpec` states each field and its
            default; a column left ``None`` is found by its default name).
        weight, target_prob, logging_prob, reward, cost, count, wmin, wmax, pmin, rmin, rmax
            The fields of :class:`~elcvx.io.LogSpec`, as keywords (``cmin``, ``cmax`` too):
            each one given sets that field of ``spec`` (an error if ``spec`` sets it too).
        decimal : str, optional
            The decimal mark of numbers held as text (``"0,25"`` with ``decimal=","``);
            numeric columns are taken as they are. (``spec``'s ``sep`` is refused: a DataFrame
            has no separator.)

        Returns
        -------
        Sample

        Raises
        ------
        InvalidInputError
            A missing column, or a value that is not a number, missing, or out of its range;
            the message names the column and the row (the line, for frames read by
            :func:`~elcvx.io.read_table`); the errors of :class:`~elcvx.io.LogSpec`.

        Examples
        --------
        >>> import pandas as pd
        >>> from elcvx import Sample
        >>> df = pd.DataFrame({"p_target": [1.0, 0.0], "p_log": [0.5, 0.25], "click": [1, 0]})
        >>> s = Sample.from_dataframe(df, target_prob="p_target", logging_prob="p_log",
        ...                           reward="click", pmin=0.25)
        >>> s.w.tolist(), s.wmax
        ([2.0, 0.0], 4.0)
        """
        given = dict(locals())  # (df, spec and the LogSpec fields, as given)
        # The readers (a layer above this one), imported at call time: elcvx.io.frames.
        from .io.frames import dataframe_sample

        return dataframe_sample(**given)

    def weight_check(self, *, method: str = "auto") -> WeightCheck:
        """Check ``E[w] = 1`` on this sample's weights: their mean with its standard error, and
        whether it is plausible (:class:`WeightCheck` gives the rule and why). Uses the EL MLE
        (method ``method``), kept for the estimates that follow:
        :func:`elcvx.checks.weight_check`, which documents it.

        Examples
        --------
        >>> import numpy as np
        >>> from elcvx import Sample
        >>> w = np.tile([0.0, 2.972], 5000)  # a wrong probability column: weights average 1.486
        >>> chk = Sample(w, np.tile([0.0, 1.0], 5000), wmax=10).weight_check()
        >>> round(chk.mean, 3), round(chk.se, 4), chk.plausible
        (1.486, 0.0149, False)
        """
        from .checks import weight_check  # (the EL MLE: a layer above this one)

        return weight_check(self, method)

    # -- compression -----------------------------------------------------------------------------
    def compress(self) -> Sample:
        """The equivalent sample of unique ``(w, r)`` rows, with summed counts.

        Logged weights and rewards usually take few distinct values (e.g. epsilon-greedy logs
        with binary rewards). Then each column is reduced to its sorted unique values, each row
        coded by its pair of positions, and the codes counted with ``bincount``: no sort of the
        rows, which is what makes ``np.unique(..., axis=0)`` slow on large logs (the
        documentation's performance page compares the two). With many distinct values, one
        ``lexsort`` of the rows groups them instead. Rows come out ordered by ``w``,
        then ``r``.
        """
        uw = np.unique(self.w)
        ur = np.unique(self.r)
        cells = uw.size * ur.size
        if cells <= 1 << 20:
            code = np.searchsorted(uw, self.w)
            code *= ur.size
            code += np.searchsorted(ur, self.r)
            counts = np.bincount(code, weights=self.counts, minlength=cells)
            keep = np.flatnonzero(counts)
            w, r, counts = uw[keep // ur.size], ur[keep % ur.size], counts[keep]
        else:
            order = np.lexsort((self.r, self.w))
            w, r = self.w[order], self.r[order]
            start = np.empty(w.size, dtype=bool)
            start[0] = True
            start[1:] = (w[1:] != w[:-1]) | (r[1:] != r[:-1])
            first = np.flatnonzero(start)
            counts = np.add.reduceat(self.c[order], first)
            w, r = w[first], r[first]
        return Sample(w, r, counts=counts, wmin=self.wmin, wmax=self.wmax, rmin=self.rmin,
                      rmax=self.rmax)._record_notes(self.notes)

    def __len__(self) -> int:
        return self.n_rows

    # -- summary and the check of E[w] = 1 -------------------------------------------------------
    def _weight_moments(self) -> tuple[float, float]:
        """The weights' mean and its standard error (both with the counts); two passes (the
        least and largest weight are the validation's)."""
        low, scale = self.w_observed
        if low == scale:  # exactly, not up to the rounding of the sums
            return float(self.w[0]), 0.0 if self.n > 1 else float("nan")
        # On the scale of the largest weight, so that weights up to 1.8e308 do not overflow.
        x, c = self.w / scale, self.counts
        m = float((x.sum() if c is None else np.dot(c, x)) / self.n)
        if not self.n > 1:
            return scale * m, float("nan")
        x -= m  # (in place: x is this function's own)
        ss = float(np.dot(x, x) if c is None else np.dot(c, x * x))
        se = float(np.sqrt(ss / (self.n - 1) / self.n))
        return scale * m, scale * se

    def __repr__(self) -> str:
        mean, se = self._weight_moments()
        n = f"{self.n:.0f}" if float(self.n).is_integer() and self.n < 1e16 else f"{self.n:.6g}"
        return (f"Sample(N={n}, rows={self.n_rows}, w: {self.w.min():.4g} to {self.w.max():.4g}, "
                f"mean {mean:.4g} ± {se:.2g} (se), bounds [{self.wmin:.4g}, {self.wmax:.4g}]; "
                f"r: {self.r.min():.4g} to {self.r.max():.4g}, bounds [{self.rmin:.4g}, "
                f"{self.rmax:.4g}])")

    # -- copy and pickle -------------------------------------------------------------------------
    def __setstate__(self, state: dict[str, Any]) -> None:
        # Unpickled and deep-copied arrays come back writable: make them read-only again.
        for name, value in state.items():
            if isinstance(value, np.ndarray) and value.flags.writeable:  # (w, r, counts)
                value = iv.frozen(value)
            object.__setattr__(self, name, value)


def notes_of(value: object) -> tuple[str, ...]:
    """The notes of what the estimators were given: a log's (:attr:`elcvx.io.Log.notes`, the
    weight check's among them) or a sample's (:attr:`Sample.notes`); ``()`` when it has none.
    The results that users read first (:class:`~elcvx.results.EstimateResult`,
    :class:`~elcvx.results.IntervalResult`, :class:`~elcvx.results.EvaluationResult`) carry
    them in their own ``notes``."""
    return tuple(getattr(value, "notes", None) or ())


def check_sample(value: object, scans: bool = False) -> Sample:
    """``value``, checked to be a :class:`Sample` (the estimators' first step); with ``scans``,
    a :class:`~elcvx.io.LogScan` too (a log evaluated chunk by chunk). A log read by
    :mod:`elcvx.io` (a :class:`~elcvx.io.Log`: anything whose ``.sample`` is one of them) stands
    for its sample, so ``elcvx.estimate(io.read_log(path))`` works as it reads."""
    if not isinstance(value, Sample):
        if isinstance(value, RowSource) and not value.in_memory:  # a scanned log
            if scans:
                # (Typed as a Sample: the callers that pass scans=True read a LogScan as one,
                # duck-typed; typing them Sample | LogScan is a change of their signatures.)
                return cast(Sample, value)
        elif (inner := getattr(value, "sample", None)) is not None:
            return check_sample(inner, scans)
    if not isinstance(value, Sample):
        raise InvalidInputError(
            f"sample must be an elcvx.Sample or a log read by elcvx.io, got "
            f"{type(value).__name__}; build one with elcvx.Sample(w, r, wmax=...), "
            "Sample.from_probs(...) or elcvx.io.read_log(path, ...)", field="sample", value=value)
    return value



