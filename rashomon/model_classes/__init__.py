"""Model classes: each turns data into the quadratic forms a Rashomon set needs (see :mod:`.base`)."""
from ._kernel import KernelModelClass, KernelParametrization, nadaraya_watson_gamma
from ._linear import LinearModelClass, LinearParametrization, ridge_loo
from .base import ClassMember, ModelClass, Parametrization
from .quadratics import MCRProblem, Quadratic, switched_design_moments

__all__ = [
    "ModelClass",
    "Parametrization",
    "ClassMember",
    "LinearModelClass",
    "LinearParametrization",
    "KernelModelClass",
    "KernelParametrization",
    "nadaraya_watson_gamma",
    "MCRProblem",
    "Quadratic",
    "ridge_loo",
    "switched_design_moments",
]
