"""Issue 27, a practitioner's first hour: what a user of the package from Python meets.

* ``elcvx.sequences`` lists what it offers, not what it imports (item 9);
* the benchmarks write their data to a cache folder, not to a fixed absolute path (item 9);
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------------------------------------
# 9. Smaller things
# ------------------------------------------------------------------------------------------------
def test_sequences_lists_its_exports_only():
    import elcvx.sequences as seq

    assert set(dir(seq)) == set(seq.__all__)
    assert not {"np", "math", "iv"} & set(dir(seq))
    for name in seq.__all__:
        assert getattr(seq, name) is not None


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module


def test_scale_benchmark_writes_to_the_users_cache(monkeypatch, tmp_path):
    bench = _load(ROOT / "benchmarks" / "bench_scale.py")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert bench.default_data_dir() == str(tmp_path / "elcvx" / "scale-data")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert bench.default_data_dir() == str(tmp_path / "home" / ".cache" / "elcvx" / "scale-data")


def test_no_benchmark_defaults_to_a_fixed_absolute_path():
    # Every string default of an argparse option in benchmarks/: none is an absolute path (a
    # machine of the project's is not the user's). Read from the source, without running it.
    for path in sorted((ROOT / "benchmarks").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument":
                for kw in node.keywords:
                    if kw.arg == "default" and isinstance(kw.value, ast.Constant):
                        value = kw.value.value
                        assert not (isinstance(value, str) and value.startswith("/")), \
                            f"{path.name}: default {value!r}"


# ------------------------------------------------------------------------------------------------
# 7. A reward model's control variate for a stochastic target, from the (N, K) matrices
# ------------------------------------------------------------------------------------------------
def stochastic_log(n, seed):
    """3 actions, epsilon-greedy logging, a softmax target policy; the true mean reward
    ``mu(x, k)`` is a perfect reward model. Returns the sample, actions, logging probabilities,
    target probabilities and ``mu`` at every action."""
    import numpy as np

    from elcvx import Sample

    rng = np.random.default_rng(seed)
    x = rng.random(n)
    h = np.full((n, 3), 0.1)
    h[np.arange(n), (3 * x).astype(int)] += 0.7
    a = (rng.random(n)[:, None] > np.cumsum(h, axis=1)).sum(axis=1)
    mu = np.stack([0.2 + 0.6 * x, 0.5 + 0 * x, 0.8 - 0.6 * x], axis=1)
    logits = 3.0 * np.stack([x, 0.5 + 0 * x, 1 - x], axis=1)
    pi = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    r = (rng.random(n) < mu[np.arange(n), a]).astype(float)
    rows = np.arange(n)
    return Sample(pi[rows, a] / h[rows, a], r, wmax=10.0), a, h, pi, mu


def test_reward_model_takes_the_matrices_of_a_stochastic_target():
    import numpy as np

    import elcvx
    from elcvx import constraints

    s, a, _, pi, mu = stochastic_log(400, 0)
    c = constraints.reward_model(s, mu, actions=a, target_probs=pi)
    # g_n = w_n mu(x_n, a_n) - sum_k pi(k|x_n) mu(x_n, k), by a loop over the rows
    by_hand = [s.w[n] * mu[n, a[n]] - sum(pi[n, k] * mu[n, k] for k in range(3))
               for n in range(s.n_rows)]
    assert np.allclose(c.values, by_hand, rtol=0, atol=1e-15) and c.target == 0.0
    # the same constraint as the vector form given those two vectors
    rows = np.arange(s.n_rows)
    vec = constraints.reward_model(s, mu[rows, a], (pi * mu).sum(axis=1))
    assert np.array_equal(vec.values, c.values)
    assert [vec.range_at(w) for w in (0.0, 3.0, 10.0)] == [c.range_at(w) for w in (0.0, 3.0, 10.0)]
    # E[g] = 0 under the logging policy whatever r_hat is (here a wrong one): the known moment
    # the constraint states. Over 20,000 rows, the mean of g is within 4 standard errors of 0;
    # with the target's probabilities of the wrong actions (a misuse) it is not.
    big, a, _, pi, mu = stochastic_log(20_000, 1)
    wrong_model = 1.0 - mu
    g = constraints.reward_model(big, wrong_model, actions=a, target_probs=pi).values
    assert abs(g.mean()) < 4 * g.std() / np.sqrt(g.size)
    shifted = np.roll(pi, 1, axis=1)  # pi(k+1|x) read as pi(k|x)
    bad = big.w * wrong_model[np.arange(big.n_rows), a] - (shifted * wrong_model).sum(axis=1)
    assert abs(bad.mean()) > 4 * bad.std() / np.sqrt(bad.size)
    est = elcvx.estimate(s, constraints=[c])
    assert est.status.startswith("optimal")


def test_reward_model_matrices_of_a_deterministic_target_give_the_old_constraint():
    import numpy as np

    from elcvx import Sample, constraints

    rng = np.random.default_rng(4)
    n, k = 200, 3
    a = rng.integers(0, k, n)
    target = rng.integers(0, k, n)
    s = Sample((a == target) * 3.0, rng.random(n), wmax=3.0)  # uniform logging, h = 1/3
    r_hat = rng.random((n, k))
    new = constraints.reward_model(s, r_hat, actions=a, target_probs=np.eye(k)[target],
                                   deterministic=True)
    old = constraints.reward_model(s, r_hat[np.arange(n), a], r_hat[np.arange(n), target],
                                   deterministic=True)
    assert np.array_equal(new.values, old.values)
    assert new.range_at(0.0) == old.range_at(0.0) == (-1.0, 0.0)


def test_reward_model_matrix_errors():
    import numpy as np
    import pytest

    from elcvx import InvalidInputError, constraints

    s, a, _, pi, mu = stochastic_log(50, 1)
    cases = [
        (dict(actions=a), "needs actions .* and target_probs"),
        (dict(actions=a, target_probs=pi[:, :2]), r"target_probs has shape \(50, 2\)"),
        (dict(actions=a, target_probs=pi * 0.9), r"target_probs\[0\] sums to 0\.9, not 1"),
        (dict(actions=(a + 1) % 3, target_probs=np.eye(3)[a]), "row 0: target_probs gives the "
         "logged action"),
        (dict(actions=a, target_probs=pi, expected=mu[:, 0]), "with an \\(N, K\\) matrix"),
    ]
    for kwargs, match in cases:
        with pytest.raises(InvalidInputError, match=match):
            constraints.reward_model(s, mu, **kwargs)
    with pytest.raises(InvalidInputError, match="go with an"):
        constraints.reward_model(s, mu[:, 0], mu[:, 0], actions=a)
    with pytest.raises(InvalidInputError, match="expected is missing"):
        constraints.reward_model(s, mu[:, 0])
