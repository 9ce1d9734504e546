"""CPU seconds of ``RashomonSet.reliance_order`` on classifier sets, this tree against another (the baseline).

Cases (one BLAS thread, CPU seconds of the call alone, the set fitted before the clock starts):

- a 60 x 2 logistic set (ε = 0.05), ``reliance_order([0, 1])`` with the default ``critical=True``;
- COMPAS two-year (ProPublica's filters, 6,172 rows; race, sex and charge degree one-hot, priors count, age), a
  logistic set at ε = 0.01, ``reliance_order(["priors_count", "age", "sex_Male"])`` with ``critical=False``
  and ``critical=True``.

Each case runs in a child process with the interpreter and ``PYTHONPATH`` of the tree measured, so the baseline
is the code of another checkout (default ``/work/main``, run by its own ``.venv``) in the same run::

    python benchmarks/bench_reliance_order.py [--baseline /path/to/checkout] [--cases sixty compas compas_critical]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, time
import numpy as np, pandas as pd
from rashomon import LogisticModelClass, RashomonSet

case = sys.argv[1]
if case == "sixty":
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = (2.0 * X[:, 0] + 0.3 * X[:, 1] + rng.logistic(size=60) > 0).astype(float)
    rs, feats, crit = RashomonSet(LogisticModelClass(), 0.05).fit(X, y), [0, 1], True
else:
    from rashomon.datasets import load_compas

    c = load_compas()
    X = pd.get_dummies(c[["race", "sex", "c_charge_degree"]], drop_first=True, dtype=float)
    X["priors_count"], X["age"] = c["priors_count"].astype(float), c["age"].astype(float)
    rs = RashomonSet(LogisticModelClass(), 0.01).fit(X, c["two_year_recid"])
    feats, crit = ["priors_count", "age", "sex_Male"], case == "compas_critical"
t = time.process_time()
o = rs.reliance_order(feats, critical=crit)
cpu = time.process_time() - t
rel = [
    [r.a, r.b, round(r.lower, 4), round(r.critical_epsilon_abs_lower, 6), round(r.critical_epsilon_abs_upper, 6)]
    for r in o.relations.itertuples()
]
print(json.dumps({"cpu": cpu, "relations": rel}))
"""

CASES = {
    "sixty": "60 x 2 logistic, critical=True",
    "compas": "COMPAS two-year, 3 features, critical=False",
    "compas_critical": "COMPAS two-year, 3 features, critical=True",
}


def run(root: Path, case: str) -> dict | None:
    py = root / ".venv" / "bin" / "python"
    env = dict(os.environ, PYTHONPATH=str(root), OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    res = subprocess.run(
        [str(py if py.exists() else sys.executable), "-c", CHILD, case],
        capture_output=True,
        text=True,
        env=env,
        cwd=root,  # "-c" puts the working directory first on sys.path
    )
    if res.returncode:
        print(f"{root} {case} failed:\n{res.stderr[-1500:]}")
        return None
    return json.loads(res.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").strip().split("\n")[0])
    ap.add_argument("--baseline", type=Path, default=Path("/work/main"), help="checkout of the code to compare")
    ap.add_argument("--cases", nargs="+", choices=list(CASES), default=list(CASES))
    args = ap.parse_args(argv)
    base = args.baseline if args.baseline.exists() and args.baseline.resolve() != HERE else None
    print(f"{'case':48s} {'baseline s':>11s} {'this tree s':>12s} {'ratio':>6s}")
    for case in args.cases:
        new = run(HERE, case)
        old = run(base, case) if base is not None else None
        b = f"{old['cpu']:11.1f}" if old else f"{'-':>11s}"
        n = f"{new['cpu']:12.1f}" if new else f"{'-':>12s}"
        ratio = f"{old['cpu'] / new['cpu']:5.1f}x" if old and new else ""
        print(f"{CASES[case]:48s} {b} {n} {ratio:>6s}")
        for name, r in (("baseline", old), ("this tree", new)):
            if r:
                print(f"    {name}: relations (a, b, lower, critical ε_abs lower, upper) {r['relations']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
