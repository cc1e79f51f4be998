#!/usr/bin/env python3
"""Issue 19's figures for footprint.torch: recorded vs predicted (meta tensors) vs measured
(PyTorch's profiler: c10's CPU allocator, independent of the recorder) peak and after-run bytes,
and the time to predict vs the time to run. Prints a markdown table for docs/BENCHMARKS.md.

    PYTHONPATH=build/release/python /usr/bin/python3 bench/torch_figures.py [--skip-fit]

With LD_PRELOAD=build/release/lib/libfootprint_heap.so it adds footprint's counting malloc's
figures for one more plain run of each case.
"""
import statistics
import sys
import time

import torch
import torch.utils.checkpoint
import torchvision

import footprint.torch as ft


def seed(container):
    def setup(batch, device):
        x, y, z = (torch.full((4 * batch,), v, device=device) for v in (1.0, 2.0, 3.0))
        saved = container([x * y, x, y, z, torch.ones(4 * batch, device=device)])
        keep = saved[4]
        del x, y, z

        def step():
            t0, x, y, z, t2 = saved
            if isinstance(saved, list):
                saved.clear()
            t3 = t2 * z
            del z
            grad_z = t2 * t0
            del t0
            grad_x = t3 * y
            del y
            grad_y = t3 * x
            del t3, x
            return grad_x, grad_y, grad_z, keep
        return step
    return setup


def eager(batch, device):
    x, y, z = (torch.full((4 * batch,), v, device=device, requires_grad=True)
               for v in (1.0, 2.0, 3.0))
    return lambda: ((x * y * z).sum().backward(), (x, y, z))[1]


def mlp(optimizer):
    def setup(batch, device):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(784, 1024), torch.nn.ReLU(),
                                    torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
                                    torch.nn.Linear(1024, 10)).to(device)
        opt = optimizer(model.parameters(), lr=1e-3)
        x = torch.randn(batch, 784, device=device)
        target = torch.randint(0, 10, (batch,), device=device)

        def step():
            torch.nn.functional.cross_entropy(model(x), target).backward()
            opt.step()
            return model, opt
        return step
    return setup


def encoder(batch, device):
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(512, 8, 2048, dropout=0.0, batch_first=True)
    layer = layer.to(device)
    x = torch.randn(batch, 128, 512, device=device)
    return lambda: (layer(x).sum().backward(), layer)[1]


encoder.saved = False  # 1.13: a saved Python number fails under saved_tensors_hooks


def resnet(checkpointed):
    def setup(batch, device):
        torch.manual_seed(0)
        model = torchvision.models.resnet18().to(device)
        x = torch.randn(batch, 3, 224, 224, device=device)
        if checkpointed:
            for name in ("layer1", "layer2", "layer3", "layer4"):
                stage = getattr(model, name)
                # PyTorch 2.x cannot fork the meta device's RNG when recomputing; the state
                # kept is no aten op's storage, which the recorder never sees (docs/TORCH.md).
                stage.forward = (lambda s, f: lambda t: torch.utils.checkpoint.checkpoint(
                    f, t, use_reentrant=False, preserve_rng_state=device != "meta"))(
                        stage, stage.forward)
        return lambda: (model(x).sum().backward(), model)[1]
    return setup


def resnet_train(batch, device):
    torch.manual_seed(0)
    model = torchvision.models.resnet18().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(batch, 3, 224, 224, device=device)
    target = torch.randint(0, 1000, (batch,), device=device)

    def step():
        torch.nn.functional.cross_entropy(model(x), target).backward()
        opt.step()
        return model, opt
    return step


def grouped(rec):
    """Bytes alive after the run, by what keeps them (the recorder's notes)."""
    out = {"parameters": 0, "gradients": 0, "optimizer state": 0}
    for t in rec.trace["tensors"]:
        note = t.get("note", "")
        alive = t["kind"] == "output" or t.get("held")
        if t["kind"] == "weight":
            out["parameters"] += t["bytes"]
        elif alive and "gradient of" in note:
            out["gradients"] += t["bytes"]
        elif alive and "optimizer state" in note:
            out["optimizer state"] += t["bytes"]
    return out


