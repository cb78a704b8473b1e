"""Why EL loses to SNIPS more often in our Table 1 than in the paper's: the extra atom.

Reruns the Table 1 evaluations (the same seeds, so the same logs as `ope.csv`) and compares
the squared error of SNIPS with three EL variants, by the same per-dataset paired t-test:

* ``el``: the package's estimate, the extra atom's reward ``rho`` at the reward midpoint 1/2
  (the paper's choice; this is the ``el`` column of ``ope.csv``);
* ``el-rho-self``: ``rho`` equal to the estimate it produces, ``V(rho) = rho``, i.e.
  ``rho = sum q w r / sum q w``, EL's own self-normalised value (no data beyond the sample);
* ``el-wmax-observed``: ``wmax`` set to the largest weight of the sample instead of the bound
  known by construction (not a valid bound in general; it shows how much the atom's position
  matters).

It also reports how often the maximum-likelihood distribution puts mass on the atom (then the
estimate depends on ``rho``). Run from the repository root:

    python docs/realistic/el_vs_snips.py [--strategies epsilon=0.05,bag=10] [--datasets 1413,1473]
                                          [--replicates 60]
"""

from __future__ import annotations

import argparse

import numpy as np

import elcvx
from elcvx import baselines
from elcvx.experiments import realistic as R
from elcvx.experiments.realistic.data import _splits
from elcvx.experiments.realistic.policies import _features, _target_policy

VARIANTS = ("el", "el-rho-self", "el-wmax-observed")


def evaluations(ds, strategy, replicates, seed):
    si = R.STRATEGIES.index(strategy)
    init, learn, ev = _splits(ds, "ope")
    K = ds.n_classes
    h = R.train_logging_policy(ds.X[init], ds.y[init], K, strategy, R.dataset_rng(seed, ds.id, si, 0))
    P_learn, P_eval = R.pmf(h, _features(ds.X[learn]), K), R.pmf(h, _features(ds.X[ev]), K)
    h.finish()
    pi = _target_policy(ds, learn, P_learn, R.dataset_rng(seed, ds.id, si, 1))
    PI = pi.probs(ds.X[ev])
    pi.close()
    y = ds.y[ev]
    truth, wmax = R.true_value(PI, y), R.weight_bound(strategy, P_eval, K)
    estimates = {k: [] for k in VARIANTS + ("snips",)}
    atom = []
    for rep in range(replicates):
        a = R.draw_actions(P_eval, R.dataset_rng(seed, ds.id, si, 2, rep))
        idx = np.arange(a.size)
        args = PI[idx, a], P_eval[idx, a], R.bandit_rewards(y, a)
        s = elcvx.Sample.from_probs(*args, wmax=wmax)
        est = elcvx.estimate(s, method="fast", rho="midpoint")
        v0, v1 = est.value_range.low, est.value_range.high  # V(rho) at rho = 0 and 1 (rewards 0/1)
        mass = v1 - v0  # V is linear in rho with slope = the atom's importance-weighted mass
        atom.append(mass > 1e-9)
        snips = baselines.snips(s).value if float(np.dot(s.c, s.w)) > 0 else 0.5
        s_obs = elcvx.Sample.from_probs(*args, wmax=max(float(s.w.max()), 1.0 + 1e-9))
        values = {"el": est.value, "el-rho-self": v0 / (1.0 - mass) if mass < 1 else 0.5,
                  "el-wmax-observed": elcvx.estimate(s_obs, method="fast", rho="midpoint").value,
                  "snips": snips}
        for k, v in values.items():
            estimates[k].append(v)
    return estimates, truth, atom


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default="../shared/data/openml")
    ap.add_argument("--strategies", default=",".join(R.STRATEGIES))
    ap.add_argument("--datasets", default=None, help="comma-separated OpenML ids (default all)")
    ap.add_argument("--replicates", type=int, default=R.DEFAULT_REPLICATES)
    ap.add_argument("--seed", type=int, default=R.DEFAULT_SEED)
    args = ap.parse_args(argv)
    ids = [int(t) for t in args.datasets.split(",")] if args.datasets else None
    data = R.load_folder(args.data_dir, datasets=ids, seed=args.seed)
    print(f"EL variants against SNIPS, wins/ties/losses over {len(data)} datasets "
          f"({args.replicates} evaluations each; paired t-test at 95%)\n")
    print("| exploration | " + " | ".join(VARIANTS) + " | evaluations with mass on the atom |")
    print("|---|" + "---:|" * (len(VARIANTS) + 1))
    for strategy in args.strategies.split(","):
        wtl = {k: [0, 0, 0] for k in VARIANTS}
        atoms = []
        for ds in data:
            estimates, truth, atom = evaluations(ds, strategy, args.replicates, args.seed)
            atoms += atom
            for k in VARIANTS:
                outcome = R.compare_estimates(estimates[k], estimates["snips"], np.full(len(atom), truth))
                wtl[k][("win", "tie", "loss").index(outcome)] += 1
        cells = ["/".join(map(str, wtl[k])) for k in VARIANTS]
        print(f"| {strategy} | " + " | ".join(cells) + f" | {np.mean(atoms):.2f} |", flush=True)


if __name__ == "__main__":
    main()
