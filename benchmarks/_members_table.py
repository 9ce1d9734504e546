"""Side-by-side table of classifier MCR members before/after (bench_tightness --json) against the reference of
bench_members.py (--worker ref output, one JSON or log per set).

    python benchmarks/_members_table.py /work/wt/members.json /work/wt/hm-ref
"""

from __future__ import annotations

import json
import os
import re
import sys

import numpy as np


def load_ref(d):
    ref = {}
    for f in sorted(os.listdir(d)):
        p = os.path.join(d, f)
        if f.endswith(".json") and os.path.getsize(p):
            try:
                with open(p) as fh:
                    ref.update(json.loads(fh.read().strip().splitlines()[-1]))
                continue
            except (json.JSONDecodeError, IndexError):
                pass
        if f.endswith(".log"):
            for line in open(p):
                m = re.match(r"\s*ref (.+): (\S+) (\S+) (\S+)s", line)
                if m and m.group(1) not in ref:
                    ref[m.group(1)] = {"min": float(m.group(2)), "max": float(m.group(3))}
    return ref


def main(bench, refdir):
    with open(bench) as fh:
        b = json.load(fh)
    ref = load_ref(refdir)
    print(
        f"{'set|loss|feature':<44} {'lower b→a':>19} {'ref':>8} {'upper b→a':>19} {'ref':>8}"
        f" {'up gap b→a':>15} {'lo gap b→a':>15} {'s b→a':>11}"
    )
    per = {}
    for key, rows_a in b["after"].items():
        if key.startswith("_"):
            continue
        rows_b = {r["feature"]: r for r in b["before"][key]}
        for ra in rows_a:
            rb = rows_b[ra["feature"]]
            k = f"{key}|{ra['feature']}"
            R = ref.get(k, {})
            rmax = max(R.get("max", -np.inf), ra["upper_member"], rb["upper_member"])
            rmin = min(R.get("min", np.inf), ra["lower_member"], rb["lower_member"])
            s = per.setdefault(
                key, {"up_b": [], "up_a": [], "lo_b": [], "lo_a": [], "t_b": [], "t_a": [], "imp_up": [], "imp_lo": []}
            )
            s["up_b"].append((rmax - rb["upper_member"]) / abs(rmax))
            s["up_a"].append((rmax - ra["upper_member"]) / abs(rmax))
            s["lo_b"].append((rb["lower_member"] - rmin) / abs(rmin))
            s["lo_a"].append((ra["lower_member"] - rmin) / abs(rmin))
            s["imp_up"].append((ra["upper_member"] - rb["upper_member"]) / abs(rb["upper_member"]))
            s["imp_lo"].append((rb["lower_member"] - ra["lower_member"]) / abs(rb["lower_member"]))
            s["t_b"].append(rb["seconds"])
            s["t_a"].append(ra["seconds"])
            print(
                f"{k[:44]:<44} {rb['lower_member']:9.5f}→{ra['lower_member']:9.5f} {R.get('min', np.nan):8.5f} "
                f"{rb['upper_member']:9.4f}→{ra['upper_member']:9.4f} {R.get('max', np.nan):8.4f} "
                f"{rb['upper_gap']:7.2%}→{ra['upper_gap']:7.2%} {rb['lower_gap']:7.2%}→{ra['lower_gap']:7.2%} "
                f"{rb['seconds']:5.2f}→{ra['seconds']:5.2f}"
            )
    print()
    print(
        "Per set: members short of the best known (max of reference, before, after), relative; improvement after vs"
        " before (relative, + = better); wall seconds per feature (median, max)"
    )
    for key, s in per.items():
        f = lambda v: f"med {np.median(v):.2e} max {np.max(v):.2e} (>1e-4: {int(np.sum(np.array(v) > 1e-4))})"  # noqa: E731
        print(f"{key}: n={len(s['up_a'])}")
        print(f"   upper short: before {f(s['up_b'])}; after {f(s['up_a'])}")
        print(f"   lower short: before {f(s['lo_b'])}; after {f(s['lo_a'])}")
        print(
            f"   improvement upper: median {np.median(s['imp_up']):.3%} max {np.max(s['imp_up']):.3%} "
            f"min {np.min(s['imp_up']):.3%}; lower: median {np.median(s['imp_lo']):.3%} max "
            f"{np.max(s['imp_lo']):.3%} min {np.min(s['imp_lo']):.3%}"
        )
        print(
            f"   seconds: before med {np.median(s['t_b']):.2f} max {np.max(s['t_b']):.2f}; after med "
            f"{np.median(s['t_a']):.2f} max {np.max(s['t_a']):.2f}"
        )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
