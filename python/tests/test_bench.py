"""footprint.bench: lazy families, hooks, memos (made before the first user, gone after the last),
representations instead of objects, heap figures, and records the C++ tools read."""

import json
import subprocess
import sys
import time
import weakref

import numpy as np
import pytest

import footprint
from conftest import CLI
from footprint.bench import (Memo, MemoCache, ParamRepr, benchmark, content_hash, parametrize,
                             product, register_repr, run)

MIB = 1024 * 1024


def names(result):
    return [r.name for r in result.records]


def test_axes_nest_the_first_written_outermost():
    @benchmark(tags=("grid",))
    @product(n=[1, 2], kind=["a", "b"])
    def grid(n, kind):
        pass

    @parametrize([{"x": 1}, {"x": 2}])
    @parametrize(lambda: ({"y": v} for v in "pq"))  # a function: read again per outer entry
    def pairs(x, y):
        pass

    result = run([grid, pairs], repetitions=1, warmup=0)
    assert names(result) == ["grid[n=1,kind=a]", "grid[n=1,kind=b]", "grid[n=2,kind=a]",
                             "grid[n=2,kind=b]", "pairs[x=1,y=p]", "pairs[x=1,y=q]",
                             "pairs[x=2,y=p]", "pairs[x=2,y=q]"]
    assert result.records[0].params == {"n": 1, "kind": "a"}  # builtins kept as they are
    assert result.records[0].tags == ("grid",)
    assert [r.name for r in run([grid, pairs], tags=["grid"], repetitions=1).records][-1] == \
        "grid[n=2,kind=b]"


def test_a_generator_is_only_the_outermost_axis():
    with pytest.raises(TypeError, match="outermost"):
        @parametrize([{"x": 1}])
        @parametrize({"y": v} for v in range(2))
        def f(x, y):
            pass


def test_a_family_holds_one_generated_parameter_set_at_a_time():
    made = []

    def matrix():
        b = np.ones((256, 256), dtype=np.int64)
        made.append(weakref.ref(b))
        return {"b": b}

    def matrices(n):
        for _ in range(n):
            yield matrix()  # the generator's frame keeps nothing while the case runs

    @parametrize(matrices(16))
    def add(a, b):
        return {"alive": sum(r() is not None for r in made)}

    dead_before_next = []
    result = run(add, params={"a": np.ones((256, 256), dtype=np.int64)}, repetitions=1,
                 on_record=lambda r: dead_before_next.append(made[-1]() is None))
    assert len(result.records) == 16
    assert {r.counters["alive"] for r in result.records} == {1}
    # Each case's matrix is gone as soon as its record is made (the runner kept nothing).
    assert all(dead_before_next)


def test_hooks_run_once_per_case_around_warmup_and_repetitions():
    calls = []

    def up(state, params):
        calls.append(("setUp", state.name, params["n"]))

    def down(state, params):
        calls.append(("tearDown", state.index))

    @benchmark(setUp=up, tearDown=down)
    @parametrize([{"n": 7}, {"n": 8}])
    def body(n):
        calls.append("body")

    run(body, repetitions=3, warmup=2)
    case = ["body"] * 5
    assert calls == [("setUp", "body[n=7]", 7), *case, ("tearDown", 0),
                     ("setUp", "body[n=8]", 8), *case, ("tearDown", 1)]


def test_memos_live_from_their_first_user_to_their_last():
    events = []
    cache = MemoCache()

    def make(name):
        def factory():
            events.append(f"make {name}")
            return np.zeros(1000)
        return Memo(factory, name=name)

    m1, m2 = make("m1"), make("m2")

    @parametrize([{"v": m1}, {"v": m1}])
    def first(v):
        events.append("first")

    @benchmark(uses=[m2])
    @parametrize([{"v": m1}])
    def second(v):
        events.append("second")

    @parametrize([{"v": m2}, {"v": 3}])
    def third(v):
        events.append("third")

    live = []
    result = run([first, second, third], memos=cache, repetitions=1, warmup=0,
                 on_record=lambda r: live.append((m1 in cache, m2 in cache)))
    assert events == ["make m1", "first", "first", "make m2", "second", "third", "third"]
    # After each record (before eviction) and so: m1 goes after `second`, m2 after third's 1st.
    assert live == [(True, False), (True, False), (True, True), (False, True), (False, False)]
    assert (result.memo_creations, result.memo_evictions) == (2, 2)
    assert result.records[0].params["v"].type == "tensor"  # the value's representation


