"""interval()'s default calibration: "signed-bootstrap" for a one-sided bound on rows in memory
without constraints or atoms, "chi2" otherwise (a two-sided interval, a scanned log, a model);
and ``elcvx evaluate --alternative`` follows it unless ``--calibration`` is given.

Each check compares the default call with the explicit calls, on logs where the two calibrations
give different bounds (asserted), so that a default resolved the other way fails it."""

from __future__ import annotations

import json

import numpy as np
import pytest

import elcvx
from elcvx.errors import InvalidInputError


def _log(n=120, seed=3):
    """A rare large weight (12 on about 5% of rows) and skewed rewards: the signed root is
    asymmetric, so signed-bootstrap's threshold is above chi2's on both sides."""
    rng = np.random.default_rng(seed)
    big = rng.random(n) < 0.05
    w = np.where(big, 12.0, rng.choice([0.3, 0.6], n))
    r = np.where(big, rng.random(n) < 0.8, rng.random(n) < 0.5).astype(float)
    return elcvx.Sample(w, r, wmin=0.2, wmax=12.0)


def _ends(res):
    return res.low, res.high, res.quantile


@pytest.mark.parametrize("alternative", ["greater", "less"])
def test_one_sided_in_memory_defaults_to_signed_bootstrap(alternative):
    s = _log()
    default = elcvx.interval(s, alternative=alternative)
    signed = elcvx.interval(s, alternative=alternative, calibration="signed-bootstrap")
    chi2 = elcvx.interval(s, alternative=alternative, calibration="chi2")
    assert _ends(signed) != _ends(chi2)
    assert _ends(default) == _ends(signed)
    assert default.calibration == "signed-bootstrap"
    assert "calibration='signed-bootstrap'" in repr(default)
    # Deterministic (random_state=0 by default): the same bound on a second call.
    assert _ends(elcvx.interval(s, alternative=alternative)) == _ends(default)


def test_two_sided_defaults_to_chi2():
    s = _log()
    default = elcvx.interval(s)
    chi2 = elcvx.interval(s, calibration="chi2")
    signed = elcvx.interval(s, calibration="signed-bootstrap")
    assert _ends(signed) != _ends(chi2)
    assert _ends(default) == _ends(chi2) and default.calibration == "chi2"


def test_with_constraints_or_atoms_the_default_is_chi2():
    s = _log()
    rng = np.random.default_rng(5)
    cv = [elcvx.MomentConstraint(s.w * rng.uniform(size=s.n_rows), 0.5, atom_range=(0.0, 12.0))]
    default = elcvx.interval(s, alternative="greater", constraints=cv)
    chi2 = elcvx.interval(s, alternative="greater", constraints=cv, calibration="chi2")
    f = elcvx.interval(s, alternative="greater", constraints=cv, calibration="f")
    assert _ends(f) != _ends(chi2)
    assert _ends(default) == _ends(chi2) and default.calibration == "chi2"
    # An explicit signed-bootstrap is refused there, as before.
    with pytest.raises(InvalidInputError, match="calibration='signed-bootstrap' is not available"):
        elcvx.interval(s, alternative="greater", constraints=cv, calibration="signed-bootstrap")
    atoms = [[0.2], [12.0]]  # (w,) rows: no constraints
    default = elcvx.interval(s, alternative="less", atoms=atoms)
    assert default.calibration == "chi2"
    assert _ends(default) == _ends(elcvx.interval(s, alternative="less", atoms=atoms,
                                                  calibration="chi2"))


