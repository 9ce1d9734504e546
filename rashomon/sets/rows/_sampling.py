"""Members drawn from a Rashomon set, and the variable importance cloud (Dong & Rudin 2020).

Sampling works in the coordinates that diagonalise the loss and the norm together
(:class:`~rashomon.sets.LinearFunctionalRange`), where the set is
``{z : Σ q z² - 2c̃'z + k <= ε, Σ s z² <= r}``; a linear map sends the uniform
distribution there to the uniform distribution in θ.

* ``"rejection"``: exact uniform draws inside the loss ellipsoid (a uniform point of
  the unit ball, scaled), kept when inside the norm ball. Exact, and efficient when
  the ball cuts little of the ellipsoid.
* ``"hit_and_run"``: a Markov chain whose stationary law is uniform on the set; each
  step moves to a uniform point of the chord through the current point in a random
  direction (chords exact from the two quadratics). Approximate for finite chains
  (burn-in ``10 d`` steps, ``d`` steps between kept draws, several chains).
* ``"auto"``: rejection when at least 5% of proposals are accepted, else hit-and-run.

Classifier classes (logistic, hinge: a convex set that is not an ellipsoid) are sampled by
hit-and-run with an exact membership oracle (:mod:`.margin._sample`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ...utils import DisplayMixin, single_blas_thread
from ...utils.validation import RashomonInputError, check_memory, check_new_rows, seed_from
from ._functional import quadratic_roots

__all__ = ["RashomonSample", "ImportanceCloud", "sample_members", "importance_cloud"]


@dataclass(frozen=True, repr=False)
class RashomonSample(DisplayMixin):
    """Members drawn from the set, each verified to satisfy its constraints.

    Attributes
    ----------
    thetas : ndarray of shape (n_models, d)
    e_orig : ndarray of shape (n_models,)
        Loss of each member (<= ``epsilon_abs``).
    norm : ndarray of shape (n_models,)
        ``θ'Bθ`` of each member (<= ``norm_bound``).
    method : {"rejection", "hit_and_run"}
    acceptance_rate : float
        Share of ellipsoid proposals inside the ball (NaN when not tried).
    epsilon_abs, norm_bound, e_min : float
    """

    thetas: np.ndarray = field(repr=False)
    e_orig: np.ndarray = field(repr=False)
    norm: np.ndarray = field(repr=False)
    method: str
    acceptance_rate: float
    epsilon_abs: float
    norm_bound: float
    e_min: float
    parametrization: Any = field(repr=False, default=None)
    feature_names: list | None = field(repr=False, default=None)

    def __len__(self) -> int:
        return int(self.thetas.shape[0])

    def _display_(self) -> tuple[dict, list]:
        fields = {"n_models": len(self), "method": self.method}
        if self.method == "rejection":  # the rate of a method that was not used is not shown
            fields["acceptance_rate"] = self.acceptance_rate
        fields.update(epsilon_abs=self.epsilon_abs, e_min=self.e_min, norm_bound=self.norm_bound)
        return fields, [
            ("members' loss and norm, quantiles", self._quantiles({"e_orig": self.e_orig, "norm": self.norm}))
        ]

    def estimators(self) -> list:
        """Each member as a fitted :class:`~rashomon.ClassMember`."""
        return [self.parametrization.estimator(t) for t in self.thetas]

    @property
    def n_features_in_(self) -> int:
        return int(self.parametrization.n_features)

    @property
    def feature_names_in_(self) -> np.ndarray:
        """Column names of the frame the set was fitted on (absent when it had none), as in scikit-learn."""
        names = getattr(self.parametrization, "feature_names_in_", None)
        if names is None:
            raise AttributeError("feature_names_in_")
        return names

    def predict(self, X: Any) -> np.ndarray:
        """Predictions of every member, shape (n_models, n_rows); a frame's columns are matched by name."""
        Xa = check_new_rows(X, self, "RashomonSample.predict")
        P, p0 = self.parametrization.prediction_map(Xa)
        return self.thetas @ P.T + p0[None, :]

    def to_frame(self) -> pd.DataFrame:
        """One row per member: loss, norm and the member's intercept and coefficients (``coef_<feature>``,
        linear classes) or its parameters θ (``theta_<j>``)."""
        df = pd.DataFrame({"e_orig": self.e_orig, "norm": self.norm})
        at = self.parametrization.member_attributes(self.thetas[0]) if len(self) else {}
        if "coef_" in at:
            coefs = np.array([self.parametrization.member_attributes(t)["coef_"] for t in self.thetas])
            ic = np.array([self.parametrization.member_attributes(t)["intercept_"] for t in self.thetas])
            df["intercept"] = ic
            names = self.feature_names or [f"x{j}" for j in range(coefs.shape[1])]
            for j, name in enumerate(names):
                df[f"coef_{name}"] = coefs[:, j]
        else:
            for j in range(self.thetas.shape[1]):
                df[f"theta_{j}"] = self.thetas[:, j]
        return df

    def plot(self, *, ax: Any = None, **kwargs: Any):
        """Histogram of the members' losses between e_min and ε_abs."""
        from ...plotting import SampleDisplay

        return SampleDisplay(self).plot(ax=ax, **kwargs)


