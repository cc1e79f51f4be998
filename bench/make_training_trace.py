#!/usr/bin/env python3
"""Writes a training-like buffer trace in MiniMalloc's CSV format (id,lower,upper,size).

   bench/make_training_trace.py N SEED > trace.csv      # about N buffers, deterministic in SEED

The shape of one training step of a deep network, as a framework's allocator sees it:
  * weights and two optimizer states per layer (Adam's moments), live for the whole trace;
  * per micro-batch, the forward pass: each layer's activations, kept until the backward pass
    reaches that layer again (freed in reverse order), and short-lived temporaries;
  * the backward pass: each layer's gradient, live from its first backward step to the optimizer
    step at the end (accumulated over micro-batches), the gradient passed to the layer below
    (two steps), and short-lived temporaries;
  * the optimizer step: one small temporary per layer.
Layer widths vary (log-uniform), so sizes range from bytes to hundreds of MB; sizes are rounded
up to 64 bytes. Only the standard library, so the same seed gives the same file anywhere.
"""
import random
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: make_training_trace.py N SEED")
    target, seed = int(sys.argv[1]), int(sys.argv[2])
    rng = random.Random(seed)
    microbatches = 2
    per_layer = 5 + microbatches * (2 + 4 + 1 + 5)  # see the loops below
    layers = max(1, target // per_layer)

    def round64(x):
        return max(64, (int(x) + 63) // 64 * 64)

    def log_uniform(lo, hi):
        return lo * (hi / lo) ** rng.random()

    width = [log_uniform(2 ** 18, 2 ** 24) for _ in range(layers)]  # bytes of one activation
    params = [log_uniform(2 ** 14, 2 ** 26) for _ in range(layers)]  # bytes of one weight
    rows = []

    def add(lower, upper, size):
        rows.append((lower, upper, round64(size)))

    step = 0
    grad_start = [None] * layers
    for _ in range(microbatches):
        saved = []
        for i in range(layers):  # forward
            t = step
            saved.append([(t, width[i] * rng.choice((1, 1, 2, 4))) for _ in range(2)])
            for _ in range(4):
                begin = t + rng.choice((0, 0, 1))
                add(begin, begin + rng.choice((1, 1, 2)), log_uniform(64, 2 ** 16))
            step += 2
        for i in reversed(range(layers)):  # backward: frees layer i's activations
            t = step
            for begin, size in saved[i]:
                add(begin, t + 2, size)
            if grad_start[i] is None:
                grad_start[i] = t + 1
            add(t, t + 3, width[i])  # the gradient handed to the layer below
            for _ in range(5):
                begin = t + rng.choice((0, 1))
                add(begin, begin + rng.choice((1, 1, 2)), log_uniform(64, 2 ** 18))
            step += 2
    end = step + layers + 1
    for i in range(layers):  # optimizer step, then the persistent state
        add(step + i, step + i + 1, log_uniform(64, 2 ** 12))
        add(grad_start[i], step + i + 1, params[i])  # gradient, freed once applied
        for _ in range(3):
            add(0, end, params[i])  # weight and two moments
    out = sys.stdout
    out.write("id,lower,upper,size\n")
    for k, (lower, upper, size) in enumerate(rows):
        out.write(f"{k},{lower},{upper},{size}\n")


if __name__ == "__main__":
    main()
