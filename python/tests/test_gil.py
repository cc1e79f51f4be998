"""The GIL is released while the library works: another Python thread runs meanwhile.

The interpreter's switch interval is made long, so the worker thread gives the GIL away only
where a C call releases it; the main thread gives it back at every iteration (time.sleep(0)).
A call that held the GIL would then see no iteration of the main thread between its start and
its end (`sorted` of a long list sees none); the test counts those iterations. How many a
releasing call sees depends on the machine's load (hundreds when idle, 82 once under a parallel
ctest run on 2 cores), so the bound, RELEASED, is far below that and far above none."""

import sys
import threading
import time

import numpy as np

import footprint

RELEASED = 20  # iterations a releasing call sees at the least; a holding one sees 0


def iterations_inside(work, calls=8):
    spans = []

    def worker():
        for _ in range(calls):
            start = time.perf_counter()
            work()
            spans.append((start, time.perf_counter()))

    stamps = []
    interval = sys.getswitchinterval()
    sys.setswitchinterval(5.0)
    try:
        t = threading.Thread(target=worker)
        t.start()
        while t.is_alive():
            stamps.append(time.perf_counter())
            time.sleep(0)
        t.join()
    finally:
        sys.setswitchinterval(interval)
    return sum(1 for s in stamps for a, b in spans if a < s < b)


def test_a_call_that_holds_the_gil_sees_nothing():
    values = list(range(300_000, 0, -1))
    assert iterations_inside(lambda: sorted(values, key=lambda v: -v), calls=3) == 0


def test_session_run_releases_the_gil(mobilenet):
    session = footprint.Session(mobilenet, dims={"N": 8})
    x = np.zeros((8, 3, 96, 96), dtype=np.float32)
    session.run({"x": x})  # prepared before timing
    assert iterations_inside(lambda: session.run({"x": x})) > RELEASED


def test_analyze_releases_the_gil(mobilenet):
    model = footprint.load(mobilenet)
    assert iterations_inside(lambda: footprint.analyze(model, order="memory")) > RELEASED
