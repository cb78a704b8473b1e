"""Estimators beside EL: the finite-sample lower bounds (:mod:`elcvx.estimators.finite_sample`,
:mod:`elcvx.estimators.el_betting`), reached as :func:`elcvx.baselines.lower_bound` and
:func:`elcvx.baselines.upper_bound`."""
