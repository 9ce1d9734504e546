"""
Importance for predictive uncertainty on real data (Wood et al.): concrete and Pima diabetes.
=============================================================================================

Concrete: Gaussian process (RBF + white noise), 75/25 split; likelihood-PFI and entropy-PFI
on the test part. Pima: random forest (500 trees, depth 8) calibrated with a sigmoid on 20% of
the training data (80/20); likelihood- and entropy-PFI, and the entropy-PD of glucose (plas).

Run it::

    python examples/uncertainty_examples.py --out uncertainty-output
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.calibration import CalibratedClassifierCV  # noqa: E402
from sklearn.ensemble import RandomForestClassifier  # noqa: E402
from sklearn.frozen import FrozenEstimator  # noqa: E402
from sklearn.gaussian_process import GaussianProcessRegressor  # noqa: E402
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

from rashomon import entropy_importance, likelihood_importance, uncertainty_pd  # noqa: E402
from rashomon.datasets import load_concrete, load_pima_diabetes  # noqa: E402
from rashomon.plotting import UncertaintyPDDisplay  # noqa: E402
from rashomon.utils import save_figure  # noqa: E402


def concrete(out, seed=0, n_trees=None):
    df = load_concrete()
    X, y = df.drop(columns="strength"), df["strength"]
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=seed)
    mu, sd = Xtr.mean(), Xtr.std()
    ym, ys = ytr.mean(), ytr.std()
    kernel = ConstantKernel() * RBF(length_scale=np.ones(X.shape[1])) + WhiteKernel()
    gp = GaussianProcessRegressor(kernel, normalize_y=False, random_state=seed).fit((Xtr - mu) / sd, (ytr - ym) / ys)
    Zte = (Xte - mu) / sd
    lik = likelihood_importance(gp, Zte, (yte - ym) / ys, n_repeats=10, random_state=seed)
    ent = entropy_importance(gp, Zte, n_repeats=10, random_state=seed)
    table = (
        lik.to_frame()
        .rename(columns={"std": "std_lik"})
        .join(ent.to_frame().rename(columns={"std": "std_ent"}))
        .sort_values("likelihood_pfi", ascending=False)
    )
    print("concrete (GP, 75/25):\n" + table.round(3).to_string())
    fig, ax = plt.subplots(figsize=(7, 4.5))
    lik.plot(other=ent, ax=ax)
    ax.set_title("concrete: likelihood- vs entropy-PFI (GP)")
    fig.tight_layout()
    save_figure(fig, out / "concrete_uncertainty_pfi.png", dpi=120)
    return lik, ent


def pima(out, seed=0, n_trees=500):
    df = load_pima_diabetes()
    X, y = df.drop(columns="Outcome"), df["Outcome"]
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, random_state=seed, stratify=y)
    Xfit, Xcal, yfit, ycal = train_test_split(Xtr, ytr, test_size=0.2, random_state=seed, stratify=ytr)
    rf = RandomForestClassifier(n_estimators=n_trees, max_depth=8, random_state=seed).fit(Xfit, yfit)
    model = CalibratedClassifierCV(FrozenEstimator(rf), method="sigmoid").fit(Xcal, ycal)
    lik = likelihood_importance(model, Xte, yte, n_repeats=10, random_state=seed)
    ent = entropy_importance(model, Xte, n_repeats=10, random_state=seed)
    table = (
        lik.to_frame()
        .rename(columns={"std": "std_lik"})
        .join(ent.to_frame().rename(columns={"std": "std_ent"}))
        .sort_values("likelihood_pfi", ascending=False)
    )
    print("pima (calibrated RF):\n" + table.round(4).to_string())
    curve = uncertainty_pd(model, X, "Glucose", measure="entropy", grid_resolution=30)
    peak = curve.grid[0][int(np.argmax(curve.average[0]))]
    print(f"entropy-PD of Glucose (plas) peaks at {peak:.0f} (range {curve.grid[0][0]:.0f}..{curve.grid[0][-1]:.0f})")
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.5))
    lik.plot(other=ent, ax=axes[0])
    axes[0].set_title("Pima: likelihood- vs entropy-PFI (calibrated RF)")
    UncertaintyPDDisplay(curve, color_by=y.to_numpy()).plot(ax=axes[1])
    axes[1].set_title("entropy ICE/PD of Glucose, coloured by outcome")
    fig.tight_layout()
    save_figure(fig, out / "pima_uncertainty.png", dpi=120)
    return lik, ent, peak


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=Path("uncertainty-output"))
    ap.add_argument("--trees", type=int, default=500)
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    concrete(args.out)
    pima(args.out, n_trees=args.trees)
    print(f"figures in {args.out}/")
    return 0


if __name__ == "__main__":
    status = main()
    if status:  # a script's exit status; none when it succeeds (sphinx-gallery runs it in-process)
        raise SystemExit(status)