def test_memos_built_from_memos_and_kept_with_no_evict():
    model = Memo(lambda: np.arange(10), name="model")
    session = Memo(lambda m: m * 2, model, name="session")

    @parametrize([{"s": session}])
    def use(s):
        return float(s.sum())

    cache = MemoCache()
    result = run(use, memos=cache, evict=False, repetitions=1)
    assert result.records[0].counters["value"] == 90
    assert model in cache and session in cache and cache.size() == 2
    cache.clear()
    assert cache.size() == 0 and cache.bytes() == 0


def test_memo_cache_sizes_evict_and_budget():
    cache = MemoCache(budget=5 * MIB)
    memos = [Memo(lambda: np.ones(2 * MIB // 8), name=f"m{i}") for i in range(3)]
    cache.get(memos[0])
    assert cache.size() == 1 and 2 * MIB <= cache.bytes() < 2 * MIB + 64 * 1024
    cache.get(memos[1])
    cache.get(memos[0])  # m0 is now the most recently used
    cache.get(memos[2])  # 6 MiB would pass the budget: the least recently used (m1) goes
    assert memos[1] not in cache and memos[0] in cache and memos[2] in cache
    assert cache.evict(memos[0]) and not cache.evict(memos[0])
    assert cache.size() == 1 and cache.evictions == 2 and cache.creations == 3
    hinted = Memo(lambda: None, name="mapped", bytes=4 * MIB)  # memory no heap counts
    cache.get(hinted)  # 4 MiB more would pass 5 MiB: m2 goes first
    assert memos[2] not in cache and cache.size() == 1 and cache.bytes() >= 4 * MIB


def test_builtins_are_kept_and_objects_are_represented(tiny_cnn):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    r = footprint.bench._repr.represent
    assert [r(v) for v in (3, 2.5, True, "s", None)] == [3, 2.5, True, "s", None]
    assert r(np.int64(4)) == 4 and type(r(np.int64(4))) is int
    t = r(a)
    assert t == ParamRepr(type="tensor", dtype="float", shape=(3, 4), bytes=48,
                          hash=content_hash(a), source="numpy")
    assert r(a.T).hash == content_hash(np.ascontiguousarray(a.T)) != t.hash
    assert r(a + 1).hash != t.hash
    model = footprint.load(tiny_cnn)
    m = r(model)
    data = tiny_cnn.read_bytes()
    assert (m.type, m.bytes, m.hash, m.source) == ("model", len(data), content_hash(data),
                                                   str(tiny_cnn))
    assert r(footprint.load(data, name="cnn")).hash == m.hash
    mm = np.memmap(tiny_cnn, dtype=np.uint8, mode="r")
    assert r(mm).source == str(tiny_cnn) and r(mm).hash == m.hash


def test_torch_tensors_are_represented_as_arrays():
    torch = pytest.importorskip("torch")
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    r = footprint.bench._repr.represent(t)
    assert r == ParamRepr(type="tensor", dtype="float", shape=(2, 3), bytes=24,
                          hash=content_hash(t.numpy()), source="torch:cpu")
    b = footprint.bench._repr.represent(t.to(torch.bfloat16))
    assert (b.dtype, b.bytes) == ("bfloat16", 12)


def test_user_types_get_a_representation():
    class Image:
        def __init__(self, w, h):
            self.w, self.h = w, h

    class Photo(Image):
        pass

    @parametrize([{"img": Photo(4, 3)}])
    def show(img):
        pass

    plain = run(show, repetitions=1).records[0].params["img"]
    assert plain.type.endswith("Photo") and plain.value == ""  # no address in records
    local = run(show, repetitions=1, reprs={Image: lambda i: {"type": "image",
                                                              "shape": (i.h, i.w)}})
    assert local.records[0].params["img"] == ParamRepr(type="image", shape=(3, 4))
    register_repr(Image, lambda i: f"{i.w}x{i.h}")
    assert run(show, repetitions=1).records[0].params["img"] == "4x3"


def test_a_record_made_from_a_big_array_lets_it_go():
    big = np.ones(256 * MIB // 8)
    ref = weakref.ref(big)

    @parametrize([{"x": big}])
    def touch(x):
        return float(x[0])

    del big
    result = run(touch, repetitions=1)
    del touch  # the family's list was the last holder
    assert ref() is None
    assert result.records[0].params["x"].bytes == 256 * MIB
    assert "samples" in json.dumps(result.to_json())


def test_heap_figures_see_a_leak_and_a_transient():
    kept = []

    @parametrize([{"leak": True}, {"leak": False}])
    def alloc(leak):
        a = np.ones(10 * MIB // 8)
        if leak:
            kept.append(a)

    leak, transient = run(alloc, repetitions=1, warmup=0).records
    assert 10 * MIB <= leak.net_heap_bytes < 11 * MIB
    assert 10 * MIB <= leak.peak_heap_bytes < 11 * MIB
    assert transient.net_heap_bytes < MIB and 10 * MIB <= transient.peak_heap_bytes < 11 * MIB
    assert leak.counters["python_peak_heap_bytes"] >= 10 * MIB
    assert leak.counters["native_peak_heap_bytes"] >= 10 * MIB
    assert leak.peak_rss_bytes > 0 and leak.allocations == 0


def test_nnbench_memory_scenario_holds_three_matrices():
    """Three benchmarks over a family of generated 1024x1024 int64 matrices (8 MiB each): the
    fixed one, the case's and the result are all that is ever alive (bench/python_figures.py
    runs it with 1024 matrices)."""
    n = 1024

    def family(count):
        return parametrize({"b": np.full((n, n), i, dtype=np.int64)} for i in range(count))

    benches = [family(8)(lambda a, b: float((a + b).sum())),
               family(8)(lambda a, b: float((a * b).sum())),
               family(8)(lambda a, b: float(np.maximum(a, b).sum()))]
    for i, b in enumerate(benches):
        b.name = f"op{i}"
    result = run(benches, params={"a": np.ones((n, n), dtype=np.int64)}, repetitions=1,
                 warmup=0)
    assert len(result.records) == 24 and not any(r.error for r in result.records)
    matrix = n * n * 8
    assert 2 * matrix <= result.peak_python_heap_bytes <= 3 * matrix + MIB // 2


def test_failures_are_recorded_and_the_run_goes_on():
    @parametrize([{"x": 1}, {"x": 2}])
    def flaky(x):
        if x == 1:
            raise RuntimeError("boom")

    @benchmark
    def returns_array():
        return np.ones(3)

    torn = []
    flaky.tearDown = lambda state, params: torn.append(params["x"])
    a, b, c = run([flaky, returns_array], repetitions=2).records
    assert torn == [1, 2]  # torn down after a failing body too
    assert a.error == "RuntimeError: boom" and a.wall_ms == []
    assert not b.error and len(b.wall_ms) == 2
    assert "returned ndarray" in c.error
    with pytest.raises(footprint.UsageError):
        run(flaky, repetitions=0)


def _cli(*args, check=True):
    return subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True,
                          check=check)


def test_records_go_to_the_cpp_stores_and_its_tools_read_them(tmp_path, tiny_cnn):
    model = Memo(lambda: footprint.load(tiny_cnn), name="cnn")

    def make(slow):
        @benchmark(tags=("model",))
        @parametrize([{"model": model}])
        def info(model):
            footprint.analyze(model)
            if slow:
                time.sleep(0.005)  # an injected slowdown far above the machine's noise
        return info

    jsonl, gbench, db = tmp_path / "runs.jsonl", tmp_path / "run.json", tmp_path / "runs.sqlite"
    base = run(make(False), repetitions=8, out=jsonl, db=db)
    run(make(False), repetitions=8, out=jsonl, db=db)
    same = tmp_path / "same.jsonl"
    base.save(out=same)
    base.save(out=gbench, format="gbench")
    slow = tmp_path / "slow.jsonl"
    run(make(True), repetitions=8, out=slow)

    lines = [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert [line["type"] for line in lines] == ["context", "benchmark"] * 2
    record = lines[1]
    assert record["name"] == "info[model=examples]"  # as the C++ runner names models
    assert record["params"][0]["type"] == "model"
    assert record["params"][0]["hash"] == content_hash(tiny_cnn.read_bytes())
    assert record["wall_ms"]["median"] == base.records[0].wall.median
    assert _cli("compare", jsonl, same, "--fail-on", "time:1000").returncode == 0
    assert _cli("compare", gbench, same, "--json").returncode == 0
    failed = _cli("compare", same, slow, "--fail-on", "time:20", check=False)
    assert failed.returncode == 1 and "threshold(s) failed" in failed.stderr
    history = json.loads(_cli("history", "--db", db, "--model", str(tiny_cnn), "--json").stdout)
    rows = history["rows"]
    assert [r["benchmark"] for r in rows] == ["info[model=examples]"] * 2
    assert rows[0]["model"] == str(tiny_cnn) and rows[0]["run_id"] < rows[1]["run_id"]
    assert rows[0]["wall_median_ms"] == pytest.approx(base.records[0].wall.median)
    with pytest.raises(footprint.ModelError, match="runs.jsonl"):
        run(make(False), db=jsonl)  # not a database: refused before anything runs


BENCH_FILE = '''
import numpy as np
from footprint.bench import benchmark, parametrize

@benchmark(tags=("fast",))
@parametrize([{"n": 10}, {"n": 20}])
def ones(n):
    return float(np.ones(n).sum())

@benchmark(tags=("broken",))
def broken():
    raise ValueError("always")
'''


def test_the_runner_entry_point(tmp_path):
    path = tmp_path / "bench_file.py"
    path.write_text(BENCH_FILE)
    out = tmp_path / "runs.jsonl"
    ok = subprocess.run([sys.executable, "-m", "footprint", "bench-py", str(path), "--tags",
                         "fast", "--repeat", "2", "--out", str(out), "--json"],
                        capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    printed = json.loads(ok.stdout)
    assert [r["name"] for r in printed["records"]] == ["ones[n=10]", "ones[n=20]"]
    assert printed["records"][1]["counters"]["value"] == 20
    assert len(out.read_text().splitlines()) == 3
    bad = subprocess.run([sys.executable, "-m", "footprint.bench", str(path)],
                         capture_output=True, text=True)
    assert bad.returncode == 1
    assert "footprint: error: broken: ValueError: always" in bad.stderr
    assert "ones[n=20]" in bad.stdout and "FAILED" in bad.stdout
    missing = subprocess.run([sys.executable, "-m", "footprint.bench", str(tmp_path / "no")],
                             capture_output=True, text=True)
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_records_can_be_streamed_instead_of_kept():
    @parametrize([{"x": i} for i in range(5)])
    def f(x):
        return x

    seen = []
    result = run(f, repetitions=1, keep_records=False, on_record=seen.append)
    assert result.records == [] and [r.counters["value"] for r in seen] == [0, 1, 2, 3, 4]
    with pytest.raises(footprint.UsageError, match="keep_records"):
        run(f, keep_records=False, out="x.jsonl")


def test_memos_met_in_generated_axes_go_at_their_benchmarks_end():
    cache = MemoCache()
    warm, found = Memo(lambda: 1, name="warm"), Memo(lambda: 2, name="found")
    cache.get(warm)  # the caller's: this run does not use it, so it does not evict it

    @parametrize({"v": found} for _ in range(2))  # not readable before the run
    def gen(v):
        return {"live": found in cache}

    @benchmark
    def after():
        pass

    result = run([gen, after], memos=cache, repetitions=1)
    assert [r.counters.get("live") for r in result.records] == [1, 1, None]
    assert found not in cache and warm in cache


def test_product_reads_a_generator_first_keyword_once_and_names_by_format():
    made = []

    def sizes():
        for n in (1, 2):
            made.append(n)
            yield n

    @product(n=sizes(), k=["a", "b"], namegen="sum/{n}{k}")
    def f(n, k):
        return {"made": len(made)}

    result = run(f, repetitions=1)
    assert names(result) == ["sum/1a", "sum/1b", "sum/2a", "sum/2b"]
    assert [r.counters["made"] for r in result.records] == [1, 1, 2, 2]  # made as reached
    with pytest.raises(TypeError, match="outermost"):
        product(k=["a"], n=(n for n in range(2)))(lambda k, n: None)
