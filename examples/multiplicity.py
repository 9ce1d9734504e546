"""
Beyond reliance on Pima diabetes: prediction ranges, predictive multiplicity, coefficient ranges and the variable importance cloud of one Rashomon set.
=======================================================================================================================================================

A linear score of the 0/1 outcome, thresholded at 0.5 (a linear probability model), with ε by the
one-standard-error rule (models whose loss is within one standard error of the cross-validated loss
cannot be told apart). Every answer is exact for this class: the ranges are certified bounds with a
member of the set attaining each end.

Run it::

    python examples/multiplicity.py --out multiplicity-output [--json multiplicity.json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from rashomon import LinearModelClass, select_epsilon  # noqa: E402
from rashomon.datasets import load_pima_diabetes  # noqa: E402
from rashomon.utils import save_figure, write_text  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").strip().split("\n")[0])
    ap.add_argument("--out", type=Path, default=Path("multiplicity-output"))
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--n-models", type=int, default=2000)
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)

    df = load_pima_diabetes()
    X, y = df.drop(columns="Outcome"), df["Outcome"].astype(float)
    mc = LinearModelClass()
    choice = select_epsilon(mc, X, y, rule="cv_1se", cv=10, random_state=0)
    rs = choice.rashomon_set(mc).fit(X, y)
    print(choice.description)
    print(f"{rs}\n")

    # 1. prediction ranges and 2. predictive multiplicity of the decision score > 0.5
    mult = rs.multiplicity(threshold=0.5)
    widths = mult.ranges.width_quantiles()
    print("Predictive multiplicity of 'score > 0.5' (768 women):")
    print(f"  ambiguity (some good model flips the decision): {mult.ambiguity:.1%} ({int(mult.flips.sum())} rows)")
    print(
        f"  discrepancy (one model flips the most): between {mult.discrepancy_lower:.1%} (attained by a member)"
        f" and {mult.discrepancy_upper:.1%}"
    )
    print("  width of the prediction ranges, quantiles:", widths.round(4).to_dict())

    # 3. coefficient ranges and sign stability
    cr = rs.coef_range()
    print("\nCoefficient ranges over the set (per unit of each feature):")
    print(cr.to_frame()[["coefficient", "lower", "reference", "upper", "sign_stable"]].round(5).to_string(index=False))

    # 4. sampled members and 5. the importance cloud
    smp = rs.sample(args.n_models, random_state=0)
    cloud = rs.importance_cloud(n_models=args.n_models, random_state=0)
    print(f"\n{len(smp)} members sampled ({smp.method}); the importance cloud (MR ratio):")
    print(cloud.to_frame().round(4).to_string(index=False))

    fig, axes = plt.subplots(2, 2, figsize=(15, 9.5), layout="constrained")
    mult.plot(ax=axes[0, 0])
    mult.ranges.plot(ax=axes[0, 1], kind="widths")
    rs.coef_range(standardize=True).plot(ax=axes[1, 0])
    axes[1, 0].set_title("Coefficient ranges per SD of each feature")
    cloud.plot(ax=axes[1, 1])
    save_figure(fig, args.out / "pima_multiplicity.png", dpi=110)
    print(f"\nfigure: {args.out / 'pima_multiplicity.png'}")
    if args.json:
        out = {
            "epsilon_rule": choice.description,
            "epsilon_abs": rs.epsilon_abs_,
            "e_ref": rs.e_ref_,
            "ambiguity": mult.ambiguity,
            "discrepancy": [mult.discrepancy_lower, mult.discrepancy_upper],
            "n_flippable": int(mult.flips.sum()),
            "median_width": float(np.median(mult.ranges.width)),
            "sign_stable": dict(zip(cr.names, map(bool, cr.sign_stable))),
            "sample_method": smp.method,
        }
        write_text(args.json, json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    status = main()
    if status:  # a script's exit status; none when it succeeds (sphinx-gallery runs it in-process)
        raise SystemExit(status)
