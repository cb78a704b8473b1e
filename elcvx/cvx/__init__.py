"""The cvxpy path: every EL program as a cvxpy program of :mod:`elcvx.programs`, solved by
Clarabel, and Clarabel's own answer certified by :mod:`elcvx.certify` (:mod:`~elcvx.cvx.solve`
says how); :mod:`~elcvx.cvx.inner` certifies the learning game's inner program. Imported only
when used: cvxpy is slow to import and the fast path never needs it.
"""

from .solve import (REFINED, Rejected, certify_lower_bound, certify_mle, certify_profile,
                    lower_bound, mle, mle_of, profile)

__all__ = ["REFINED", "Rejected", "certify_lower_bound", "certify_mle", "certify_profile",
           "lower_bound", "mle", "mle_of", "profile"]
