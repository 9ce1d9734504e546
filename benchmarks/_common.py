"""Timing helper shared by the benchmark scripts (best of several runs)."""
import time


def best_time(fn, repeat=3):
    best = float("inf")
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out
