"""``elcvx reproduce synthetic``: rerun the paper's synthetic study and write its tables and figures.

:func:`add_reproduce_parser` registers ``reproduce`` (with the ``synthetic`` experiment) on an
``argparse`` sub-parser collection; :func:`run` executes the parsed arguments. Stand-alone:
``python -m elcvx.experiments.cli reproduce synthetic --replicates 200 --out results``.
"""

from __future__ import annotations

import argparse
import shlex
import sys

from ..cli.args import positive_int
from ..calibration.bootstrap import DEFAULT_RESAMPLES
from ..errors import ElcvxError
from . import (calibration, constraints_study, pessimism, realistic, rho_study, rho_summary,
               selection, sequences_study, synthetic)
from .validity import command as validity_command

__all__ = ["add_reproduce_parser", "run", "main"]


def add_reproduce_parser(subparsers):
    """Register ``reproduce synthetic [--replicates N] [--seed S] [--out DIR] [--sizes ...] [--jobs K]``.

    Parameters
    ----------
    subparsers
        The object returned by ``ArgumentParser.add_subparsers()``.

    Returns
    -------
    argparse.ArgumentParser
        The ``reproduce`` parser; parsed arguments carry ``func=run``.
    """
    rep = subparsers.add_parser("reproduce", help="rerun the paper's experiments",
                                description="Rerun the paper's experiments and write tables and figures.")
    which = rep.add_subparsers(dest="experiment", required=True, metavar="EXPERIMENT")
    syn = which.add_parser(
        "synthetic",
        help="MSE of the estimators, coverage and width of the intervals (Figures 1 and 2)",
        description="The paper's synthetic epsilon-greedy study (its Figures 1 and 2): for each "
                    "sample size, draw environments (true value uniform on [0, 1]) and one sample "
                    "from each; write mse.csv, intervals.csv, summary.md and PNG figures.",
    )
    syn.add_argument("--replicates", type=positive_int, default=synthetic.DEFAULT_REPLICATES,
                     help="environment draws per sample size (default %(default)s, as in the paper)")
    syn.add_argument("--seed", type=int, default=synthetic.DEFAULT_SEED,
                     help="root seed of the random streams (default %(default)s)")
    syn.add_argument("--out", default="elcvx-synthetic",
                     help="output directory (default %(default)s)")
    syn.add_argument("--sizes", type=positive_int, nargs="+", default=list(synthetic.DEFAULT_SIZES),
                     metavar="N", help="sample sizes (default: 1-2-5 steps from 10 to 10^6)")
    syn.add_argument("--jobs", type=positive_int, default=2,
                     help="worker processes (default %(default)s; results do not depend on it)")
    syn.add_argument("--confidence-level", type=float, default=0.95,
                     help="confidence level of the intervals (default %(default)s)")
    syn.add_argument("--no-plots", action="store_true", help="do not draw the PNG figures")
    syn.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    syn.set_defaults(func=run)
    _add_realistic(which)
    _add_constraints(which)
    _add_sequences(which)
    _add_rho(which)
    _add_calibration(which)
    _add_pessimism(which)
    _add_selection(which)
    validity_command.add_parser(which, _add_run_options)
    rep.set_defaults(func=run)
    return rep


def _sizes_option(args, default) -> list:
    """``--sizes N ...`` for the command line of a run, when the sizes are not the default."""
    return ["--sizes"] + [str(n) for n in args.sizes] if list(args.sizes) != list(default) else []


