"""The parametrisation of a fitted kernel model class (``_kernel.py``): θ in the orthonormal coordinates of
the RKHS, ``α = Wθ`` with ``||f||² = θ'θ`` (μ first when free), and the quadratic forms e_orig and e_switch
built from the weight-independent ``KernelStatistics`` (``_kernel_stats.py``)."""

from __future__ import annotations

import weakref

import numpy as np

from ..utils import one_blas_thread
from ._kernel_stats import KernelStatistics
from ._linear import _stratified
from .base import ClassMember, Parametrization
from .quadratics import Quadratic

__all__ = ["KernelParametrization"]


class KernelParametrization(Parametrization):
    """θ in the orthonormal coordinates of the RKHS: α = Wθ, ``||f||² = θ'θ`` (μ first when free)."""

    def __init__(self, mc, D, gamma, W, mu, free, r, reference_theta, info):
        self.mc, self.D, self.gamma, self.W, self.mu, self.free = mc, D, gamma, W, mu, free
        self.r, self.reference_theta, self.info = float(r), reference_theta, info
        self._last_rows: tuple | None = None  # the last streamed statistics and (weakly) their rows
        self.class_name = repr(mc)
        self.n_features = D.shape[1]
        m2 = W.shape[1]
        self.T = W if not free else np.block([[np.ones((1, 1)), np.zeros((1, m2))], [np.zeros((W.shape[0], 1)), W]])
        d = self.T.shape[1]
        self.B = np.eye(d)
        if free:
            self.B[0, 0] = 0.0

    def kernel_matrix(self, X):
        return self.mc._k(np.asarray(X, dtype=float), self.D, self.gamma)

    def statistics(self, X: np.ndarray, y: np.ndarray, cache: dict | None = None) -> KernelStatistics:
        """The weight-independent pieces of e_orig and e_switch on (X, y), kept in ``cache`` when given.

        ``cache`` is a dict the caller keeps for these rows (a :class:`~rashomon.RashomonSet` and
        its reweighted copies share one): any weighting of the rows then costs a few θ-space
        matrix products (see ``KernelStatistics``).
        """
        if cache is None:
            streamed = KernelStatistics(self, X, y, keep=False)
            try:  # its diagonal seeds a cached copy of the same rows (below)
                self._last_rows = (weakref.ref(X), weakref.ref(y), streamed)
            except TypeError:  # not an array: nothing remembered
                self._last_rows = None
            return streamed
        key = (
            "kernel_statistics",
            float(self.gamma) if self.gamma is not None else None,
            self.D.shape,
            self.W.shape,
            self.free,
            float(self.mu),
        )
        st = cache.get(key)
        if st is None:
            st = cache[key] = KernelStatistics(self, X, y, keep=True)
            # a set computes e_orig before its cache is used: the same rows' diagonal sums are not built twice
            last = getattr(self, "_last_rows", None)  # None also on a copy unpickled from an older version
            if last is not None and last[0]() is X and last[1]() is y:
                st.seed_diagonal(last[2])
        return st

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_last_rows"] = None  # a memo of the last rows (weak references): not pickled
        return state

    @one_blas_thread
    def e_orig(self, X, y, w=None, cache=None) -> Quadratic:
        return self.statistics(X, y, cache).e_orig(w)

    @one_blas_thread
    def e_switch(self, X, y, w, group, strata=None, cache=None) -> Quadratic:
        if strata is None:
            return self.statistics(X, y, cache).e_switch(tuple(group), w)
        wt = np.ones(len(y)) if w is None else np.asarray(w, dtype=float)

        def switched(idx):
            q = KernelStatistics(self, X[idx], y[idx], keep=False).e_switch(tuple(group), wt[idx])
            return q.Q, q.c, q.k

        Q1, c1, k1 = _stratified(switched, strata, wt)
        return Quadratic(Q1, c1, k1)

    @one_blas_thread
    def prediction_map(self, X):
        K = self.kernel_matrix(X)
        n = K.shape[0]
        if self.free:
            return np.hstack([np.ones((n, 1)), K]) @ self.T, np.full(n, self.mu)
        return K @ self.W, np.full(n, self.mu)

    def constant_model(self) -> tuple[float, bool]:
        """α = 0 is the constant μ (any constant with a free intercept)."""
        return float(self.mu), bool(self.free)

    def member_attributes(self, theta) -> dict:
        alpha = self.W @ (theta[1:] if self.free else theta)
        return {
            "dual_coef_": alpha,
            "intercept_": float(self.mu + (theta[0] if self.free else 0.0)),
            "dictionary_": self.D,
            "gamma_": self.gamma,
        }

    def estimator(self, theta) -> ClassMember:
        return ClassMember(self, np.asarray(theta, dtype=float))
