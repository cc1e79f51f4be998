"""NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss run by footprint against a numpy reading
of the spec: [N, C] and [N, C, d1, d2] inputs, with and without class weights, ignore_index,
every reduction, the log_prob output, float16; and a target outside the classes refused naming
its position. (The ONNX node tests, 86 cases per suite, run in the C++ conformance suite.)"""

import numpy as np
import pytest

import footprint


def run(op, inputs, attrs, outputs=1):
    b = footprint.GraphBuilder(opset=13)
    vs = [b.input(f"i{k}", a.dtype, list(a.shape)) for k, a in enumerate(inputs)]
    outs = b.op(op, vs, attrs, outputs=outputs)
    for k, o in enumerate(outs):
        b.output(o, f"o{k}")
    got = footprint.Session(b.to_model()).run({f"i{k}": a for k, a in enumerate(inputs)})
    return [got[f"o{k}"] for k in range(outputs)]


def nll_reference(logp, target, weight, reduction, ignore):
    logp = logp.astype(np.float64)
    classes = logp.shape[1]
    t = np.clip(target, 0, classes - 1)
    picked = np.take_along_axis(logp, t[:, None], axis=1)[:, 0]
    w = np.ones_like(picked) if weight is None else weight.astype(np.float64)[t]
    if ignore is not None:
        w = np.where(target == ignore, 0.0, w)
    loss = -picked * w
    if reduction == "none":
        return loss
    return loss.sum() if reduction == "sum" else loss.sum() / w.sum()


def log_softmax(x):
    x = x.astype(np.float64)
    top = x.max(axis=1, keepdims=True)
    return x - top - np.log(np.exp(x - top).sum(axis=1, keepdims=True))


@pytest.mark.parametrize("shape", [(5, 4), (2, 3, 4, 2)])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("ignore", [None, 1])
def test_losses_match_the_spec(shape, weighted, reduction, ignore):
    rng = np.random.default_rng(5)
    scores = rng.standard_normal(shape).astype(np.float32)
    target_shape = (shape[0],) + shape[2:]
    target = rng.integers(0, shape[1], size=target_shape).astype(np.int64)
    weight = rng.uniform(0.5, 2, size=shape[1]).astype(np.float32) if weighted else None
    attrs = {"reduction": reduction}
    if ignore is not None:
        attrs["ignore_index"] = ignore
    extra = [weight] if weighted else []
    logp = log_softmax(scores)
    (got,) = run("NegativeLogLikelihoodLoss", [logp.astype(np.float32), target] + extra, attrs)
    want = nll_reference(logp, target, weight, reduction, ignore)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    loss, log_prob = run("SoftmaxCrossEntropyLoss", [scores, target] + extra, attrs, outputs=2)
    np.testing.assert_allclose(log_prob, logp, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(loss, want, rtol=1e-5, atol=1e-6)


def test_softmax_cross_entropy_in_float16_without_log_prob():
    rng = np.random.default_rng(6)
    scores = rng.standard_normal((6, 5)).astype(np.float16)
    target = rng.integers(0, 5, size=6).astype(np.int32)
    (loss,) = run("SoftmaxCrossEntropyLoss", [scores, target], {})
    want = nll_reference(log_softmax(scores), target, None, "mean", None)
    np.testing.assert_allclose(loss.astype(np.float64), want, rtol=2e-3)


def test_a_target_outside_the_classes_is_refused():
    x = np.zeros((2, 3), dtype=np.float32)
    with pytest.raises(footprint.FootprintError, match=r"target\[1\] = 7 is no class of 3"):
        run("NegativeLogLikelihoodLoss", [x, np.array([0, 7], dtype=np.int64)], {})
