"""The declared-parameter decorator binds calls without inspect's binder when it can: the same values checked, the
same conversions, the same errors (Python's own for a call that does not bind)."""

import pytest

from rashomon.utils.validation import Boolean, RashomonInputError, Real, validate_params


@validate_params({"tol": Real(0.0, closed="neither"), "flag": Boolean()}, func="f")
def f(a, tol=1e-3, *, flag=False, extra=None):
    return a, tol, flag, extra


@validate_params({"tol": Real(0.0, closed="neither")}, func="g")
def g(a, *rest, tol=1.0, **kw):
    return a, rest, tol, kw


class Obj:
    @validate_params({"tol": Real(0.0, closed="neither")}, func="Obj.m")
    def m(self, x, tol=1.0):
        return x, tol


@pytest.mark.parametrize(
    "args, kwargs, expected",
    [
        ((1,), {}, (1, 1e-3, False, None)),
        ((1, 0.5), {}, (1, 0.5, False, None)),
        ((1,), {"tol": 0.5, "flag": True}, (1, 0.5, True, None)),
        ((), {"a": 2, "tol": 2}, (2, 2, False, None)),
        ((1,), {"extra": "x"}, (1, 1e-3, False, "x")),
    ],
)
def test_calls_bind_as_python_binds_them(args, kwargs, expected):
    assert f(*args, **kwargs) == expected


@pytest.mark.parametrize(
    "args, kwargs",
    [((1, -1.0), {}), ((1,), {"tol": 0.0}), ((1,), {"flag": "yes"}), ((), {"a": 1, "tol": float("nan")})],
)
def test_bad_values_are_checked_wherever_they_are_passed(args, kwargs):
    with pytest.raises(RashomonInputError, match=r"parameter of f must be"):
        f(*args, **kwargs)


@pytest.mark.parametrize(
    "args, kwargs", [((1,), {"a": 1}), ((1, 0.5, 3), {}), ((1,), {"nope": 1}), ((), {}), ((1, 0.5, True), {})]
)
def test_calls_that_do_not_bind_raise_pythons_type_error(args, kwargs):
    with pytest.raises(TypeError):
        f(*args, **kwargs)


def test_variadic_signatures_and_methods():
    assert g(1, 2, 3, tol=0.5, z=1) == (1, (2, 3), 0.5, {"z": 1})
    with pytest.raises(RashomonInputError, match="parameter of g must be"):
        g(1, tol=-1)
    o = Obj()
    assert o.m(3) == (3, 1.0) and o.m(3, 0.25) == (3, 0.25) and o.m(x=3, tol=2) == (3, 2)
    with pytest.raises(RashomonInputError, match=r"parameter of Obj\.m must be"):
        o.m(3, tol=0)
    with pytest.raises(TypeError):
        o.m(3, x=3)
