"""Classifier MCR members (inner values) against an independent multi-start reference.

For every feature of the chosen sets, logistic and hinge (``RashomonSet(cls(), 0.1)``, ``kind="ratio"``): the MR of
our upper and lower members and the best found by :mod:`_members_reference` (SLSQP from θ_min and the points of S
furthest along ± every coordinate and random directions; cvxpy CCP steps for the hinge). Prints per feature the
relative amount by which the reference beats us (``(ref - ours)/|ref|`` for the upper end, ``(ours - ref)/|ref|``
for the lower), and per set the count, median and max. ``--trees A,B`` runs our MCR from several checkouts (the
reference once, in the first tree's process; it does not use our members).

    python benchmarks/bench_members.py --sets pima,bc6 [--trees /work/main,.] [--dirs 16] [--json F]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def ours(names, features=None):
    import rashomon

    sys.path.insert(0, HERE)
    from _tightness_classifier import load

    out = {}
    for name in names:
        X, y = load(name)
        for cls in (rashomon.LogisticModelClass, rashomon.HingeModelClass):
            rs = rashomon.RashomonSet(cls(), 0.1).fit(X, y)
            for f in X.columns if features is None else features:
                t = time.perf_counter()
                r = rs.model_class_reliance(f, kind="ratio")
                out[f"{name}|{rs.loss_}|{f}"] = {
                    "upper_member": r.upper_model.mr,
                    "lower_member": r.lower_model.mr,
                    "upper": r.upper,
                    "lower": r.lower,
                    "seconds": time.perf_counter() - t,
                    "upper_theta": list(map(float, r.upper_model.theta)),
                    "lower_theta": list(map(float, r.lower_model.theta)),
                }
    return out


def refs(names, n_dirs, features=None):
    import rashomon

    sys.path.insert(0, HERE)
    from _members_reference import extremes, reference
    from _tightness_classifier import load

    out = {}
    for name in names:
        X, y = load(name)
        for cls in (rashomon.LogisticModelClass, rashomon.HingeModelClass):
            rs = rashomon.RashomonSet(cls(), 0.1).fit(X, y)
            ms = rs._margin
            t = time.perf_counter()
            ext = extremes(ms.D, ms.y, ms.B, float(ms.r), float(rs.epsilon_abs_), rs.loss_ == "hinge", n_dirs)
            te = time.perf_counter() - t
            for f in X.columns if features is None else features:
                k = list(X.columns).index(f) + ms.o
                t = time.perf_counter()
                own = extremes(ms.D, ms.y, ms.B, float(ms.r), float(rs.epsilon_abs_), rs.loss_ == "hinge", 0, (k,))
                te2 = time.perf_counter() - t
                ref = reference(rs, X, f, [np.asarray(rs.theta_min_, float)] + own + ext)
                ref["seconds"] += te2
                out[f"{name}|{rs.loss_}|{f}"] = {
                    "max": ref["max"],
                    "min": ref["min"],
                    "seconds": ref["seconds"] + te / X.shape[1],
                }
                print(
                    f"  ref {name}|{rs.loss_}|{f}: {ref['min']:.6f} {ref['max']:.6f} {ref['seconds']:.1f}s",
                    file=sys.stderr,
                    flush=True,
                )
    return out


def run(tree, args, what):
    env = dict(os.environ, PYTHONPATH=tree, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", what, "--sets", args.sets, "--dirs", str(args.dirs)]
    if args.features:
        cmd += ["--features", args.features]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd="/")
    if p.returncode:
        raise SystemExit(p.stderr[-3000:])
    return json.loads(p.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", default="pima,bc6")
    ap.add_argument("--trees", default=ROOT)
    ap.add_argument("--dirs", type=int, default=10)
    ap.add_argument("--features")
    ap.add_argument("--ref-json", help="reuse the reference of an earlier --json")
    ap.add_argument("--json")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    feats = a.features.split("|") if a.features else None
    if a.worker:
        res = ours(a.sets.split(","), feats) if a.worker == "ours" else refs(a.sets.split(","), a.dirs, feats)
        print(json.dumps(res))
        return 0
    trees = [os.path.abspath(t) for t in a.trees.split(",")]
    got = {t: run(t, a, "ours") for t in trees}
    if a.ref_json:
        with open(a.ref_json) as fh:
            ref = json.load(fh)["ref"]
    else:
        ref = run(trees[0], a, "ref")
    lines = []
    for key in got[trees[0]]:
        R = ref.get(key)
        row = f"{key[:40]:<40}"
        for t in trees:
            o = got[t][key]
            up = (max(R["max"], o["upper_member"]) - o["upper_member"]) / abs(R["max"]) if R else float("nan")
            lo = (o["lower_member"] - min(R["min"], o["lower_member"])) / abs(R["min"]) if R else float("nan")
            o["up_short"], o["lo_short"] = up, lo
            row += f" | {o['lower_member']:.5f} {o['upper_member']:.5f} {lo:8.2e} {up:8.2e} {o['seconds']:5.2f}s"
        if R:
            row += f" | ref {R['min']:.5f} {R['max']:.5f} {R['seconds']:5.1f}s"
        lines.append(row)
    print("\n".join(lines))
    for t in trees:
        for side in ("up", "lo"):
            for s in sorted({k.rsplit("|", 1)[0] for k in got[t]}):
                v = np.array([o[f"{side}_short"] for k, o in got[t].items() if k.startswith(s + "|")])
                print(
                    f"{t}: {side} {s}: beaten (>1e-6 rel) on {int(np.sum(v > 1e-6))}/{len(v)}, "
                    f"median {np.median(v):.2e}, max {np.max(v):.2e}"
                )
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"ours": got, "ref": ref}, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
