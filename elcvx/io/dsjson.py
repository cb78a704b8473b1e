"""Reading Vowpal Wabbit's decision-service JSON (dsjson) logs: :func:`read_dsjson`."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from .. import _validation as iv
from ..checks import check_weights
from ..errors import ElcvxError, InvalidInputError
from .columns import _missing_columns
from .files import _check_path
from .frames import _build_sample, _column, _locator, _numeric
from .json_tables import _json_lines
from .logs import Log
from .spec import LogSpec
from .tables import read_table

if TYPE_CHECKING:  # (annotations only)
    from numpy.typing import ArrayLike


#: How dsjson's ``pdrop`` becomes counts (see :func:`read_dsjson`).
PDROP_MODES = ("ess", "inverse", "ignore")


def _number(rec, key, lineno, path, *, default=None):
    v = rec.get(key, default)
    if v is None:
        raise InvalidInputError(f"{path}: line {lineno} has no {key!r}")
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise InvalidInputError(f"{path}: line {lineno}: {key} is {iv._short(v)}, not a number")
    v = float(v)
    if not math.isfinite(v):
        raise InvalidInputError(f"{path}: line {lineno}: {key} is {v!r}, not a finite number")
    return v


def _logging_prob(rec, lineno, path):
    """``_label_probability``, else the entry of ``p`` at the logged action's place in ``a``."""
    if "_label_probability" in rec:
        return _number(rec, "_label_probability", lineno, path)
    a, p, action = rec.get("a"), rec.get("p"), rec.get("_label_Action")
    if isinstance(a, list) and isinstance(p, list) and action in a and len(p) == len(a):
        v = p[a.index(action)]
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return float(v)
    raise InvalidInputError(f"{path}: line {lineno} has no '_label_probability' (and no "
                            "'_label_Action' found in 'a' with its probability in 'p')")


