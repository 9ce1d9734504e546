"""
PD/ICE and the Rashomon PD band on bundled data: bike sharing (temperature, year) and red wine (alcohol).
=========================================================================================================

A random forest gives the ICE curves; the band is the range of PD over every
model of a class whose loss is within ε of the best (a kernel class for bikes,
a linear class for wine).

Run it::

    python examples/pd_examples.py --out pd-output
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from sklearn.ensemble import RandomForestRegressor  # noqa: E402

from rashomon import KernelModelClass, LinearModelClass, partial_dependence, pd_importance, rashomon_pd_band  # noqa: E402
from rashomon.datasets import load_bike_sharing, load_wine_quality  # noqa: E402
from rashomon.utils import save_figure  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=Path("pd-output"))
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)

    bikes = load_bike_sharing("day")
    feats = ["temp", "yr", "hum", "windspeed", "season", "workingday", "weathersit"]
    X, y = bikes[feats], bikes["cnt"] / 1000.0  # thousands of rentals
    forest = RandomForestRegressor(n_estimators=200, min_samples_leaf=5, random_state=0).fit(X, y)
    mc = KernelModelClass(kernel="rbf", dictionary=150, random_state=0)
    fig, axes = plt.subplots(1, 2, figsize=(15, 4.5))
    for ax, feat in zip(axes, ["temp", "yr"]):
        ice = partial_dependence(forest, X, feat, kind="both", grid_resolution=20)
        band = rashomon_pd_band(mc, X, y, feat, epsilon=0.05, grid=ice.grid[0])
        band.plot(ax=ax, pd_result=ice)
        ax.set_title(f"bike rentals (thousands/day): {feat}")
        print(
            f"bikes, {feat}: forest PD {ice.average[0].min():.2f}..{ice.average[0].max():.2f}; "
            f"Rashomon band (kernel class, eps 5%) at the ends: [{band.lower[0]:.2f}, {band.upper[0]:.2f}] .. "
            f"[{band.lower[-1]:.2f}, {band.upper[-1]:.2f}]; max duality gap {band.duality_gap.max():.1e}"
        )
    fig.tight_layout()
    save_figure(fig, args.out / "bike_pd_band.png", dpi=120)

    wine = load_wine_quality("red")
    Xw, yw = wine.drop(columns="quality"), wine["quality"]
    forest_w = RandomForestRegressor(n_estimators=200, min_samples_leaf=5, random_state=0).fit(Xw, yw)
    ice = partial_dependence(forest_w, Xw, "alcohol", kind="both", grid_resolution=20)
    band = rashomon_pd_band(LinearModelClass(), Xw, yw, "alcohol", epsilon=0.05, grid=ice.grid[0])
    fig, ax = plt.subplots(figsize=(8.5, 4.5))
    band.plot(ax=ax, pd_result=ice)
    ax.set_title("red wine quality: alcohol")
    fig.tight_layout()
    save_figure(fig, args.out / "wine_pd_band.png", dpi=120)
    print(
        f"wine, alcohol: forest PD {ice.average[0].min():.2f}..{ice.average[0].max():.2f}; linear-class band at "
        f"{band.grid[0]:.1f}%: [{band.lower[0]:.2f}, {band.upper[0]:.2f}], at {band.grid[-1]:.1f}%: "
        f"[{band.lower[-1]:.2f}, {band.upper[-1]:.2f}]"
    )
    imp = pd_importance(forest_w, Xw)
    print(
        "PD importance (forest, wine):",
        imp.to_frame().sort_values("importance", ascending=False).head(3)["importance"].round(3).to_dict(),
    )
    print(f"figures in {args.out}/")
    return 0


if __name__ == "__main__":
    status = main()
    if status:  # a script's exit status; none when it succeeds (sphinx-gallery runs it in-process)
        raise SystemExit(status)