@dataclass(frozen=True, repr=False)
class ImportanceCloud(DisplayMixin):
    """The variable importance cloud: MR of sampled members per feature, with the MCR interval.

    Attributes
    ----------
    features : list of str
    lower, upper : ndarray of shape (n_features,)
        Certified MCR bounds per feature (exact for the quadratic classes; for the classifier classes the
        results in ``mcr`` give the members attaining values and the gaps).
    reference : ndarray of shape (n_features,)
        MR of the set's reference.
    samples : ndarray of shape (n_models, n_features)
        MR of each sampled member (every one inside ``[lower, upper]``).
    kind : {"ratio", "difference"}
    method : str
        How the members were sampled.
    """

    features: list
    lower: np.ndarray
    upper: np.ndarray
    reference: np.ndarray
    samples: np.ndarray = field(repr=False)
    kind: str = "ratio"
    method: str = ""
    mcr: list = field(repr=False, default_factory=list)

    def to_frame(self) -> pd.DataFrame:
        """One row per feature: exact MCR, reference MR and the sampled members' spread."""
        s = self.samples
        return pd.DataFrame(
            {
                "feature": self.features,
                "mcr_lower": self.lower,
                "reference": self.reference,
                "mcr_upper": self.upper,
                "sample_min": s.min(axis=0),
                "sample_median": np.median(s, axis=0),
                "sample_max": s.max(axis=0),
            }
        )

    def _display_(self) -> tuple[dict, list]:
        fields = {
            "n_features": len(self.features),
            "n_models": int(self.samples.shape[0]),
            "kind": self.kind,
            "method": self.method,
            "MCR": {f: (lo, hi) for f, lo, hi in zip(self.features, self.lower, self.upper)},
        }
        df = self.to_frame()
        if len(self.mcr) == len(df):
            df["lower_tight"] = [r.lower_tight for r in self.mcr]
            df["upper_tight"] = [r.upper_tight for r in self.mcr]
            if not (df["lower_tight"].all() and df["upper_tight"].all()):  # the members' MRs inside the bounds
                df.insert(2, "mcr_lower_attained", [r.lower_attained for r in self.mcr])
                df.insert(4, "mcr_upper_attained", [r.upper_attained for r in self.mcr])
        return fields, [("", df.set_index("feature"))]

    def samples_frame(self) -> pd.DataFrame:
        """Long table: one row per (member, feature)."""
        n, f = self.samples.shape
        return pd.DataFrame(
            {"member": np.repeat(np.arange(n), f), "feature": np.tile(self.features, n), "mr": self.samples.ravel()}
        )

    def plot(self, *, ax: Any = None, **kwargs: Any):
        """The cloud: per feature the MCR interval, the sampled members' MR and the reference."""
        from ...plotting import ImportanceCloudDisplay

        return ImportanceCloudDisplay(self).plot(ax=ax, **kwargs)


def _chord(eng, zs, dirs):
    """``[lo, hi]`` of τ with ``zs + τ·dirs`` inside both constraints (zs inside)."""
    lo, hi = np.full(len(zs), -np.inf), np.full(len(zs), np.inf)
    zc = zs - eng.z_min[None, :]
    for h, g, slack in eng.constraints:
        a, b, c = eng.chord(zc, dirs, h, g, slack)
        l1, h1 = quadratic_roots(a, b, np.minimum(c, 0.0))
        lo, hi = np.maximum(lo, np.minimum(l1, 0.0)), np.minimum(hi, np.maximum(h1, 0.0))
    return lo, hi