def read_dsjson(path: str | os.PathLike, *,
                target_prob: Callable[[dict], float] | ArrayLike | str | os.PathLike,
                target_prob_column: str = "target_prob",
                pdrop: str = "ess", spec: LogSpec | None = None, wmin: float | None = None,
                wmax: float | None = None, pmin: float | None = None, rmin: float | None = None,
                rmax: float | None = None, cmin: float | None = None, cmax: float | None = None,
                progress: bool | None = None) -> Log:
    r"""Read a Vowpal Wabbit decision-service JSON (dsjson) log of contextual-bandit events.

    One JSON object per line (blank lines are ignored; gzip or not). From each event:

    * the cost ``_label_cost`` (the reward is ``-cost``, so the reward range is ``[-cmax,
      -cmin]``; the default reward range ``[0, 1]`` is the cost range ``[-1, 0]`` of logs where
      cost = -reward);
    * the logging probability of the logged action ``_label_Action`` (1-based):
      ``_label_probability``, or else its entry in ``p`` (``a`` is the ranked action list,
      ``p`` their probabilities);
    * ``"_skipLearn": true`` events are skipped (the :class:`Log` counts them in ``skipped`` and
      says so in ``notes``);
    * ``pdrop``, the probability that the logger dropped an event like this one, see below.

    Conditional-bandit and slates events (``_outcomes``) are not supported.

    Parameters
    ----------
    path : str or PathLike
    target_prob : callable, array_like, or str/PathLike
        The target policy's probability of each event's logged action:

        * a callable ``f(record) -> float``, called with each kept event's parsed JSON object;
        * an array (list, numpy array, pandas Series) with one value per event line of the file,
          ``_skipLearn`` events included, or one per kept event;
        * a file name (CSV, Parquet or JSON lines, read by :func:`read_table`) whose column
          ``target_prob_column`` holds the values: aligned by ``EventId`` when the file has an
          ``EventId`` column and every kept event has one, else by position as for an array.
    target_prob_column : str
        The column of that file; default ``"target_prob"``.
    pdrop : {"ess", "inverse", "ignore"}
        How events kept with probability ``1 - pdrop`` are counted. Each stands for ``v = 1/(1 -
        pdrop)`` logged events (VW divides its learning weight by ``1 - pdrop``). ``"inverse"``:
        counts ``v``, so ``N`` estimates the number of events before dropping — right for the
        point estimates, but the intervals then take the dropped events as observed and are
        too narrow by about ``sqrt(1 - pdrop)``. ``"ess"`` (default): counts proportional to
        ``v``, scaled to sum to Kish's effective sample size ``(sum v)^2 / sum v^2`` (the
        pseudo-empirical likelihood of Wu and Rao, 2006): the same estimates, and intervals
        whose ``N`` is no larger than the number of kept events; with a constant ``pdrop``
        every count is 1, exactly as if nothing had been dropped. ``"ignore"``: every count 1.
    spec : LogSpec, optional
        The bounds (:class:`~elcvx.io.LogSpec`; its columns must be left ``None``: a dsjson
        log's are fixed).
    wmin, wmax, pmin, rmin, rmax, cmin, cmax
        The bound fields of :class:`~elcvx.io.LogSpec`, as keywords (an error if ``spec`` sets
        the same one).
    progress : bool, optional
        As for :func:`read_table`.

    Returns
    -------
    Log

    Raises
    ------
    InvalidInputError
        A line that is not a JSON object, a missing or non-numeric key (naming the line), a
        ``pdrop`` outside ``[0, 1)``, target probabilities that do not align with the events,
        values out of range.
    """
    spec = LogSpec.from_keywords(spec, wmin=wmin, wmax=wmax, pmin=pmin, rmin=rmin, rmax=rmax,
                                 cmin=cmin, cmax=cmax).require_no_columns("a dsjson log")
    path = _check_path(path)
    iv.option("pdrop", pdrop, PDROP_MODES)
    rmin, rmax = spec.reward_range
    call = target_prob if callable(target_prob) else None
    lines, costs, logging, drops, ids, positions, targets = [], [], [], [], [], [], []
    n_events = skipped = 0
    # Keys are not checked for duplicates: VW writes these logs, and the check costs ~10%.
    for lineno, rec in _json_lines(path, progress, "dsjson", keys=()):
        n_events += 1
        if rec.get("_skipLearn") is True:
            skipped += 1
            continue
        if "_outcomes" in rec:
            raise InvalidInputError(f"{path}: line {lineno} is a conditional-bandit or slates event "
                                    "('_outcomes'); only contextual-bandit events are supported")
        cost = _number(rec, "_label_cost", lineno, path)
        prob = _logging_prob(rec, lineno, path)
        d = _number(rec, "pdrop", lineno, path, default=0.0)
        if not 0.0 <= d < 1.0:
            raise InvalidInputError(f"{path}: line {lineno}: pdrop={d!r} must lie in [0, 1) "
                                    "(an event dropped with certainty cannot be in the log)")
        if call is not None:
            try:
                t = call(rec)
            except ElcvxError:
                raise
            except Exception as exc:  # noqa: BLE001 - the user's function: say where it failed
                raise InvalidInputError(
                    f"{path}: line {lineno}: target_prob(record) raised {type(exc).__name__}: {exc}"
                ) from exc
            targets.append(t)
        lines.append(lineno)
        costs.append(cost)
        logging.append(prob)
        drops.append(d)
        ids.append(rec.get("EventId"))
        positions.append(n_events - 1)
    if n_events == 0:
        raise InvalidInputError(f"{path} has no events")
    if not lines:
        raise InvalidInputError(f"{path}: every event ({iv.plural(n_events, 'event')}) has "
                                "\"_skipLearn\": true; none is left")
    where = lambda i: f"{path}: line {lines[i]}"  # noqa: E731
    if call is not None:
        target = _numeric("target_prob(record)", np.array(targets, dtype=object), where)
        target_desc = "target_prob(record)"
    else:
        target, target_desc = _dsjson_targets(path, target_prob, target_prob_column, n_events,
                                              positions, ids, where)
    reward = 0.0 - np.asarray(costs)
    counts, notes = _pdrop_counts(np.asarray(drops), pdrop)
    if skipped:
        notes.insert(0, f"skipped {skipped} of {iv.plural(n_events, 'event')} with "
                        "\"_skipLearn\": true")
    fields = {"w": "weight (target_prob / _label_probability)",
              "target_prob": f"target probability ({target_desc})",
              "logging_prob": "logging probability (_label_probability)",
              "r": "_label_cost", "counts": "count from pdrop"}
    sample = _build_sample(target=target, logging=np.asarray(logging), reward=reward,
                           counts=counts, spec=spec, where=where, fields=fields,
                           cost_range=(0.0 - rmax, 0.0 - rmin))
    columns = {"w": f"{target_desc} / _label_probability", "r": "-_label_cost"}
    if counts is not None:
        columns["counts"] = f"pdrop ({pdrop})"
    notes.extend(check_weights(sample, columns["w"]))
    return Log(sample=sample, path=path, format="dsjson", n_rows=n_events, skipped=skipped,
               columns=columns, notes=tuple(notes), logging_probs=np.asarray(logging, dtype=float))


