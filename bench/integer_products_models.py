#!/usr/bin/env python3
"""Writes the integer-product models bench/integer_products.sh times, with an input_*.pb folder
each: ONNX protobuf encoded here (Python's standard library only, no onnx package), weights
random from fixed seeds.

  python3 bench/integer_products_models.py OUT_DIR

OUT_DIR/<name>.onnx and OUT_DIR/<name>/input_*.pb for:
  mmi, mmi_input     MatMulInteger [64, 768] uint8 x [768, 3072] int8 (zero point 128): the
                     weights an initializer, or a graph input (the plain loops run it)
  qmm, qmm_input     QLinearMatMul, the same extents and weights, uint8 out
  qconv3, qconv3_input  QLinearConv 64 -> 64 channels, 3x3, pad 1, on 56x56, per-channel scales
  qconv1             QLinearConv 256 -> 64, 1x1, on 56x56
"""
import os
import random
import struct
import sys


def varint(n):
    n &= (1 << 64) - 1
    out = b''
    while True:
        b = n & 0x7f
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def vi(field, n):  # varint field
    return varint(field << 3) + varint(n)


def ld(field, payload):  # length-delimited field
    if isinstance(payload, str):
        payload = payload.encode()
    return varint((field << 3) | 2) + varint(len(payload)) + payload


U8, S8, I32, F32 = 2, 3, 6, 1


def value_info(name, elem_type, dims):
    shape = b''.join(ld(1, vi(1, d)) for d in dims)
    return ld(1, name) + ld(2, ld(1, vi(1, elem_type) + ld(2, shape)))


def tensor(name, elem_type, dims, raw):
    return b''.join(vi(1, d) for d in dims) + vi(2, elem_type) + ld(8, name) + ld(9, raw)


def ints_attr(name, values):
    return ld(1, name) + b''.join(vi(8, v) for v in values) + vi(20, 7)


def node(op, inputs, outputs, name, attrs=()):
    return (b''.join(ld(1, i) for i in inputs) + b''.join(ld(2, o) for o in outputs) +
            ld(3, name) + ld(4, op) + b''.join(ld(5, a) for a in attrs))


def model(nodes, initializers, inputs, outputs):
    g = (b''.join(ld(1, n) for n in nodes) + ld(2, 'g') +
         b''.join(ld(5, t) for t in initializers) + b''.join(ld(11, v) for v in inputs) +
         b''.join(ld(12, v) for v in outputs))
    return vi(1, 8) + ld(8, ld(1, '') + vi(2, 13)) + ld(7, g)


def f32(*v):
    return struct.pack('<%df' % len(v), *v)


def i32(*v):
    return struct.pack('<%di' % len(v), *v)


def random_bytes(rnd, n, lo, hi):
    return bytes(rnd.randint(lo, hi) & 0xff for _ in range(n))


def write(out, name, onnx_bytes, inputs):
    with open(os.path.join(out, name + '.onnx'), 'wb') as f:
        f.write(onnx_bytes)
    os.makedirs(os.path.join(out, name), exist_ok=True)
    for i, (input_name, elem_type, dims, raw) in enumerate(inputs):
        with open(os.path.join(out, name, 'input_%d.pb' % i), 'wb') as f:
            f.write(tensor(input_name, elem_type, dims, raw))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rnd = random.Random(1)
    m, k, n = 64, 768, 3072
    b = random_bytes(rnd, k * n, -128, 127)
    a = ('a', U8, [m, k], random_bytes(rnd, m * k, 0, 255))
    for name, op, params in (('mmi', 'MatMulInteger', None),
                             ('qmm', 'QLinearMatMul', (0.02, 0.01, 0.5, 100))):
        for as_input in (False, True):
            inits = [tensor('za', U8, [], bytes([128]))]
            if params:
                sa, sb, sy, zy = params
                inits += [tensor('sa', F32, [], f32(sa)), tensor('sb', F32, [], f32(sb)),
                          tensor('zb', S8, [], bytes([0])), tensor('sy', F32, [], f32(sy)),
                          tensor('zy', U8, [], bytes([zy]))]
                ins = ['a', 'sa', 'za', 'b', 'sb', 'zb', 'sy', 'zy']
                y = value_info('y', U8, [m, n])
            else:
                ins = ['a', 'b', 'za']
                y = value_info('y', I32, [m, n])
            graph_inputs = [value_info('a', U8, [m, k])]
            data = [a]
            if as_input:
                graph_inputs.append(value_info('b', S8, [k, n]))
                data.append(('b', S8, [k, n], b))
            else:
                inits.append(tensor('b', S8, [k, n], b))
            write(out, name + ('_input' if as_input else ''),
                  model([node(op, ins, ['y'], name)], inits, graph_inputs, [y]), data)
    for name, c, kk, as_input in (('qconv3', 64, 3, False), ('qconv3_input', 64, 3, True),
                                  ('qconv1', 256, 1, False)):
        oc = 64
        w = random_bytes(rnd, oc * c * kk * kk, -100, 100)
        inits = [tensor('sx', F32, [], f32(0.05)), tensor('zx', U8, [], bytes([120])),
                 tensor('sw', F32, [oc], f32(*[0.001 * (i + 1) for i in range(oc)])),
                 tensor('zw', S8, [oc], bytes(oc)), tensor('sy', F32, [], f32(0.25)),
                 tensor('zy', U8, [], bytes([90])), tensor('bias', I32, [oc], i32(*range(oc)))]
        x = ('x', U8, [1, c, 56, 56], random_bytes(rnd, c * 56 * 56, 0, 255))
        graph_inputs = [value_info('x', U8, [1, c, 56, 56])]
        data = [x]
        if as_input:
            graph_inputs.append(value_info('w', S8, [oc, c, kk, kk]))
            data.append(('w', S8, [oc, c, kk, kk], w))
        else:
            inits.append(tensor('w', S8, [oc, c, kk, kk], w))
        p = kk // 2
        conv = node('QLinearConv', ['x', 'sx', 'zx', 'w', 'sw', 'zw', 'sy', 'zy', 'bias'], ['y'],
                    'qconv', [ints_attr('pads', [p, p, p, p])])
        write(out, name, model([conv], inits, graph_inputs, [value_info('y', U8, [1, oc, 56, 56])]),
              data)


if __name__ == '__main__':
    main()
