"""The columns and bounds of a log, stated once: :class:`LogSpec`.

Every reader of :mod:`elcvx.io` needs the same facts about a log: which columns hold the
weights (or the two probabilities), the rewards (or costs) and the counts, the bounds on the
weights and rewards, and, for a CSV file, how its fields and decimals are written. They travel through the package as one frozen, validated :class:`LogSpec`;
the public readers also take them as keywords, folded into a spec by
:meth:`LogSpec.from_keywords` (one place, so that each reader does not check them again).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _validation as iv
from ..errors import InvalidInputError
from ..sample import Sample
from .columns import _shown

#: The fields naming a column, in the order a log's columns are read.
COLUMN_FIELDS = ("weight", "target_prob", "logging_prob", "reward", "cost", "count")
#: The fields bounding the weights and the rewards.
BOUND_FIELDS = ("wmin", "wmax", "pmin", "rmin", "rmax", "cmin", "cmax")
#: The fields saying how a CSV/TSV file is written (its dialect), with their defaults.
DIALECT_FIELDS = {"sep": None, "decimal": "."}
#: The field separator of each text table format when ``sep`` is not given.
_DEFAULT_SEPS = {"csv": ",", "tsv": "\t"}


@dataclass(frozen=True, kw_only=True)
class LogSpec:
    """The columns and the bounds of a log: what every reader of :mod:`elcvx.io` takes.

    Each field is checked when the spec is made (an :class:`~elcvx.errors.InvalidInputError`
    naming the field and its value), so a reader given a spec checks nothing of it again. A
    column left ``None`` is found by name in the log (see :meth:`resolve_columns`): the target
    and logging probabilities if columns ``target_prob`` and ``logging_prob`` exist, else
    ``weight`` or ``w``; ``reward`` or ``r``, else ``cost``. Counts are never guessed.

    Parameters
    ----------
    weight : str, optional
        Column of importance weights ``w = pi(a|x) / h(a|x)``.
    target_prob, logging_prob : str, optional
        Columns of the target and logging policies' probabilities of the logged action
        (``w = target_prob / logging_prob``), both, instead of ``weight``.
    wmin : float
        Lower bound on the weights, in ``[0, 1)``; default 0.
    wmax : float, optional
        Upper bound on the weights, ``> 1``; default ``inf`` (valid, but the interval is wider).
    pmin : float, optional
        Instead of ``wmax``: the smallest probability the logging policy gives any action, in
        ``(0, 1)``, so ``wmax = 1/pmin`` (as in :meth:`Sample.from_probs
        <elcvx.Sample.from_probs>`, which also checks the logging probabilities against it).
    reward : str, optional
        Column of rewards.
    cost : str, optional
        Column of costs, instead of ``reward``: the sample's reward is ``-cost``.
    rmin, rmax : float, optional
        The reward range, default ``[0, 1]``.
    cmin, cmax : float, optional
        The cost range instead (both): the reward range is then ``[-cmax, -cmin]``.
    count : str, optional
        Column of positive counts (a row stands for ``count`` identical examples).
    sep : str, optional
        The field separator of a CSV/TSV file, one character: ``";"`` for the semicolon-separated
        files of spreadsheets set to a language that writes decimal commas. Default ``","`` for
        CSV, a tab for TSV.
    decimal : str
        The decimal mark of the numbers in a CSV/TSV file (and in text columns), one character:
        ``","`` for ``0,25``; default ``"."``. A number written with the other mark is not a
        number. ``sep`` and ``decimal`` apply to CSV/TSV files only: readers of other formats
        refuse them.

    Raises
    ------
    InvalidInputError
        A column name that is not a name, or one column named for two fields; ``weight``
        together with ``target_prob``/``logging_prob``, or one of those two alone; ``reward``
        together with ``cost``; ``wmax`` with ``pmin``; the reward range with the cost range, or
        one end of the cost range alone; a bound that is not a number or out of its range
        (``wmin`` in ``[0, 1)``, ``wmax > 1``, ``pmin`` in ``(0, 1)``, ``rmin < rmax``,
        ``cmin < cmax``), as :class:`~elcvx.Sample` says it; a ``sep`` or ``decimal`` that is
        not one character, is a digit, a quote or a line break, or a ``decimal`` equal to
        ``sep``.

    Examples
    --------
    >>> from elcvx.io import LogSpec
    >>> spec = LogSpec(cost="loss", cmin=0, cmax=1, pmin=0.05)
    >>> spec.reward_range, spec.weight_range
    ((-1.0, 0.0), (0.0, 20.0))
    """

    # The weights, the rewards, the counts: each quantity's column(s), then its bounds.
    weight: str | None = None
    target_prob: str | None = None
    logging_prob: str | None = None
    wmin: float = 0.0
    wmax: float | None = None
    pmin: float | None = None
    reward: str | None = None
    cost: str | None = None
    rmin: float | None = None
    rmax: float | None = None
    cmin: float | None = None
    cmax: float | None = None
    count: str | None = None
    # How a CSV/TSV file is written.
    sep: str | None = None
    decimal: str = "."

    def __post_init__(self):
        self._check_columns()
        self._check_bounds()
        self._check_dialect()

    # -- checks (once, when the spec is made) ----------------------------------------------------
    def _check_columns(self):
        named = {}
        for name in COLUMN_FIELDS:
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, Hashable):
                raise InvalidInputError(f"{name}={iv._short(value)} must be a column name",
                                        field=name, value=value)
        if self.weight is not None and (self.target_prob is not None or
                                        self.logging_prob is not None):
            other = "target_prob" if self.target_prob is not None else "logging_prob"
            raise InvalidInputError(
                "give the weight column or the target and logging probability columns, not both "
                f"(weight={self.weight!r}, {other}={getattr(self, other)!r})", field="weight",
                value=self.weight)
        if (self.target_prob is None) != (self.logging_prob is None):
            given, other = (("target_prob", "logging_prob") if self.target_prob is not None
                            else ("logging_prob", "target_prob"))
            raise InvalidInputError(
                f"{given}={getattr(self, given)!r} is given without {other}: the weight is "
                "target_prob / logging_prob, so both columns are needed", field=given,
                value=getattr(self, given))
        if self.reward is not None and self.cost is not None:
            raise InvalidInputError("give the reward column or the cost column, not both "
                                    f"(reward={self.reward!r}, cost={self.cost!r})",
                                    field="cost", value=self.cost)
        for name in COLUMN_FIELDS:
            value = getattr(self, name)
            if value is not None and value in named:
                raise InvalidInputError(
                    f"{named[value]}={value!r} and {name}={value!r} name the same column: each "
                    "is read from a column of its own", field=name, value=value)
            named.setdefault(value, name)

    def _check_bounds(self):
        def number(name, **how):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, iv.finite_scalar(name, value, **how))

        object.__setattr__(self, "wmin", iv.finite_scalar("wmin", self.wmin))
        number("wmax", allow_inf=True)
        if self.pmin is not None:
            object.__setattr__(self, "pmin", iv.pmin(self.pmin))
        for name in ("rmin", "rmax", "cmin", "cmax"):
            number(name)
        if self.wmax is not None and self.pmin is not None:
            raise InvalidInputError(f"give wmax or pmin, not both (wmax={self.wmax!r}, "
                                    f"pmin={self.pmin!r}): wmax = 1/pmin", field="pmin",
                                    value=self.pmin)
        if self.cmin is not None or self.cmax is not None:
            if self.rmin is not None or self.rmax is not None:
                name = "rmin" if self.rmin is not None else "rmax"
                raise InvalidInputError(
                    "give the reward range (rmin, rmax) or the cost range (cmin, cmax), not both "
                    f"({name}={getattr(self, name)!r} with the cost range)", field=name,
                    value=getattr(self, name))
            if self.cmin is None or self.cmax is None:
                given = "cmin" if self.cmin is not None else "cmax"
                raise InvalidInputError(f"give both ends of the cost range: cmin and cmax "
                                        f"({given}={getattr(self, given)!r} is given alone)",
                                        field=given, value=getattr(self, given))
            if not self.cmin < self.cmax:
                raise InvalidInputError(f"cmin={self.cmin!r} must be < cmax={self.cmax!r}",
                                        field="cmin", value=self.cmin)
        # The rest as a Sample checks its bounds (wmin < 1 < wmax, rmin < rmax, a finite range):
        # the same rule and message, from the one place that states them.
        (wmin, wmax), (rmin, rmax) = self.weight_range, self.reward_range
        Sample([1.0], [rmin], wmin=wmin, wmax=wmax, rmin=rmin, rmax=rmax)

    def _check_dialect(self):
        for name, default in DIALECT_FIELDS.items():
            value = getattr(self, name)
            if value == default:
                continue
            if not (isinstance(value, str) and len(value) == 1) or value.isdigit() \
                    or value in "\"\r\n":
                raise InvalidInputError(
                    f"{name}={value!r} must be one character, not a digit, a quote or a line "
                    "break", field=name, value=value)
        if self.sep is not None and self.sep == self.decimal:
            raise InvalidInputError(f"sep={self.sep!r} and decimal={self.decimal!r} are the same "
                                    "character: a field could not be told from a decimal",
                                    field="decimal", value=self.decimal)

    # -- what the readers read off it ------------------------------------------------------------
    @property
    def dialect(self) -> dict:
        """The dialect fields that differ from their defaults (``{}``: a plain CSV)."""
        return {name: getattr(self, name) for name, default in DIALECT_FIELDS.items()
                if getattr(self, name) != default}

    def delimiter(self, fmt: str, path=None) -> str:
        """The field separator of a file in the text table format ``fmt`` (``"csv"`` or
        ``"tsv"``): ``sep``, else the format's own; an error naming ``path`` when it is the
        decimal mark too (``decimal=","`` in a comma-separated file)."""
        sep = self.sep if self.sep is not None else _DEFAULT_SEPS[fmt]
        if sep == self.decimal:
            where = f"{path}: " if path is not None else ""
            raise InvalidInputError(
                f"{where}decimal={self.decimal!r} is also the field separator of a {fmt.upper()} "
                "file: give the separator too, e.g. sep=';' (on the command line, --sep ';')",
                field="decimal", value=self.decimal)
        return sep

    def require_csv(self, formats, source) -> LogSpec:
        """This spec, for a log whose files are in ``formats``: raise if it sets the CSV dialect
        (``sep``, ``decimal``) and no file is CSV/TSV (``source`` names the log)."""
        formats = set(formats)
        if self.dialect and not formats & set(_DEFAULT_SEPS):
            name, value = next(iter(self.dialect.items()))
            raise InvalidInputError(
                f"{name}={value!r} applies to CSV/TSV files, and {source} is "
                f"{' and '.join(sorted(formats))}: leave out {name} (--{name} on the command "
                "line)", field=name, value=value)
        return self

    @property
    def weight_range(self) -> tuple[float, float]:
        """``(wmin, wmax)`` of the sample: ``wmax``, else ``1/pmin``, else ``inf``."""
        if self.wmax is not None:
            return self.wmin, self.wmax
        return self.wmin, (np.inf if self.pmin is None else 1.0 / self.pmin)

    @property
    def reward_range(self) -> tuple[float, float]:
        """``(rmin, rmax)`` of the sample: the reward range, or ``(-cmax, -cmin)``."""
        if self.cmin is not None and self.cmax is not None:
            return 0.0 - self.cmax, 0.0 - self.cmin
        return (0.0 if self.rmin is None else self.rmin), (1.0 if self.rmax is None else self.rmax)

    @property
    def column_names(self) -> list:
        """The columns named, in the order of :data:`COLUMN_FIELDS` (no name twice)."""
        return [getattr(self, f) for f in COLUMN_FIELDS if getattr(self, f) is not None]

    def resolve_columns(self, present) -> LogSpec:
        """This spec with the columns it leaves ``None`` found by their default names among the
        log's columns ``present``; raise naming what is missing."""
        found: dict[str, Any] = {}
        if self.weight is None and self.target_prob is None:
            if "target_prob" in present and "logging_prob" in present:
                found.update(target_prob="target_prob", logging_prob="logging_prob")
            else:
                found["weight"] = _pick(present, "weight", "w")
                if found["weight"] is None:
                    raise InvalidInputError(
                        "no importance weights: name the weight column, or the target and "
                        "logging probability columns (no column is called 'weight', 'w', or "
                        f"'target_prob' and 'logging_prob'; the columns are {_shown(present)})")
        if self.reward is None and self.cost is None:
            found["reward"] = _pick(present, "reward", "r")
            if found["reward"] is None:
                found["cost"] = _pick(present, "cost")
            if found["reward"] is None and found["cost"] is None:
                raise InvalidInputError(
                    "no rewards: name the reward (or cost) column (no column is called "
                    f"'reward', 'r' or 'cost'; the columns are {_shown(present)})")
        return dataclasses.replace(self, **found) if found else self

    def require_no_columns(self, reader: str) -> LogSpec:
        """This spec, for a reader whose columns are fixed (``reader`` says which): raise if it
        names a column."""
        for name in COLUMN_FIELDS:
            if getattr(self, name) is not None:
                raise InvalidInputError(f"{name}={getattr(self, name)!r} does not apply to "
                                        f"{reader}: its columns are fixed (give only the bounds)",
                                        field=name, value=getattr(self, name))
        for name, value in self.dialect.items():
            raise InvalidInputError(f"{name}={value!r} does not apply to {reader}: it reads no "
                                    "CSV (give only the bounds)", field=name, value=value)
        return self

    @classmethod
    def from_keywords(cls, spec: LogSpec | None = None, **keywords) -> LogSpec:
        """The spec of a reader's call: ``spec`` (or the default one) with the fields given as
        keywords (those not ``None``) set.

        A keyword that ``spec`` also sets (to other than the field's default) is an error
        naming the field: which of the two is meant is ambiguous.
        """
        if spec is None:
            spec = cls()
        elif not isinstance(spec, cls):
            raise InvalidInputError(f"spec must be an elcvx.io.LogSpec or None, got "
                                    f"{type(spec).__name__}", field="spec", value=spec)
        given = {name: value for name, value in keywords.items() if value is not None}
        defaults = {f.name: f.default for f in dataclasses.fields(cls)}
        for name, value in given.items():
            if name not in defaults:
                raise TypeError(f"{name!r} is not a field of LogSpec")
            if getattr(spec, name) != defaults[name]:
                raise InvalidInputError(
                    f"{name} is given twice: {name}={value!r} as a keyword and "
                    f"{name}={getattr(spec, name)!r} in spec; give it once", field=name,
                    value=value)
        return dataclasses.replace(spec, **given) if given else spec


def _pick(present, *candidates):
    for c in candidates:
        if c in present:
            return c
    return None