def _pdrop_counts(drops: np.ndarray, mode: str):
    k = int((drops > 0).sum())
    if mode == "ignore" or k == 0:
        return None, [f"pdrop ignored ({iv.plural(k, 'event')} with pdrop > 0)"] if k else []
    v = 1.0 / (1.0 - drops)
    if mode == "inverse":
        return v, [f"pdrop: {iv.plural(k, 'event')} counted 1/(1 - pdrop) times "
                   f"(N = {v.sum():g} estimates "
                   f"the events before dropping; intervals treat dropped events as observed)"]
    if np.all(drops == drops[0]):
        return None, [f"pdrop = {drops[0]:g} on every event: counts 1 (a constant drop rate "
                      "thins the log uniformly)"]
    ess = v.sum() ** 2 / np.dot(v, v)
    return v * (v.sum() / np.dot(v, v)), [
        f"pdrop: {iv.plural(k, 'event')} weighted 1/(1 - pdrop), counts scaled to Kish's "
        f"effective sample size {ess:.1f} of {iv.plural(drops.size, 'event')}"]


def _dsjson_targets(path, source, column, n_events, positions, ids, where):
    n_kept = len(positions)
    if isinstance(source, (str, os.PathLike)):
        tpath = _check_path(source)
        df = read_table(tpath)
        if column not in df.columns:
            _missing_columns(tpath, [column], list(df.columns))
        tw = _locator(df.index)
        values = _column(df, column, lambda i: f"{tpath}: {tw(i)}")
        desc = f"{os.path.basename(tpath)}:{column}"
        if "EventId" in df.columns and all(i is not None for i in ids):
            keys = df["EventId"].astype(str).tolist()
            table = {}
            for j, key in enumerate(keys):
                if key in table:
                    raise InvalidInputError(f"{tpath}: {tw(j)}: EventId {key!r} appears twice")
                table[key] = values[j]
            out = np.empty(n_kept)
            for i, eid in enumerate(ids):
                try:
                    out[i] = table[str(eid)]
                except KeyError:
                    raise InvalidInputError(
                        f"{where(i)}: EventId {eid!r} is not in {tpath}") from None
            return out, desc
        what = f"{tpath} has {iv.plural(len(values), 'row')}"
        return _align(values, n_events, positions, what), desc
    if callable(source):  # pragma: no cover - handled by the caller
        raise AssertionError
    arr = np.asarray(source, dtype=object).reshape(-1) if np.ndim(source) <= 1 else None
    if arr is None:
        raise InvalidInputError(f"target_prob must be 1-dimensional, got shape {np.shape(source)}")
    values = _numeric("target_prob", arr, lambda i: f"target_prob[{i}]")
    what = f"target_prob has {iv.plural(len(values), 'value')}"
    return _align(values, n_events, positions, what), "target_prob"


def _align(values, n_events, positions, what):
    if len(values) == n_events:
        return values[np.asarray(positions, dtype=int)]
    if len(values) == len(positions):
        return values
    kept = f" ({len(positions)} after skipping \"_skipLearn\" ones)" if len(positions) != n_events else ""
    raise InvalidInputError(f"{what} but the log has {iv.plural(n_events, 'event')}{kept}: give "
                            "one target probability per event line (or per kept event), or align "
                            "them by an EventId column")
