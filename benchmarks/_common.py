"""Timing helpers shared by the benchmark scripts (best of several runs, peak memory)."""
import time
import tracemalloc


def best_time(fn, repeat=3):
    best = float("inf")
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def peak_memory(fn):
    """Peak Python-heap allocation (numpy buffers included) during fn(), in MiB."""
    tracemalloc.start()
    t = time.perf_counter()
    out = fn()
    elapsed = time.perf_counter() - t
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return elapsed, peak / 2**20, out
