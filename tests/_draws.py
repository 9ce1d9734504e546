"""Random problems shared by tests and benchmarks (the same seed gives the same problem everywhere)."""

import numpy as np


def weak_signal_problem(seed):
    """``(X, y, eps, group)``: a random weak-signal regression (correlated, partly binary, uncentred features), its
    relative ε and the group of features to switch."""
    rng = np.random.default_rng(seed)
    n, p = int(rng.choice([300, 3000, 20000])), int(rng.integers(2, 9))
    C = rng.normal(size=(p, p)) * rng.uniform(0, 1)
    X = rng.normal(size=(n, p)) @ (np.eye(p) + C)
    k = int(rng.integers(0, p))
    X[:, :k] = X[:, :k] > 0
    sig = 10 ** rng.uniform(-2.5, 0)
    y = X @ (rng.normal(size=p) * sig) + rng.normal(size=n) * 10 ** rng.uniform(-1, 1.5) + rng.normal() * 5
    rng.uniform(-2, 2), rng.integers(4), rng.integers(2)  # draws kept: the seeds give the same problems
    eps = rng.uniform(0.1, 0.15)
    group = [int(j) for j in rng.choice(p, int(rng.integers(1, p)), replace=False)]
    return X, y, eps, group


def logistic_problem(n, p, seed):
    """``(X, y)``: n Gaussian rows of p features and labels drawn from a logistic model with intercept 0.3."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    beta = rng.normal(size=p) * 0.7
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-(X @ beta + 0.3)))).astype(int)
    return X, y