def run_case(setup, batch, repeats=3):
    saved = getattr(setup, "saved", True)
    t0 = time.perf_counter()
    step = setup(batch, "meta")
    with ft.record(saved=saved) as predicted:
        step()
    predict_s = time.perf_counter() - t0
    del step
    with ft.measure() as m:
        step = setup(batch, "cpu")
        with ft.record(saved=saved) as rec:
            kept = step()
    del kept, step
    runs = []
    for _ in range(repeats):  # timed like the prediction: building the model and one step
        t0 = time.perf_counter()
        step = setup(batch, "cpu")
        kept = step()
        runs.append(time.perf_counter() - t0)
        del kept, step
    heap = None
    if ft._heap_counter() is not None:  # preloaded: one more plain run, counted by malloc
        step = setup(batch, "cpu")
        with ft.measure(profiler=False) as mh:
            kept = step()
        heap = (mh.heap_peak, mh.heap_after)
        del kept, step
    return predicted, rec, m, predict_s, statistics.median(runs), heap


def kib(n):
    return f"{n:,}"


def main():
    cases = [
        ("seed x*y*z backward, saved in a list it clears", seed(list), 1),
        ("seed x*y*z backward, saved in a tuple the caller keeps", seed(tuple), 1),
        ("eager f(x,y,z).sum().backward(), float32[4]", eager, 1),
        ("MLP 784-1024-1024-10 step, SGD, batch 64", mlp(torch.optim.SGD), 64),
        ("MLP 784-1024-1024-10 step, AdamW, batch 64", mlp(torch.optim.AdamW), 64),
        ("TransformerEncoderLayer 512/8/2048 fwd+bwd, batch 8 x 128", encoder, 8),
        ("ResNet-18 fwd+bwd, batch 8", resnet(False), 8),
        ("ResNet-18 fwd+bwd, batch 8, checkpointed stages", resnet(True), 8),
    ]
    print("| case | start B | predicted peak B | recorded peak B | recorded + kernel scratch B | "
          "measured peak B | recorded after B | measured after B | ops | predict ms | "
          "run ms (median of 3) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    details, heaps = [], []
    for name, setup, batch in cases:
        predicted, rec, m, predict_s, run_s, heap = run_case(setup, batch)
        p, r = predicted.figures(), rec.figures()
        mp, ma = m.since(rec)
        scratch = rec.add_workspace(m).figures()["peak"]
        if heap is not None:
            heaps.append((name, scratch - r["start"], heap[0], r["after"] - r["start"], heap[1],
                          sum(1 for t in rec.trace["tensors"]
                              if t["kind"] == "output" or t.get("held"))))
        print(f"| {name} | {kib(r['start'])} | {kib(p['peak'])} | {kib(r['peak'])} | "
              f"{kib(scratch)} | "
              f"{kib(r['start'] + mp)} | {kib(r['after'])} | {kib(r['start'] + ma)} | "
              f"{len(rec.ops)} | {predict_s * 1e3:.1f} | {run_s * 1e3:.2f} |")
        if "MLP" in name:
            details.append((name, grouped(rec)))
    print()
    for name, groups in details:
        print(f"- {name}: " + ", ".join(f"{k} {kib(v)} B" for k, v in groups.items()))
    if heaps:
        print()
        print("footprint's counting malloc, preloaded (a plain run of the step, no recorder, no "
              "profiler), above the step's start:")
        print()
        print("| case | recorded + scratch peak B | counting malloc peak B | difference | "
              "recorded after B | counting malloc after B | difference | storages alive after |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for name, rp, hp, ra, ha, alive in heaps:
            print(f"| {name} | {kib(rp)} | {kib(hp)} | {hp - rp:+,} | {kib(ra)} | {kib(ha)} | "
                  f"{ha - ra:+,} | {alive} |")
    if "--skip-fit" in sys.argv:
        return
    budget = 1 << 30
    t0 = time.perf_counter()
    f = ft.fit(lambda batch, device: resnet_train(batch, device)(), budget, dim="batch",
               verify=True)
    fit_s = time.perf_counter() - t0
    print()
    print(f"fit(ResNet-18 SGD-momentum training step, budget 1 GiB = {budget:,} B): predicted "
          f"batch {f.predicted_batch} ({len(f.predicted)} predictions), verified batch "
          f"{f.batch}; {fit_s:.1f} s in all")
    for b in sorted(f.measured):
        p = f.predicted.get(b)
        p = p if p is not None else ft.predict(
            lambda batch, device: resnet_train(batch, device)(), batch=b).figures()["peak"]
        m = f.measured[b]
        print(f"- batch {b}: predicted peak {p:,} B, measured peak {m:,} B "
              f"(+{m - p:,} B of kernel scratch): {'within' if m <= budget else 'over'} budget")


if __name__ == "__main__":
    main()
