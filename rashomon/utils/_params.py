"""Declared parameter constraints: one validation layer for every public entry point and the CLI.

In the spirit of scikit-learn's ``validate_params``: a public function declares one
constraint per parameter, and :func:`validate_params` checks them on every call with
one message template naming the function, the parameter, what was expected and what
was given::

    @validate_params({"n_repeats": Integral(1), "random_state": RandomStateLike(), "n_jobs": NJobs()})
    def pimp(learner, X, y, *, n_repeats=30, random_state=None, n_jobs=None): ...

Data (X, y, weights) keep their dedicated checks (:func:`check_X`, :func:`check_y`), which
the functions call once on entry; the CLI converts its arguments with the same constraints.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ._errors import _param_error

__all__ = [
    "Constraint",
    "Real",
    "Integral",
    "Options",
    "Boolean",
    "RandomStateLike",
    "NJobs",
    "AnyOf",
    "CallableC",
    "PositiveGrid",
    "FiniteArray",
    "Percentiles",
    "validate_params",
    "check_random_state",
    "check_n_jobs",
    "check_model_class_params",
]

#: the largest seed numpy's legacy RandomState accepts (as scikit-learn's check_random_state)
MAX_SEED = 2**32 - 1


class Constraint:
    """A constraint on one parameter: ``check(value)`` returns the value (possibly converted) or raises."""

    allow_none = False
    description = "a valid value"

    def ok(self, value: Any) -> bool:  # pragma: no cover - overridden
        raise NotImplementedError

    def convert(self, value: Any) -> Any:
        return value

    def check(self, value: Any, param: str, func: str) -> Any:
        if value is None and self.allow_none:
            return None
        if not self.ok(value):
            raise _param_error(param, func, self.description + (" or None" if self.allow_none else ""), repr(value))
        return self.convert(value)


class Real(Constraint):
    """A finite real number (not a bool) in an interval; ``closed`` says which ends are allowed."""

    def __init__(
        self,
        low: float | None = None,
        high: float | None = None,
        closed: str = "both",
        *,
        allow_none: bool = False,
        allow_inf: bool = False,
    ):
        self.low, self.high, self.closed = low, high, closed
        self.allow_none, self.allow_inf = allow_none, allow_inf
        lo_op = ">=" if closed in ("both", "left") else ">"
        hi_op = "<=" if closed in ("both", "right") else "<"
        parts = [f"{lo_op} {low:g}" if low is not None else "", f"{hi_op} {high:g}" if high is not None else ""]
        cond = " and ".join(p for p in parts if p)
        self.description = f"a {'' if allow_inf else 'finite '}float" + (f" {cond}" if cond else "")

    def ok(self, value: Any) -> bool:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            return False
        v = float(value)
        if math.isnan(v) or (math.isinf(v) and not self.allow_inf):
            return False
        if self.low is not None and (v < self.low or (v == self.low and self.closed in ("neither", "right"))):
            return False
        if self.high is not None and (v > self.high or (v == self.high and self.closed in ("neither", "left"))):
            return False
        return True

    def convert(self, value: Any) -> float:
        return float(value)


class Integral(Constraint):
    """An int (not a bool) in ``[low, high]``."""

    def __init__(self, low: int | None = None, high: int | None = None, *, allow_none: bool = False):
        self.low, self.high, self.allow_none = low, high, allow_none
        if low is not None and high is not None:
            self.description = f"an int in [{low}, {high}]"
        elif low is not None:
            self.description = f"an int >= {low}"
        elif high is not None:
            self.description = f"an int <= {high}"
        else:
            self.description = "an int"

    def ok(self, value: Any) -> bool:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
            return False
        return (self.low is None or int(value) >= self.low) and (self.high is None or int(value) <= self.high)

    def convert(self, value: Any) -> int:
        return int(value)


class Options(Constraint):
    """One of a fixed set of values (strings compared exactly)."""

    def __init__(self, values: Sequence[Any], *, allow_none: bool = False):
        self.values, self.allow_none = tuple(values), allow_none
        self.description = f"one of {list(self.values)}"

    def ok(self, value: Any) -> bool:
        try:
            return any(isinstance(value, type(v)) and bool(value == v) for v in self.values)
        except (TypeError, ValueError):
            return False


class Boolean(Constraint):
    description = "a bool"

    def ok(self, value: Any) -> bool:
        return isinstance(value, (bool, np.bool_))

    def convert(self, value: Any) -> bool:
        return bool(value)


class AnyOf(Constraint):
    """Any of several constraints (the first that accepts the value converts it)."""

    def __init__(self, *constraints: Constraint, allow_none: bool = False):
        self.constraints, self.allow_none = constraints, allow_none
        self.description = " or ".join(c.description for c in constraints)

    def ok(self, value: Any) -> bool:
        return any(c.ok(value) for c in self.constraints)

    def convert(self, value: Any) -> Any:
        return next(c for c in self.constraints if c.ok(value)).convert(value)


class CallableC(Constraint):
    description = "a callable"

    def ok(self, value: Any) -> bool:
        return callable(value)


def _float_array(value: Any) -> np.ndarray | None:
    if isinstance(value, (str, bytes, bool, np.bool_)):
        return None
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return None
    return arr if np.all(np.isfinite(arr)) else None


class PositiveGrid(Constraint):
    """A grid of hyper-parameters: a non-empty 1-D array (or one number) of finite floats > 0."""

    description = "a non-empty 1-D array of finite floats > 0"

    def __init__(self, *, allow_none: bool = False):
        self.allow_none = allow_none

    def ok(self, value: Any) -> bool:
        arr = _float_array(value)
        return arr is not None and arr.ndim <= 1 and arr.size > 0 and bool(np.all(arr > 0))


class FiniteArray(Constraint):
    """A finite numeric array with ``ndim`` dimensions (``square``: of shape (k, k))."""

    def __init__(self, ndim: int, *, square: bool = False, allow_none: bool = False):
        self.ndim, self.square, self.allow_none = ndim, square, allow_none
        self.description = (
            "a finite square matrix (2-D array of shape (k, k))" if square else f"a finite {ndim}-D numeric array"
        )

    def ok(self, value: Any) -> bool:
        arr = _float_array(value)
        if arr is None or arr.ndim != self.ndim or arr.size == 0:
            return False
        return not self.square or arr.shape[0] == arr.shape[1]

    def convert(self, value: Any) -> Any:
        return value


class Percentiles(Constraint):
    """The PD grid's ``percentiles``: two floats with 0 <= low < high <= 1 (scikit-learn's rule)."""

    description = "a pair (low, high) of floats with 0 <= low < high <= 1"

    def ok(self, value: Any) -> bool:
        arr = _float_array(value)
        return arr is not None and arr.shape == (2,) and 0.0 <= arr[0] < arr[1] <= 1.0

    def convert(self, value: Any) -> tuple:
        return tuple(float(v) for v in value)


class RandomStateLike(Constraint):
    """None, an int seed in [0, 2**32 - 1], a numpy RandomState or a Generator (as scikit-learn)."""

    allow_none = True
    description = f"an int in [0, {MAX_SEED}], a numpy RandomState or Generator"

    def ok(self, value: Any) -> bool:
        if isinstance(value, (np.random.RandomState, np.random.Generator)):
            return True
        return Integral(0, MAX_SEED).ok(value)


class NJobs(Constraint):
    """joblib's n_jobs: None, a positive int, or a negative int (-1: all cores); never 0."""

    allow_none = True
    description = "a non-zero int (-1 for all cores)"

    def ok(self, value: Any) -> bool:
        return Integral().ok(value) and value != 0