def _hit_and_run(eng, n_models, rng):
    d = len(eng.q)
    n_chains = min(n_models, 32)
    per_chain = -(-n_models // n_chains)
    thin, burn = d, 10 * d
    zs = np.tile(eng.z_int, (n_chains, 1))
    out = []
    for step in range(burn + per_chain * thin):
        dirs = rng.standard_normal((n_chains, d))
        dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
        lo, hi = _chord(eng, zs, dirs)
        if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
            raise RashomonInputError("RashomonSet.sample: the set is unbounded in a sampled direction.")
        zs = zs + (lo + (hi - lo) * rng.random(n_chains))[:, None] * dirs
        if step >= burn and (step - burn + 1) % thin == 0:
            out.append(zs.copy())
    return np.concatenate(out, axis=0)[:n_models]


def _rejection(eng, n_models, rng, budget):
    """Uniform draws in the loss ellipsoid kept inside the ball; None when acceptance < 5%."""
    d = len(eng.q)
    if np.any(eng.q <= 1e-12 * eng.q.max()):
        return None, math.nan
    u = eng.ct / eng.q  # centre of the loss ellipsoid Σ q (z - u)² <= ρ²
    rho = math.sqrt(eng.slack + float(eng.q @ (eng.z_min - u) ** 2))
    kept: list[np.ndarray] = []
    tried = 0
    while sum(len(k) for k in kept) < n_models and tried < budget:
        m = max(1000, 2 * n_models)
        x = rng.standard_normal((m, d))
        x *= (rng.random(m) ** (1.0 / d) / np.linalg.norm(x, axis=1))[:, None]
        z = u + rho * x / np.sqrt(eng.q)
        kept.append(z[z**2 @ eng.s <= eng.r])
        tried += m
        rate = sum(len(k) for k in kept) / tried
        if rate < 0.05:
            return None, rate
    z = np.concatenate(kept)
    return (z[:n_models], sum(len(k) for k in kept) / tried) if len(z) >= n_models else (None, len(z) / tried)


def _margin_members(rs, ms, n_models, method, seed, func) -> RashomonSample:
    """Members of a classifier set (logistic / hinge): hit-and-run with exact membership
    (:func:`~rashomon.sets.margin._sample.sample_margin_members`), every member re-checked from scratch."""
    from ..margin import sample_margin_members, set_losses

    if method == "rejection":
        raise RashomonInputError(
            f"The 'method' parameter of {func} is 'rejection', which needs a quadratic class "
            f"(the loss ellipsoid); {type(rs.model_class).__name__} (loss={rs.loss_!r}) is sampled "
            "by method='hit_and_run' (or 'auto')."
        )
    par = rs.parametrization_
    th = sample_margin_members(rs, n_models, random_state=seed)
    e = set_losses(ms, th)
    # the sampler accepts e_orig <= ε exactly; recomputed here in another order of summation, the loss may differ
    # by a few units in the last place, hence 1e-12 relative
    nb = _check_members(th, e, rs.epsilon_abs_, par, 1e-12, func, "")
    return RashomonSample(
        th,
        e,
        nb,
        "hit_and_run",
        math.nan,
        rs.epsilon_abs_,
        par.r,
        rs.e_min_,
        par,
        list(rs._columns) if rs._columns else None,
    )


def _check_members(th, e, eps, par, rel, func, why):
    """The norms θ'Bθ of the members, after checking every one is in the set to ``rel`` (loss and ball)."""
    nb = np.einsum("ij,jk,ik->i", th, par.B, th)
    if np.any(e > eps * (1 + rel)) or np.any(nb > par.r * (1 + rel)):
        raise RashomonInputError(
            f"{func}: a sampled member violates the set's constraints by more than {rel:g} "
            f"relative{why}; please report this data."
        )
    return nb


def sample_members(rs, n_models: int, method: str, random_state: Any, func: str) -> RashomonSample:
    from ..margin import margin_set
    from ._ranges import engine_of

    rs._check_fitted(func.split(".")[-1])
    # the draws, their proposals and losses: about 8 float arrays of shape (n_models, d) at the peak
    check_memory(64.0 * n_models * rs.parametrization_.dim, "n_models", n_models, func, "the sampled members")
    seed = seed_from(random_state, func)
    ms = margin_set(rs)
    if ms is not None:
        return _margin_members(rs, ms, n_models, method, seed, func)
    rng = np.random.default_rng(seed)
    par = rs.parametrization_
    if rs._degenerate:
        th = np.tile(rs.theta_min_, (n_models, 1))
        used, rate = "exact (the set is one model)", math.nan
    else:
        eng = engine_of(rs, func)
        z, rate, used = None, math.nan, "hit_and_run"
        if method in ("auto", "rejection"):
            z, rate = _rejection(eng, n_models, rng, budget=max(20 * n_models, 20000))
            if z is None and method == "rejection":
                raise RashomonInputError(
                    f"{func}: rejection sampling accepted only {rate:.2%} of proposals (the norm "
                    "ball cuts most of the loss ellipsoid); use method='hit_and_run' or 'auto'."
                )
            used = "rejection" if z is not None else used
        if z is None:
            z = _hit_and_run(eng, n_models, rng)
        th = z @ eng.V.T
    excess = eng.loss_excess(th) if not rs._degenerate else np.zeros(n_models)
    e = rs.e_min_ + excess
    nb = _check_members(th, e, rs.epsilon_abs_, par, 1e-9, func, " (rounding on an ill-conditioned class)")
    return RashomonSample(
        th, e, nb, used, rate, rs.epsilon_abs_, par.r, rs.e_min_, par, list(rs._columns) if rs._columns else None
    )


def _feature_cloud(rs, f, kind, tol, thetas, e_orig, func):
    """MCR of one feature, the MR of the sampled members and of the reference (one task of importance_cloud)."""
    from ..margin import margin_set

    ms = margin_set(rs)
    r = rs.model_class_reliance(f, kind=kind, tol=tol)
    if ms is None:
        es = rs.problem(f, func=func).e_switch
        sw = es.evaluate_many(thetas)
    else:  # a classifier class: the exact all-pairs e_switch of the margin loss
        from ..margin import MarginTerms

        T = MarginTerms(ms.D, ms.y, np.asarray(rs._group(f, func), dtype=int) + ms.o)
        es = lambda th: T.e_switch(th, ms.loss)  # noqa: E731
        sw = np.array([es(t) for t in thetas])
    e_sw = es(rs.reference_theta_)
    ref = e_sw / rs.e_ref_ if kind == "ratio" else e_sw - rs.e_ref_
    return r, (sw / e_orig if kind == "ratio" else sw - e_orig), ref


def importance_cloud(rs, features, n_models, kind, method, random_state, tol, func, n_jobs=None) -> ImportanceCloud:
    from joblib import Parallel, delayed

    if features is None:
        features = list(rs._columns) if rs._columns else list(range(rs.n_features_in_))
    elif isinstance(features, (str, int, np.integer)):
        features = [features]
    if isinstance(features, (list, tuple, np.ndarray, pd.Index)) and len(features) == 0:
        raise RashomonInputError(
            f"The 'features' parameter of {func} must be None (every feature) or a non-empty "
            f"list of features or groups. Got {features!r} instead."
        )
    if not isinstance(features, (list, tuple, np.ndarray, pd.Index)):
        raise RashomonInputError(
            f"The 'features' parameter of {func} must be None, a feature or a list of features "
            f"or groups. Got {features!r} instead."
        )
    for f in features:  # every feature resolved before any sampling (a clear error naming the argument)
        rs._group(f, func)
    smp = sample_members(rs, n_models, method, random_state, func)
    # one BLAS thread in every task, in-process or in a worker: the same reductions, so the same bits for any n_jobs
    out = Parallel(n_jobs=n_jobs)(
        delayed(single_blas_thread)(_feature_cloud, rs, f, kind, tol, smp.thetas, smp.e_orig, func) for f in features
    )
    res = [o[0] for o in out]
    names, lo, hi = [", ".join(r.features) for r in res], [r.lower for r in res], [r.upper for r in res]
    cols, ref = [o[1] for o in out], [o[2] for o in out]
    return ImportanceCloud(
        names, np.array(lo), np.array(hi), np.array(ref), np.column_stack(cols), kind, smp.method, res
    )
