"""Helpers shared by the benchmark scripts: best-of timing, peak resident memory, running a peer in its own venv."""

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def best_time(fn, repeat=3):
    best = float("inf")
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def peak_rss_mib() -> float:
    """Peak resident memory of this process in MiB: VmHWM (Linux; reset by exec), else ru_maxrss.

    ru_maxrss alone is not enough in a child: Linux keeps the high-water mark of the parent it
    was forked from across exec.
    """
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    ru = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return ru / 1024 if sys.platform != "darwin" else ru / 2**20


def run_in_venv(py, script: str, **arrays):
    """Run ``script`` with the interpreter ``py`` (a peer's own venv) on ``arrays`` (saved as d.npz, path in argv[1]);
    the script writes JSON to argv[2], returned parsed; None (and the peer's stderr printed) when it fails."""
    with tempfile.TemporaryDirectory() as tmp:
        data, out, path = Path(tmp, "d.npz"), Path(tmp, "o.json"), Path(tmp, "peer.py")
        np.savez(data, **arrays)
        path.write_text(script)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        res = subprocess.run(
            [str(py), str(path), str(data), str(out)], capture_output=True, text=True, env=env, cwd=tmp
        )
        if res.returncode:
            print("rashomon-py failed:\n" + res.stderr[-2000:])
            return None
        return json.loads(out.read_text())
