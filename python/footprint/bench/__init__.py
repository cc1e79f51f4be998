"""footprint.bench: Python benchmarks whose records keep what the parameters were, not the
objects, with memos released after their last user; time and memory per case, written to the
C++ runner's stores (JSONL, Google Benchmark JSON, SQLite) for `footprint compare` and
`footprint history`.

    from footprint.bench import Memo, benchmark, parametrize, product, run

    @benchmark(tags=("numpy",))
    @product(n=[256, 512])
    def matmul(n):
        a = np.ones((n, n))
        return float((a @ a).sum())

    result = run(matmul, repetitions=5, out="runs.jsonl")

docs/PYTHON.md ("Benchmarks") has the whole API; `python3 -m footprint.bench FILE...` runs the
benchmarks a file defines.
"""

from ._collect import collect
from ._core import Benchmark, benchmark, parametrize, product
from ._memo import Memo, MemoCache
from ._repr import ParamRepr, content_hash, register_repr
from ._runner import Record, Run, State, Summary, run

__all__ = ["Benchmark", "Memo", "MemoCache", "ParamRepr", "Record", "Run", "State", "Summary",
           "benchmark", "collect", "content_hash", "parametrize", "product", "register_repr",
           "run"]
