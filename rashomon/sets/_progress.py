"""Progress of long set queries: one tqdm bar on a terminal, plain ``[rashomon] ...`` lines otherwise, nothing
when disabled (the same reporter as :func:`rashomon.audit`'s ``progress=``)."""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager

__all__ = ["progress_phase"]


@contextmanager
def progress_phase(enabled: bool, desc: str, total: int):
    """Yields ``tick(k)`` advancing the bar by k of ``total`` units."""
    if not enabled:
        yield lambda k=1: None
        return
    if hasattr(sys.stderr, "isatty") and sys.stderr.isatty():
        from tqdm.auto import tqdm

        bar = tqdm(total=total, desc=desc, file=sys.stderr, leave=False)
        try:
            yield bar.update
        finally:
            bar.close()
        return
    t0 = time.perf_counter()
    print(f"[rashomon] {desc} ...", file=sys.stderr, flush=True)
    yield lambda k=1: None
    print(f"[rashomon] {desc}: done in {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
