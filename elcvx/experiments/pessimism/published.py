"""The published per-configuration radii of the LS paper, summarised for the study's datasets.

Source: ``ope_ops/ope_results/all_radiuses.csv`` of ``otmhi/offpolicy_ls`` at commit
``1fa73795f197d77e41d2e67972be4b09987711ab``, the output of its ``ope_ops/policy_evaluation.py``:
one row per (dataset, reward noise, target temperature, logging temperature), one seed, the
normalised radius ``(V - LB)/V`` (0 when ``LB >= V``) of each bound at ``delta = 0.05``. Over the
45 rows of each dataset: the mean, the median, and the rows with radius 0 (a bound at or above
the value). The columns: ``LS Bound`` (LS), ``Implicit Exploration Bound`` (IX), ``Emp. Bernstein
for CIPS`` (EB), ``ESLB``.
"""

#: ``method -> dataset -> (mean, median, rows with radius 0)``; ``"all"``: the 225 rows of the
#: five datasets together.
PUBLISHED = {
    "ls": {"yeast": (0.254384, 0.272588, 1), "vehicle": (0.357701, 0.34462, 0),
           "page-blocks": (0.311509, 0.278991, 0), "optdigits": (0.11298, 0.112848, 1),
           "kropt": (0.060014, 0.059204, 0), "all": (0.219318, 0.204274, 2)},
    "ix": {"yeast": (0.307344, 0.320961, 0), "vehicle": (0.408969, 0.393445, 0),
           "page-blocks": (0.370809, 0.332997, 0), "optdigits": (0.148275, 0.149048, 0),
           "kropt": (0.08744, 0.089633, 0), "all": (0.264567, 0.254547, 0)},
    "eb": {"yeast": (0.659779, 0.665717, 0), "vehicle": (0.86731, 0.887445, 0),
           "page-blocks": (0.54719, 0.448452, 0), "optdigits": (0.322541, 0.318941, 0),
           "kropt": (0.160756, 0.158106, 0), "all": (0.511515, 0.440548, 0)},
    "eslb": {"yeast": (0.861205, 0.847766, 0), "vehicle": (0.981378, 1.0, 0),
             "page-blocks": (0.759826, 0.710625, 0), "optdigits": (0.46807, 0.431042, 0),
             "kropt": (0.224186, 0.212109, 0), "all": (0.658933, 0.693797, 0)},
}
#: The rows per dataset in the published file (one seed of the 45 configurations).
PUBLISHED_ROWS = 45
