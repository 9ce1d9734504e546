"""
MCR envelope on real data: how much could any good linear model of red-wine quality rely on alcohol?
====================================================================================================

Run it::

    python examples/wine_envelope.py --out wine-output
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from rashomon import LinearModelClass, feature_reliance, mcr_envelope  # noqa: E402
from rashomon.datasets import load_wine_quality  # noqa: E402
from rashomon.utils import save_figure  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=Path("wine-output"))
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    wine = load_wine_quality("red")
    X, y = wine.drop(columns="quality"), wine["quality"]
    env = mcr_envelope(LinearModelClass(), X, y, "alcohol", epsilons=[0.01, 0.02, 0.05, 0.1, 0.2])
    print(env.to_frame().assign(epsilon_relative=[0.01, 0.02, 0.05, 0.1, 0.2]).round(4).to_string(index=False))
    # one panel above the other: at the width of a page (about 8 inches) the labels stay legible
    fig, axes = plt.subplots(2, 1, figsize=(7.5, 8), layout="constrained")
    env.plot(ax=axes[0], epsilon=env.epsilons[3])
    axes[0].set_title("MCR envelope, alcohol (ε = 10% above the best loss)")
    env.plot_band(ax=axes[1])
    axes[1].set_title("MCR of alcohol against ε")
    save_figure(fig, args.out / "wine_alcohol_envelope.png", dpi=120)
    ref = env.results[0].reference_model
    print(f"loss-minimising ridge-bounded model: MR(alcohol) = {ref.mr:.4f}")
    from sklearn.linear_model import RidgeCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    model = make_pipeline(StandardScaler(), RidgeCV()).fit(X, y)
    fr = feature_reliance(model, X, y)
    print(fr.to_frame().sort_values("ratio", ascending=False).round(4).head(5).to_string())
    fig2, ax = plt.subplots(figsize=(6, 4.5))
    fr.plot(ax=ax)
    fig2.tight_layout()
    save_figure(fig2, args.out / "wine_reliance.png", dpi=120)
    print(f"figures in {args.out}/")
    return 0


if __name__ == "__main__":
    status = main()
    if status:  # a script's exit status; none when it succeeds (sphinx-gallery runs it in-process)
        raise SystemExit(status)
