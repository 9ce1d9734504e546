"""Display classes. matplotlib is imported inside ``plot()`` so ``import rashomon`` stays light."""
from ._reliance_display import RelianceDisplay

__all__ = ["RelianceDisplay"]