def test_on_a_scanned_log_the_default_is_chi2(tmp_path):
    """Continuous weights and ``max_pairs=10``: the scan keeps its chunks (not in memory)."""
    from elcvx import io as eio

    rng = np.random.default_rng(8)
    w = np.minimum(rng.exponential(1.0, 2000), 20.0)
    r = (rng.random(2000) < 0.4).astype(float)
    path = tmp_path / "log.csv"
    np.savetxt(path, np.column_stack([w, r]), delimiter=",", header="w,r", comments="")
    scan = eio.scan_log(path, weight="w", reward="r", wmax=20.0, max_pairs=10)
    assert not scan.in_memory
    default = elcvx.interval(scan, alternative="greater")
    chi2 = elcvx.interval(scan, alternative="greater", calibration="chi2")
    assert default.calibration == "chi2" and _ends(default) == _ends(chi2)
    # The same rows in memory take signed-bootstrap (its threshold differs from chi2's here).
    rows = elcvx.Sample(w, r, wmax=20.0)
    in_memory = elcvx.interval(rows, alternative="greater")
    assert in_memory.calibration == "signed-bootstrap"
    assert in_memory.quantile != chi2.quantile
    with pytest.raises(InvalidInputError, match="calibration='signed-bootstrap' needs the log's"):
        elcvx.interval(scan, alternative="greater", calibration="signed-bootstrap")


def _section(capsys, *argv):
    from elcvx.cli import main

    assert main([*argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_command_line_one_sided_bound_follows_the_default(capsys):
    """The bundled log's lower bound (--alternative greater): signed-bootstrap's (0.4492) unless
    --calibration chi2 is given (0.4592); the two-sided interval stays chi2 either way."""
    from elcvx.datasets import example_log

    s = example_log()
    signed = elcvx.interval(s, alternative="greater", calibration="signed-bootstrap")
    chi2 = elcvx.interval(s, alternative="greater", calibration="chi2")
    assert signed.low != chi2.low
    for extra, want, name in (([], signed, "signed-bootstrap"),
                              (["--calibration", "chi2"], chi2, "chi2"),
                              (["--calibration", "signed-bootstrap"], signed, "signed-bootstrap")):
        rep = _section(capsys, "demo", "--alternative", "greater", *extra)
        section = rep["one_sided"]
        el = section["bounds"][0]
        assert el["method"] == "el" and section["calibration"] == name
        assert (el["low"], el["parameter"]) == (want.low, want.quantile)
    # The two-sided interval's calibration is chi2 unless given.
    rep = _section(capsys, "demo", "--alternative", "greater")
    assert rep["calibration"] == "chi2"
    assert rep["quantile"] == elcvx.interval(s, calibration="chi2").quantile


def test_the_command_line_on_a_log_kept_in_chunks_uses_chi2(capsys):
    pytest.importorskip("pyarrow")
    from elcvx.datasets import EXAMPLE_PMIN, example_log, example_log_path

    rep = _section(capsys, "evaluate", str(example_log_path()), "--pmin", str(EXAMPLE_PMIN),
                   "--alternative", "less", "--engine", "stream", "--max-pairs", "1")
    section = rep["one_sided"]
    el = section["bounds"][0]
    chi2 = elcvx.interval(example_log(), alternative="less", calibration="chi2")
    assert section["calibration"] == "chi2"
    assert el["high"] == pytest.approx(chi2.high, abs=1e-10)


def test_the_default_draws_199_resamples_and_resamples_overrides_it():
    """The one-sided default's bootstrap draws 199 resamples (the number the validity suite
    measured its coverage at), the two-sided bootstrap calibration 999: on the bundled log the
    lower bound with 199 (0.4492) differs from the one with 999 (0.4592, where the critical value
    falls under chi2's floor)."""
    from elcvx.datasets import example_log

    s = example_log()
    default = elcvx.interval(s, alternative="greater")
    assert default.low == elcvx.interval(s, alternative="greater", calibration="signed-bootstrap",
                                         resamples=199).low
    more = elcvx.interval(s, alternative="greater", resamples=999)
    assert round(default.low, 4) == 0.4492 and round(more.low, 4) == 0.4592
    boot = elcvx.interval(s, calibration="bootstrap")
    assert boot.quantile == elcvx.interval(s, calibration="bootstrap", resamples=999).quantile
    assert boot.quantile != elcvx.interval(s, calibration="bootstrap", resamples=199).quantile
