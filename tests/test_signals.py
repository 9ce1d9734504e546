"""``rashomon audit`` stopped by SIGINT or SIGTERM at three phases of a run (subprocesses).

Each run (120 concrete rows, linear class, ``--bootstrap 8 --n-jobs 2``, so joblib's loky workers
and resource trackers are alive) is paused at a phase through ``RASHOMON_TEST_PAUSE`` (a no-op
hook, :func:`rashomon.utils.checkpoint`), then signalled:

- ``fit``: right after the reference's cross-validation (GridSearchCV's loky workers alive);
- ``bootstrap``: after the first chunk of resamples came back (workers alive, others running);
- ``report``: while the first figure is written (its temporary file complete, not yet renamed).

Checked: exit status 130 (SIGINT) or 143 (SIGTERM), one line on stderr and no traceback, no
process of the run's session alive 5 s later (psutil), no temporary file, no report.html, and every
file present whole.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rashomon.datasets import load_concrete

psutil = pytest.importorskip("psutil")
pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX signals and sessions")

PHASES = {"fit": "tick fitting reference*", "bootstrap": "tick bootstrap*", "report": "write envelope_*"}
MESSAGES = {
    signal.SIGINT: (
        130,
        "rashomon audit: interrupted (SIGINT); stopped before the end (workers ended, no file left half-written)",
    ),
    signal.SIGTERM: (
        143,
        "rashomon audit: terminated (SIGTERM); stopped before the end (workers ended, no file left half-written)",
    ),
}


@pytest.fixture(scope="module")
def data_csv(tmp_path_factory):
    p = tmp_path_factory.mktemp("signals") / "concrete-120.csv"
    load_concrete().head(120).to_csv(p, index=False)
    return p


def _session(sid: int) -> list:
    """Live processes of a session (the CLI was started as its leader; its children keep the session id)."""
    out = []
    for p in psutil.process_iter(["pid"]):
        try:
            if os.getsid(p.pid) == sid and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p)
        except (ProcessLookupError, PermissionError, psutil.Error):
            pass
    return out


def _default_sigint():  # a test runner started in the background may ignore SIGINT; the CLI must see it
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _run(tmp_path: Path, data: Path, phase: str, sig: int, whole_group: bool = False):
    out, marker = tmp_path / "out", tmp_path / "paused"
    env = {**os.environ, "MPLBACKEND": "Agg", "RASHOMON_TEST_PAUSE": f"{PHASES[phase]}={marker}"}
    cmd = [
        sys.executable,
        "-m",
        "rashomon.audit.cli",
        "audit",
        "--data",
        str(data),
        "--target",
        "strength",
        "--group",
        "binder=cement,slag",
        "--group",
        "mix=water,age",
        "--model-class",
        "linear",
        "--cv",
        "3",
        "--bootstrap",
        "8",
        "--n-jobs",
        "2",
        "--seed",
        "0",
        "--quiet",
        "--out",
        str(out),
        "--json",
        str(out / "results.json"),
    ]
    err_path = tmp_path / "stderr.txt"
    with open(err_path, "wb") as err:
        proc = subprocess.Popen(
            cmd, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True, env=env, preexec_fn=_default_sigint
        )
    try:
        deadline = time.monotonic() + 240
        while not marker.exists():
            assert proc.poll() is None, f"the run ended before the {phase} phase: {err_path.read_text()}"
            assert time.monotonic() < deadline, f"the run did not reach the {phase} phase in 240 s"
            time.sleep(0.05)
        at_signal = _session(proc.pid)
        workers = [p for p in at_signal if "loky" in " ".join(p.cmdline())]
        if whole_group:  # Ctrl-C in a terminal: the whole foreground process group
            os.killpg(proc.pid, sig)
        else:
            os.kill(proc.pid, sig)
        code = proc.wait(timeout=60)
        t0 = time.monotonic()
        while _session(proc.pid) and time.monotonic() - t0 < 5:
            time.sleep(0.1)
        survivors = [(p.pid, " ".join(p.cmdline())[:100]) for p in _session(proc.pid)]
    finally:
        for p in _session(proc.pid):  # only the processes of the run this test started
            try:
                p.kill()
            except psutil.Error:
                pass
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return code, err_path.read_text(), workers, survivors, out


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("phase", list(PHASES))
def test_signal_stops_cleanly(data_csv, tmp_path, phase, sig):
    """SIGINT as Ctrl-C in a terminal sends it (to the whole process group: the workers ignore it, the parent
    ends them); SIGTERM to the parent alone, as ``kill PID`` does."""
    code, err, workers, survivors, out = _run(tmp_path, data_csv, phase, sig, whole_group=sig == signal.SIGINT)
    if phase in ("fit", "bootstrap"):
        assert len(workers) >= 2, "the loky workers should be alive at that phase (else the test proves nothing)"
    assert survivors == [], f"processes alive 5 s after the signal: {survivors}"
    assert (code, err.strip()) == MESSAGES[sig], err
    names = sorted(p.name for p in out.iterdir()) if out.exists() else []
    assert not [n for n in names if n.endswith(".tmp")] and "report.html" not in names, names
    if phase == "report":  # the JSON came first and is whole; the figure being written was not renamed into place
        assert names == ["results.json"]
        json.loads((out / "results.json").read_text())
    else:
        assert not out.exists()  # a stopped run leaves no folder it created


def test_sigint_to_the_parent_alone_during_bootstrap(data_csv, tmp_path):
    """``kill -INT PID``: the parent alone gets it and ends the workers."""
    code, err, workers, survivors, out = _run(tmp_path, data_csv, "bootstrap", signal.SIGINT)
    assert len(workers) >= 2 and survivors == []
    assert (code, err.strip()) == MESSAGES[signal.SIGINT], err
    assert not out.exists()
