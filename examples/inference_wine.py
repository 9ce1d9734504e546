"""
Inference over refits on red wine: which learner is better, and which features matter?
======================================================================================

1. Linear model vs regression tree vs random forest, compared pairwise with the
   Nadeau-Bengio corrected resampled t-test (15 subsampling refits).
2. For the forest: learner-PFI (corrected 95% intervals over refits) next to model-PFI of one
   fit (Monte-Carlo intervals over rows).

Run it::

    python examples/inference_wine.py
"""

from __future__ import annotations

import argparse

from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeRegressor

from rashomon import corrected_resampled_ttest, learner_importance, model_importance_ci
from rashomon.datasets import load_wine_quality


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--refits", type=int, default=15)
    ap.add_argument("--trees", type=int, default=200)
    ap.add_argument("--n-jobs", type=int, default=2)
    args = ap.parse_args(argv)
    wine = load_wine_quality("red")
    X, y = wine.drop(columns="quality"), wine["quality"]
    learners = {
        "linear model": LinearRegression(),
        "tree": DecisionTreeRegressor(min_samples_leaf=10, random_state=0),
        "random forest": RandomForestRegressor(n_estimators=args.trees, min_samples_leaf=2, random_state=0, n_jobs=1),
    }
    names = list(learners)
    print("corrected resampled t-tests (held-out MSE, a - b; subsampling 63.2/36.8):")
    for i in range(3):
        for j in range(i + 1, 3):
            t = corrected_resampled_ttest(
                learners[names[i]], learners[names[j]], X, y, n_refits=args.refits, random_state=0, n_jobs=args.n_jobs
            )
            print(
                f"  {names[i]:>13s} - {names[j]:<13s}: {t.mean_difference:+.4f} "
                f"[{t.ci_lower:+.4f}, {t.ci_upper:+.4f}], t = {t.t_statistic:+.2f}, p = {t.p_value:.2g}"
            )
    forest = learners["random forest"]
    lpfi = learner_importance(
        forest, X, y, n_refits=args.refits, resampling="subsampling", random_state=0, n_jobs=args.n_jobs
    )
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.368, random_state=0)
    mpfi = model_importance_ci(forest.fit(Xtr, ytr), Xte, yte, n_repeats=10, random_state=0)
    table = lpfi.to_frame().add_prefix("learner_").join(mpfi.to_frame().add_prefix("model_"))
    table = table.sort_values("learner_importance", ascending=False)
    print("\nforest: learner-PFI (corrected) vs model-PFI (one fit, Monte-Carlo CI)")
    print(
        table[
            [
                "learner_importance",
                "learner_ci_lower",
                "learner_ci_upper",
                "model_importance",
                "model_ci_lower",
                "model_ci_upper",
            ]
        ]
        .round(4)
        .to_string()
    )
    return 0


if __name__ == "__main__":
    status = main()
    if status:  # a script's exit status; none when it succeeds (sphinx-gallery runs it in-process)
        raise SystemExit(status)
