"""Shared pytest set-up: hypothesis profiles (``--hypothesis-profile=long`` in ``make repro``)."""
try:
    from hypothesis import HealthCheck, settings
except ImportError:  # hypothesis is in the test extra; without it the property tests are skipped
    pass
else:
    _common = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
    settings.register_profile("default", max_examples=15, **_common)
    settings.register_profile("medium", max_examples=150, **_common)
    settings.register_profile("long", max_examples=2000, **_common)
    settings.load_profile("default")