def _id_list(text):
    try:
        return [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of OpenML ids") from None


def _name_list(valid, what):
    def parse(text):
        items = [t.strip() for t in text.split(",") if t.strip()]
        if not items:
            raise argparse.ArgumentTypeError(f"{text!r}: no {what} given")
        if valid is not None:
            bad = [t for t in items if t not in valid]
            if bad:
                raise argparse.ArgumentTypeError(f"{bad[0]!r} is not a {what}; choose among {', '.join(valid)}")
        return items
    return parse


def _add_realistic(which):
    real = which.add_parser(
        "realistic",
        help="OPE, intervals and learning on classification datasets (Tables 1, 3 and 2)",
        description="The paper's realistic-data experiments: classification datasets turned into "
                    "bandit problems, logging policies learned with Vowpal Wabbit under each "
                    "exploration strategy; write ope.csv, intervals.csv, learning.csv, the three "
                    "summary tables and summary.md.",
    )
    real.add_argument("--data-dir",
                      help="folder of '<openml id>_<name>.csv.gz' files (last column 'label'); required "
                           "unless --merge")
    real.add_argument("--merge", nargs="+", metavar="RUN_DIR",
                      help="do not run: combine the --out folders of earlier runs (split by --strategies "
                           "or --datasets) into one set of tables in --out; other options are ignored")
    real.add_argument("--tables", type=_name_list(realistic.TABLES, "table"), default=list(realistic.TABLES),
                      help="comma-separated among ope,ci,learning (default all)")
    real.add_argument("--replicates", type=positive_int, default=realistic.DEFAULT_REPLICATES,
                      help="evaluations per (dataset, strategy) (default %(default)s, as in the paper)")
    real.add_argument("--learning-replicates", type=positive_int, default=None,
                      help="learning runs per (dataset, strategy) (default: --replicates)")
    real.add_argument("--strategies", type=_name_list(None, "strategy"), default=list(realistic.STRATEGIES),
                      help="comma-separated, e.g. epsilon=0.05,bag=10,cover=10 (default: the paper's seven)")
    real.add_argument("--datasets", type=_id_list, default=None,
                      help="comma-separated OpenML ids (default: every file of --data-dir)")
    real.add_argument("--objectives", type=_name_list(realistic.OBJECTIVES, "objective"),
                      default=list(realistic.OBJECTIVES),
                      help="learning objectives (default all; 'ips' is the baseline)")
    real.add_argument("--seed", type=int, default=realistic.DEFAULT_SEED,
                      help="root seed (default %(default)s)")
    real.add_argument("--out", default="elcvx-realistic", help="output directory (default %(default)s)")
    real.add_argument("--jobs", type=positive_int, default=2,
                      help="worker processes (default %(default)s; results do not depend on it)")
    real.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    real.set_defaults(func=run)


def _add_constraints(which):
    study = constraints_study  # short for the defaults below
    con = which.add_parser(
        "constraints",
        help="coverage and width of EL intervals with control variates and of policy differences",
        description="A simulated contextual bandit with known true values: coverage, width and "
                    "MSE of the plain EL interval, EL with a reward-model control variate, EL with "
                    "per-action control variates, and the difference of two policies (one EL "
                    "model against two separate intervals); write summary.csv, "
                    "replicates.csv.gz, constraints.png and summary.md.",
    )
    _study_options(con, study, per="sample size", out="elcvx-constraints", jobs=2)
    con.add_argument("--sizes", type=positive_int, nargs="+", default=list(study.DEFAULT_SIZES),
                     metavar="N", help="sample sizes (default: %(default)s)")


def _add_run_options(parser, out, jobs=2):
    """``--out``, ``--jobs``, ``--quiet`` and the handler, common to the studies."""
    parser.add_argument("--out", default=out, help="output directory (default %(default)s)")
    parser.add_argument("--jobs", type=positive_int, default=jobs,
                        help="worker processes (default %(default)s; results do not depend on it)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    parser.set_defaults(func=run)


def _add_rho(which):
    rho = which.add_parser(
        "rho",
        help="EL's estimate under each rule for the extra atom's reward rho, in both studies",
        description="EL's point estimate with rho = midpoint, SNIPS and self-consistent on the "
                    "synthetic study's samples (MSE) and on the realistic study's Table 1 logs "
                    "(wins/ties/losses against IPS, SNIPS, EMP); write synthetic_mse.csv, "
                    "synthetic_paired.csv, ope_rho.csv.gz, table1_rho.csv and summary.md.",
    )
    rho.add_argument("--studies", type=_name_list(("synthetic", "realistic"), "study"),
                     default=["synthetic", "realistic"], help="comma-separated (default both)")
    rho.add_argument("--data-dir", help="the realistic study's datasets (needed for 'realistic')")
    rho.add_argument("--replicates", type=positive_int, default=realistic.DEFAULT_REPLICATES,
                     help="realistic evaluations per (dataset, strategy) (default %(default)s)")
    rho.add_argument("--strategies", type=_name_list(realistic.STRATEGIES, "strategy"),
                     default=list(realistic.STRATEGIES), help="default: the paper's seven")
    rho.add_argument("--datasets", type=_id_list, default=None, help="OpenML ids (default all)")
    rho.add_argument("--synthetic-replicates", type=positive_int, default=synthetic.DEFAULT_REPLICATES,
                     help="synthetic environment draws per N (default %(default)s)")
    rho.add_argument("--sizes", type=positive_int, nargs="+", default=list(synthetic.DEFAULT_SIZES),
                     metavar="N", help="synthetic sample sizes (default: the synthetic study's)")
    _add_run_options(rho, "elcvx-rho")


def _run_rho(args) -> int:
    parts = ["elcvx", "reproduce", "rho", "--studies", ",".join(args.studies)]
    if "realistic" in args.studies:
        parts += ["--data-dir", str(args.data_dir), "--replicates", str(args.replicates),
                  "--strategies", ",".join(args.strategies)]
        parts += ["--datasets", ",".join(map(str, args.datasets))] if args.datasets else []
    if "synthetic" in args.studies:
        parts += ["--synthetic-replicates", str(args.synthetic_replicates)]
        parts += _sizes_option(args, synthetic.DEFAULT_SIZES)
    parts += ["--jobs", str(args.jobs), "--out", args.out]
    if "realistic" in args.studies and args.data_dir is None:
        print("elcvx: error: --data-dir is needed for the realistic study", file=sys.stderr)
        return 2

    def run_all():
        syn = rea = None
        if "synthetic" in args.studies:
            syn = rho_study.synthetic_mse(args.sizes, args.synthetic_replicates, jobs=args.jobs,
                                          progress=not args.quiet)
        if "realistic" in args.studies:
            rea = rho_study.realistic_ope(args.data_dir, strategies=args.strategies,
                                          datasets=args.datasets, replicates=args.replicates,
                                          jobs=args.jobs, progress=not args.quiet)
        return (syn, rea), rho_summary.write(args.out, synthetic=syn, realistic=rea,
                                             command=shlex.join(parts))

    return _execute(run_all, lambda st: "rho study: " + ", ".join(
        f"{k} in {r['wall']:.1f} s" for k, r in zip(("synthetic", "realistic"), st) if r is not None))


def _study_options(p, study, *, per, out, jobs):
    """``--replicates``, ``--seed``, ``--out``, ``--jobs``, ``--quiet``: every simulated study's."""
    p.add_argument("--replicates", type=positive_int, default=study.DEFAULT_REPLICATES,
                   help=f"logs per {per} (default %(default)s)")
    p.add_argument("--seed", type=int, default=study.DEFAULT_SEED,
                   help="root seed of the random streams (default %(default)s)")
    _add_run_options(p, out, jobs)


def _add_sequences(which):
    study = sequences_study
    seq = which.add_parser(
        "sequences",
        help="anytime-valid confidence sequences against the EL interval (coverage over all t, widths)",
        description="On the paper's synthetic environment, epsilon-greedy logs and a logging policy "
                    "that changes over time: how often the betting and DDRM confidence sequences "
                    "and the EL interval (looked at repeatedly) ever exclude the true value, their "
                    "widths at t = 1e3, 1e4, 1e5, and merges of 4 shards; write coverage.csv, "
                    "widths.csv, summary.md and sequences.png.",
    )
    _study_options(seq, study, per="environment", out="elcvx-sequences", jobs=1)
    seq.add_argument("--n", type=positive_int, default=study.DEFAULT_N,
                     help="examples per log (default %(default)s)")
    seq.add_argument("--quick", action="store_true",
                     help="a smoke run: 3 logs of 2000 examples per environment")
    seq.add_argument("--no-plots", action="store_true", help="do not draw the figure")


def _run_sequences(args) -> int:
    n, replicates = (2000, 3) if args.quick else (args.n, args.replicates)
    parts = ["elcvx", "reproduce", "sequences"] + (["--quick"] if args.quick else [
        "--replicates", str(replicates), "--n", str(n)])
    parts += ["--seed", str(args.seed), "--jobs", str(args.jobs), "--out", args.out]

    def run_all():
        study = sequences_study.run_study(n=n, replicates=replicates, seed=args.seed,
                                          jobs=args.jobs, progress=not args.quiet)
        return study, sequences_study.write(study, args.out, command=shlex.join(parts),
                                            plots=not args.no_plots)

    return _execute(run_all, lambda st: f"sequences study: {len(st['environments'])} environments x "
                                        f"{st['replicates']} logs of {st['n']} in {st['wall_time']:.1f} s "
                                        f"with {st['jobs']} job(s)")


def _size_draws(text):
    try:
        n, r = (int(t) for t in text.split("="))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not N=DRAWS") from None
    if n < 1 or r < 2:
        raise argparse.ArgumentTypeError(f"{text!r}: N must be >= 1 and DRAWS >= 2")
    return n, r


def _add_calibration(which):
    cal = which.add_parser(
        "calibration",
        help="coverage and width of the EL interval under each calibration, with the diagnosis",
        description="The synthetic study's draws again: the EL interval with the chi2, F and "
                    "bootstrap calibrations, and the likelihood-ratio statistic at the true value "
                    "split by what the sample shows at the largest weight; write calibration.csv, "
                    "calibration_diagnosis.csv and calibration.md.",
    )
    cal.add_argument("--replicates", type=positive_int, default=synthetic.DEFAULT_REPLICATES,
                     help="environment draws per sample size (default %(default)s)")
    cal.add_argument("--replicates-at", type=_size_draws, nargs="+", default=[], metavar="N=DRAWS",
                     help="other draws at some sizes, e.g. 10=1000 (the bootstrap's cost)")
    cal.add_argument("--resamples", type=positive_int, default=DEFAULT_RESAMPLES,
                     help="bootstrap resamples (default %(default)s)")
    cal.add_argument("--seed", type=int, default=synthetic.DEFAULT_SEED,
                     help="root seed: the synthetic study's (default %(default)s)")
    cal.add_argument("--sizes", type=positive_int, nargs="+", default=list(synthetic.DEFAULT_SIZES),
                     metavar="N", help="sample sizes (default: the synthetic study's)")
    cal.add_argument("--out", default="elcvx-calibration", help="output directory (default %(default)s)")
    cal.add_argument("--jobs", type=positive_int, default=2,
                     help="worker processes (default %(default)s; results do not depend on it)")
    cal.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    cal.set_defaults(func=run)


def _run_calibration(args) -> int:
    parts = ["elcvx", "reproduce", "calibration", "--replicates", str(args.replicates)]
    if args.replicates_at:
        parts += ["--replicates-at"] + [f"{n}={r}" for n, r in args.replicates_at]
    parts += _sizes_option(args, synthetic.DEFAULT_SIZES)
    parts += ["--resamples", str(args.resamples), "--seed", str(args.seed), "--jobs", str(args.jobs),
              "--out", args.out]

    def run_all():
        study = calibration.run_study(args.sizes, args.replicates, args.seed,
                                      replicates_at=dict(args.replicates_at), jobs=args.jobs,
                                      resamples=args.resamples, progress=not args.quiet)
        return study, study.write(args.out, command=shlex.join(parts))

    return _execute(run_all, lambda st: f"calibration study: {len(st.sizes)} sizes, "
                                        f"{sum(st.replicates.values())} draws in {st.wall_time:.1f} s")


def _run_constraints(args) -> int:
    parts = ["elcvx", "reproduce", "constraints", "--replicates", str(args.replicates),
             "--seed", str(args.seed), "--jobs", str(args.jobs), "--out", args.out]
    parts += _sizes_option(args, constraints_study.DEFAULT_SIZES)

    def run_all():
        study = constraints_study.run_study(args.sizes, args.replicates, args.seed, jobs=args.jobs,
                                            progress=not args.quiet)
        return study, study.write(args.out, command=shlex.join(parts))

    return _execute(run_all, lambda st: f"constraints study: {len(st.sizes)} sizes x "
                                        f"{st.replicates} replicates in {st.wall_time:.1f} s with "
                                        f"{st.jobs} job(s), {len(st.errors)} failure(s)")


def _realistic_command(args) -> str:
    parts = ["elcvx", "reproduce", "realistic", "--data-dir", args.data_dir,
             "--tables", ",".join(args.tables), "--replicates", str(args.replicates)]
    if args.learning_replicates is not None:
        parts += ["--learning-replicates", str(args.learning_replicates)]
    parts += ["--strategies", ",".join(args.strategies)]
    if args.datasets:
        parts += ["--datasets", ",".join(map(str, args.datasets))]
    if list(args.objectives) != list(realistic.OBJECTIVES):
        parts += ["--objectives", ",".join(args.objectives)]
    parts += ["--seed", str(args.seed), "--jobs", str(args.jobs), "--out", args.out]
    return shlex.join(parts)


def _execute(build, headline) -> int:
    """Run ``build() -> (study, written paths)`` and report; a user error is one line, status 2."""
    try:
        study, paths = build()
    except ElcvxError as exc:
        print(f"elcvx: error: {exc}", file=sys.stderr)
        return 2
    print(headline(study))
    for p in paths:
        print(f"wrote {p}")
    return 0


def _run_realistic(args) -> int:
    if (args.data_dir is None) == (args.merge is None):
        print("elcvx: error: give --data-dir (to run the experiments) or --merge RUN_DIR ... (to combine "
              "earlier runs), not both and not neither", file=sys.stderr)
        return 2
    if args.merge:
        def merge():
            study = realistic.merge_runs(args.merge)
            command = shlex.join(["elcvx", "reproduce", "realistic", "--merge", *args.merge, "--out", args.out])
            return study, study.write(args.out, command=command)

        return _execute(merge, lambda st: f"merged {len(args.merge)} runs: {len(st.datasets)} datasets x "
                                          f"{len(st.strategies)} strategies")

    def run_all():
        study = realistic.run_study(args.data_dir, tables=args.tables, replicates=args.replicates,
                                    learning_replicates=args.learning_replicates,
                                    strategies=args.strategies, datasets=args.datasets,
                                    seed=args.seed, jobs=args.jobs, objectives=args.objectives,
                                    progress=not args.quiet)
        return study, study.write(args.out, command=_realistic_command(args))

    return _execute(run_all, lambda st: f"realistic study: {len(st.datasets)} datasets x "
                                        f"{len(st.strategies)} strategies in {st.wall_time:.1f} s "
                                        f"with {st.jobs} job(s)")


def _command_line(args) -> str:
    parts = ["elcvx", "reproduce", "synthetic", "--replicates", str(args.replicates),
             "--seed", str(args.seed), "--jobs", str(args.jobs), "--out", args.out]
    parts += _sizes_option(args, synthetic.DEFAULT_SIZES)
    if args.confidence_level != 0.95:
        parts += ["--confidence-level", f"{args.confidence_level:g}"]
    return shlex.join(parts)


def _float_list(text):
    try:
        return [float(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of numbers") from None


def _add_data_options(parser, datasets_type, datasets_help):
    """``--data-dir`` (required) and ``--datasets``, as the LS paper's studies take them."""
    parser.add_argument("--data-dir", required=True,
                        help="folder of '<openml id>_<name>.csv.gz' files (e.g. "
                             "../shared/data/pessimism)")
    parser.add_argument("--datasets", type=datasets_type, default=None, help=datasets_help)


def _add_pessimism(which):
    pes = which.add_parser(
        "pessimism",
        help="finite-sample lower bounds against EL on the LS paper's tightness protocol",
        description="The LS paper's OPE tightness protocol (softmax policies of the label, "
                    "faulty logging on classes 0 and 1, flipped rewards; 45 configurations per "
                    "dataset): one-sided lower bounds at delta = 0.05 from EL, el-betting, LS, IX, "
                    "empirical Bernstein and the confidence sequences at t = N; write "
                    "bounds.csv.gz, summary.csv, published.csv, summary.md and pessimism.png.",
    )
    _add_data_options(pes, _id_list, "comma-separated OpenML ids (default: 181,54,30,28,184)")
    pes.add_argument("--seeds", type=positive_int, default=pessimism.DEFAULT_SEEDS,
                     help="logs per (dataset, configuration) (default %(default)s)")
    pes.add_argument("--seed", type=int, default=pessimism.DEFAULT_SEED,
                     help="root seed (default %(default)s)")
    pes.add_argument("--noises", type=_float_list, default=None,
                     help="reward noises among 0,0.1,0.2 (default all)")
    pes.add_argument("--targets", type=_float_list, default=None,
                     help="target temperatures among 0.1,...,0.5 (default all)")
    pes.add_argument("--logging", type=_float_list, default=None,
                     help="logging temperatures among 0.3,0.25,0.2 (default all)")
    pes.add_argument("--methods", type=_name_list(tuple(pessimism.METHODS), "method"),
                     default=list(pessimism.METHODS), help="comma-separated (default all)")
    pes.add_argument("--no-plots", action="store_true", help="do not draw the figure")
    _add_run_options(pes, "elcvx-pessimism")


def _run_pessimism(args) -> int:
    parts = ["elcvx", "reproduce", "pessimism", "--data-dir", args.data_dir]
    for flag, value in (("--datasets", args.datasets), ("--noises", args.noises),
                        ("--targets", args.targets), ("--logging", args.logging)):
        if value:
            parts += [flag, ",".join(f"{v:g}" if isinstance(v, float) else str(v) for v in value)]
    if list(args.methods) != list(pessimism.METHODS):
        parts += ["--methods", ",".join(args.methods)]
    parts += ["--seeds", str(args.seeds), "--seed", str(args.seed), "--jobs", str(args.jobs),
              "--out", args.out]

    def run_all():
        study = pessimism.run_study(args.data_dir, datasets=args.datasets, seeds=args.seeds,
                                    seed=args.seed, noises=args.noises, targets=args.targets,
                                    logging=args.logging, methods=tuple(args.methods),
                                    jobs=args.jobs, progress=not args.quiet)
        return study, pessimism.write(study, args.out, command=shlex.join(parts),
                                      plots=not args.no_plots)

    return _execute(run_all, lambda st: f"pessimism study: {len(st.datasets)} datasets x "
                                        f"{len(st.configs)} configurations x {st.seeds} logs in "
                                        f"{st.wall_time:.1f} s with {st.jobs} job(s)")


def _dataset_list(text):
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise argparse.ArgumentTypeError(f"{text!r}: no dataset given")
    return items


def _add_selection(which):
    sel = which.add_parser(
        "selection",
        help="choosing among four policies by lower bounds, on the LS paper's selection protocol",
        description="The LS paper's policy-selection protocol (four candidates: the perfect "
                    "policy, two linear softmax policies trained by gradient ascent on IPS and "
                    "SNIPS, the faulty logging policy; 10 logs per dataset): each method chooses "
                    "the candidate with the largest estimate or lower bound (delta = 0.05/4 per "
                    "candidate; ties to the lowest index); write summary.csv, trials.csv, "
                    "candidates.csv, published.csv, summary.md and selection.png.",
    )
    _add_data_options(sel, _dataset_list, "comma-separated OpenML ids or names (default: every "
                                          "file of the folder)")
    sel.add_argument("--trials", type=positive_int, default=selection.DEFAULT_TRIALS,
                     help="logs per dataset, trial i seeded i as the authors' (default %(default)s)")
    sel.add_argument("--steps", type=positive_int, default=selection.STEPS,
                     help="gradient-ascent steps of each trained candidate (default %(default)s, "
                          "the published protocol's; fewer for a quick look)")
    sel.add_argument("--methods", type=_name_list(tuple(selection.METHODS), "method"), default=None,
                     help="comma-separated (default: all this installation has; 'select' needs "
                          "elcvx.select)")
    sel.add_argument("--no-plots", action="store_true", help="do not draw the figure")
    _add_run_options(sel, "elcvx-selection", jobs=1)


def _run_selection(args) -> int:
    parts = ["elcvx", "reproduce", "selection", "--data-dir", args.data_dir]
    if args.datasets:
        parts += ["--datasets", ",".join(args.datasets)]
    if args.methods:
        parts += ["--methods", ",".join(args.methods)]
    parts += ["--trials", str(args.trials)]
    if args.steps != selection.STEPS:
        parts += ["--steps", str(args.steps)]
    parts += ["--jobs", str(args.jobs), "--out", args.out]

    def run_all():
        study = selection.run_study(args.data_dir, datasets=args.datasets, trials=args.trials,
                                    steps=args.steps, methods=args.methods, jobs=args.jobs,
                                    progress=not args.quiet)
        return study, selection.write(study, args.out, command=shlex.join(parts),
                                      plots=not args.no_plots)

    return _execute(run_all, lambda st: f"selection study: {len(st.datasets)} datasets x "
                                        f"{st.trials} trials x {len(st.methods)} methods in "
                                        f"{st.wall_time:.1f} s with {st.jobs} job(s)")


def run(args) -> int:
    """Execute ``reproduce <experiment>`` from parsed arguments; return the exit status."""
    if getattr(args, "experiment", None) == "pessimism":
        return _run_pessimism(args)
    if getattr(args, "experiment", None) == "selection":
        return _run_selection(args)
    if getattr(args, "experiment", None) == "validity":
        return validity_command.run(args)
    if getattr(args, "experiment", None) == "realistic":
        return _run_realistic(args)
    if getattr(args, "experiment", None) == "constraints":
        return _run_constraints(args)
    if getattr(args, "experiment", None) == "sequences":
        return _run_sequences(args)
    if getattr(args, "experiment", None) == "rho":
        return _run_rho(args)
    if getattr(args, "experiment", None) == "calibration":
        return _run_calibration(args)
    if getattr(args, "experiment", None) != "synthetic":
        print(f"elcvx: error: unknown experiment {getattr(args, 'experiment', None)!r}", file=sys.stderr)
        return 2
    def run_all():
        study = synthetic.run_study(args.sizes, args.replicates, args.seed, jobs=args.jobs,
                                    confidence_level=args.confidence_level,
                                    progress=not args.quiet)
        return study, study.write(args.out, plots=not args.no_plots, command=_command_line(args))

    return _execute(run_all, lambda st: f"synthetic study: {len(st.sizes)} sizes x {st.replicates} "
                                        f"replicates in {st.wall_time:.1f} s with {st.jobs} job(s)")


def main(argv=None) -> int:
    """Stand-alone entry point: ``python -m elcvx.experiments.cli reproduce synthetic ...``."""
    parser = argparse.ArgumentParser(prog="elcvx", description="Rerun the paper's experiments.")
    sub = parser.add_subparsers(dest="command", required=True)
    add_reproduce_parser(sub)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
