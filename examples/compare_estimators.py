"""Every estimator and interval of elcvx on the bundled example log, as a Markdown table.

    python examples/compare_estimators.py
"""

import elcvx
from elcvx import baselines as bl
from elcvx import cressie_read as cr
from elcvx.datasets import example_log


def main():
    s = example_log()
    rows = [
        ("EL (`elcvx.estimate`, `elcvx.interval`)", elcvx.estimate(s).value, elcvx.interval(s)),
        ("EL, F calibration", elcvx.estimate(s).value, elcvx.interval(s, calibration="f")),
        ("Cressie–Read λ=−2 (`elcvx.cressie_read`)", cr.estimate(s).value, cr.interval(s)),
        ("IPS + Gaussian interval (ddof=1)", bl.ips(s).value, bl.gaussian_interval(s)),
        ("IPS + Clopper–Pearson interval on w r/wmax", bl.ips(s).value, bl.clopper_pearson_interval(s)),
        ("SNIPS", bl.snips(s).value, None),
        ("ClippedDR (ρ = ½)", bl.clipped_dr(s).value, None),
        ("EMP (Kallus–Uehara, constant predictor)", bl.emp(s).value, None),
    ]
    print(f"Example log: N = {s.n:g}, wmax = {s.wmax:g}; 95% intervals\n")
    print("| method | estimate | 95% interval | width |\n|---|---:|---|---:|")
    for name, value, ci in rows:
        cell = f"[{ci[0]:.4f}, {ci[1]:.4f}] | {ci[1] - ci[0]:.4f}" if ci is not None else "— | —"
        print(f"| {name} | {value:.4f} | {cell} |")


if __name__ == "__main__":
    main()
