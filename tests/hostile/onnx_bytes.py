"""The few ONNX protobuf messages the hostile cases need, encoded by hand.

The hostile models must say things no well-behaved exporter writes (extents of 2^62, negative
dims, opset 99), so they are built from the wire format itself rather than from a library that
would refuse them. Field numbers are those of onnx.proto.
"""
import struct

FLOAT, UINT8, INT8, INT32, INT64, STRING = 1, 2, 3, 6, 7, 8


def _varint(n):
    n &= (1 << 64) - 1  # negative int64 values are ten-byte two's complement varints
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(field, wire):
    return _varint(field << 3 | wire)


def vint(field, n):
    return _key(field, 0) + _varint(n)


def vbytes(field, data):
    if isinstance(data, str):
        data = data.encode()
    return _key(field, 2) + _varint(len(data)) + data


def vfloat(field, x):
    return _key(field, 5) + struct.pack("<f", x)


def dim(d):
    return vbytes(1, vint(1, d) if isinstance(d, int) else vbytes(2, d))


def tensor_type(elem, shape):
    shape_msg = b"".join(dim(d) for d in shape)
    return vbytes(1, vint(1, elem) + vbytes(2, shape_msg))


def value_info(name, elem, shape):
    return vbytes(1, name) + vbytes(2, tensor_type(elem, shape))


def tensor(name, elem, dims, raw=b"", int64s=None):
    msg = b"".join(vint(1, d) for d in dims) + vint(2, elem)
    if int64s is not None:
        msg += vbytes(7, b"".join(_varint(v) for v in int64s))
    msg += vbytes(8, name)
    if raw:
        msg += vbytes(9, raw)
    return msg


def int64_tensor(name, values):
    return tensor(name, INT64, [len(values)], raw=struct.pack("<%dq" % len(values), *values))


def attr_int(name, v):
    return vbytes(1, name) + vint(20, 2) + vint(3, v)


def attr_ints(name, vs):
    return vbytes(1, name) + vint(20, 7) + b"".join(vint(8, v) for v in vs)


def attr_tensor(name, t):
    return vbytes(1, name) + vint(20, 4) + vbytes(5, t)


def node(op, inputs, outputs, name="", attrs=()):
    msg = b"".join(vbytes(1, i) for i in inputs) + b"".join(vbytes(2, o) for o in outputs)
    msg += vbytes(3, name or op.lower()) + vbytes(4, op)
    msg += b"".join(vbytes(5, a) for a in attrs)
    return msg


def model(nodes, inputs, outputs, initializers=(), opset=13, name="hostile"):
    graph = b"".join(vbytes(1, n) for n in nodes) + vbytes(2, name)
    graph += b"".join(vbytes(5, t) for t in initializers)
    graph += b"".join(vbytes(11, v) for v in inputs)
    graph += b"".join(vbytes(12, v) for v in outputs)
    opset_msg = vbytes(1, "") + vint(2, opset)
    return vint(1, 8) + vbytes(8, opset_msg) + vbytes(7, graph)