def check_random_state(value: Any, func: str, param: str = "random_state") -> Any:
    return RandomStateLike().check(value, param, func)


def check_n_jobs(value: Any, func: str, param: str = "n_jobs") -> Any:
    return NJobs().check(value, param, func)


def validate_params(constraints: dict[str, Constraint], *, func: str | None = None) -> Callable:
    """Decorator: check the declared parameters of every call (see the module notes).

    ``func`` is the name used in messages (default: the function's ``__qualname__``).
    Parameters without a constraint are left to the function (data checks, estimators).
    """

    def deco(f: Callable) -> Callable:
        sig = inspect.signature(f)
        unknown = set(constraints) - set(sig.parameters)
        if unknown:
            raise TypeError(f"validate_params on {f.__qualname__}: no parameter(s) {sorted(unknown)}")
        name = func or f.__qualname__
        kinds = inspect.Parameter
        params = list(sig.parameters.values())
        # a call binds by position and keyword alone when the signature has no *args / **kwargs: the checked
        # parameters are then found without inspect's binder (its cost dominates small queries); any other call,
        # or a call the fast path cannot place, goes through sig.bind, whose errors are Python's own
        simple = all(q.kind in (kinds.POSITIONAL_OR_KEYWORD, kinds.KEYWORD_ONLY) for q in params)
        positional = [q.name for q in params if q.kind is kinds.POSITIONAL_OR_KEYWORD]
        names = {q.name for q in params}
        where = {p: (positional.index(p) if p in positional else None, c) for p, c in constraints.items()}
        by_position = [(positional.index(p), p, c) for p, c in constraints.items() if p in positional]

        @functools.wraps(f)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if simple and not kwargs and len(args) <= len(positional):  # positional only: check those given
                if not by_position:
                    return f(*args)
                checked = list(args)
                for j, p, c in by_position:
                    if j < len(checked):
                        checked[j] = c.check(checked[j], p, name)
                return f(*checked)
            if simple and len(args) <= len(positional) and names.issuperset(kwargs):
                if not any(k in kwargs for k in positional[: len(args)]):
                    checked = list(args)
                    for p, (i, c) in where.items():
                        if p in kwargs:
                            kwargs[p] = c.check(kwargs[p], p, name)
                        elif i is not None and i < len(checked):
                            checked[i] = c.check(checked[i], p, name)
                    return f(*checked, **kwargs)
            bound = sig.bind(*args, **kwargs)
            for p, c in constraints.items():
                if p in bound.arguments:
                    bound.arguments[p] = c.check(bound.arguments[p], p, name)
            return f(*bound.args, **bound.kwargs)

        wrapper.__rashomon_constraints__ = dict(constraints)  # type: ignore[attr-defined]  # marker read by introspection
        return wrapper

    return deco


def check_model_class_params(model_class: Any) -> None:
    """Check a model class's constructor arguments against its ``_parameter_constraints`` (scikit-learn's
    ``_validate_params``, run when the class is used: by ``RashomonSet.fit`` and the class's ``parametrize``).

    Messages name the class and the argument: "The 'fit_intercept' parameter of LogisticModelClass must be a bool.
    Got 'no' instead." The values are left as given (the class reads them).
    """
    constraints = getattr(type(model_class), "_parameter_constraints", None) or {}
    name = type(model_class).__name__
    for param, constraint in constraints.items():
        constraint.check(getattr(model_class, param, None), param, name)
