"""LLVM intrinsics for the compiled search: population count, trailing zeros and a monotonic clock.

Each is a ``numba.extending.intrinsic``, so the functions that use them stay cacheable with
``njit(cache=True)`` (a ctypes call, the other way to read a clock, makes numba refuse the cache).
"""

from __future__ import annotations

import sys

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

CLOCK_MONOTONIC = 6 if sys.platform == "darwin" else 1
"""``clock_gettime``'s id of the monotonic clock on this platform (1 on Linux, 6 on macOS)."""


@intrinsic
def popcount(typingctx, x):
    """The number of set bits of an int64."""
    sig = types.int64(types.int64)

    def codegen(context, builder, signature, args):
        fn = builder.module.declare_intrinsic("llvm.ctpop", [ir.IntType(64)])
        return builder.call(fn, args)

    return sig, codegen


@intrinsic
def lowest_index(typingctx, x):
    """The index of the lowest set bit of a nonzero int64 (64 for zero)."""
    sig = types.int64(types.int64)

    def codegen(context, builder, signature, args):
        fn = builder.module.declare_intrinsic("llvm.cttz", [ir.IntType(64), ir.IntType(1)])
        return builder.call(fn, [args[0], ir.Constant(ir.IntType(1), 0)])

    return sig, codegen


@intrinsic
def monotonic_ns(typingctx):
    """Nanoseconds of the system's monotonic clock (``time.monotonic_ns``'s clock)."""
    sig = types.int64()

    def codegen(context, builder, signature, args):
        i64, i32 = ir.IntType(64), ir.IntType(32)
        timespec = ir.LiteralStructType([i64, i64])
        module = builder.module
        fn = module.globals.get("clock_gettime")
        if fn is None:
            fn = ir.Function(module, ir.FunctionType(i32, [i32, timespec.as_pointer()]), "clock_gettime")
        ts = builder.alloca(timespec)
        builder.call(fn, [ir.Constant(i32, CLOCK_MONOTONIC), ts])
        zero = ir.Constant(i32, 0)
        sec = builder.load(builder.gep(ts, [zero, zero]))
        nsec = builder.load(builder.gep(ts, [zero, ir.Constant(i32, 1)]))
        return builder.add(builder.mul(sec, ir.Constant(i64, 1_000_000_000)), nsec)

    return sig, codegen


@intrinsic
def prefetch(typingctx, array, index):
    """Ask the CPU to bring row ``index`` of a 2-D int64 array into the cache (no effect on values)."""
    sig = types.void(array, index)

    def codegen(context, builder, signature, args):
        arrty = signature.args[0]
        arr = context.make_array(arrty)(context, builder, args[0])
        stride = builder.extract_value(arr.strides, 0)
        base = builder.ptrtoint(arr.data, ir.IntType(64))
        address = builder.add(base, builder.mul(args[1], stride))
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = builder.module.declare_intrinsic("llvm.prefetch", [i8p], fnty)
        pointer = builder.inttoptr(address, i8p)
        builder.call(fn, [pointer, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen
