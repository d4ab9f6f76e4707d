.file 1 "kernels/all_opcodes.metal"
.file 2 "include/helpers.h"

.kernel arithmetic
.buffer 0 u0 device float data
.buffer 1 u2 constant void params
.buffer 2 u4 device long
.max_total_threads_per_threadgroup 256
    mov.u32 r0, %thread_position_in_grid.x
    mov.f32 r1, 1.5
    mov.f16 r2, 0.1
    mov.bf16 r3, -2.0
    mov.i64 r4, -9223372036854775808
    mov.u64 r6, 18446744073709551615
    mov.b8 r8, 1
    mov.u32 r9, u1
    mov.f32 r10, 0x7fc00000
    mov.f16 r11, 0x7e00
    mov.bf16 r12, 0x7fc0
    mov.f32 r13, inf
    mov.f32 r14, -inf
    mov.f16 r15, -0.0
    mov.f32 r16, 1e-7
    mov.f32 r17, 1e20
    mov.f32 r18, 3.4028235e38
    mov.f32 r19, 1e-45
    mov.f16 r20, 65504.0
    mov.f16 r21, 6e-8
    mov.bf16 r22, 3.39e38
    mov.i8 r23, -128
    mov.u8 r24, 255
    mov.i16 r25, -32768
    mov.u16 r26, 65535
    mov.i32 r27, -2147483648
    mov.u32 r28, 4294967295
    add.f32 r1, r1, r10
    add.i32 r27, r27, -1
    add.u64 r6, r6, r4
    add.f16 r2, r2, 0.5
    sub.bf16 r3, r3, r12
    sub.i16 r25, r25, 7
    mul.f32 r1, r1, u0
    mul.u8 r24, r24, 3
    div.f32 r1, r1, 3.0
    div.i32 r27, r27, -3
    rem.u32 r28, r28, 10
    rem.i64 r4, r4, r6
    mulhi.u32 r28, r28, r9
    mulhi.i64 r4, r4, r6
    fma.f32 r1, r1, r10, 0.25
    fma.f16 r2, r2, r11, r2
    fma.bf16 r3, r3, r12, r3
    mad.i32 r27, r27, r27, 1
    mad.u16 r26, r26, 2, r26
    min.f32 r1, r1, r13
    min.i8 r23, r23, -5
    max.f16 r2, r2, r15
    max.u64 r6, r6, 1
    abs.f32 r1, r1
    abs.i32 r27, r27
    neg.bf16 r3, r3
    neg.i64 r4, r4
    absdiff.i32 r27, r27, r0
    addsat.u8 r24, r24, 200
    subsat.i16 r25, r25, 1000
    hadd.u32 r28, r28, r0
    rhadd.i32 r27, r27, r0
    and.u32 r28, r28, 255
    or.u64 r6, r6, 4294967296
    xor.i32 r27, r27, -1
    not.u32 r28, r28
    shl.u32 r28, r28, 3
    shr.i32 r27, r27, 31
    rotl.u32 r28, r28, r0
    popcount.u32 r29, r28
    clz.u64 r30, r6
    ctz.i32 r29, r27
    reverse_bits.u32 r29, r29
    eq.f32 r31, r1, r10
    eq.b8 r31, r8, 0
    ne.u64 r31, r6, r4
    lt.i32 r31, r27, 0
    le.f16 r31, r2, 1.0
    gt.u32 r31, r0, %threads_per_grid.x
    ge.bf16 r31, r3, r12
    isnan.f32 r31, r1
    isinf.f16 r31, r2
    isfinite.bf16 r31, r3
    signbit.f32 r31, r16
    select.f32 r1, r31, r1, 2.0
    select.u64 r6, r31, r6, r4
    select.b8 r8, r31, r8, 0
    cvt.f32.i32 r1, r27
    cvt.i32.f32 r27, r1
    cvt.f16.f32 r2, r1
    cvt.bf16.f16 r3, r2
    cvt.u64.u32 r6, r28
    cvt.b8.u8 r8, r24
    cvt.f32.b8 r1, r8
    cvt_sat.u8.i32 r24, r27
    cvt_sat.i16.u64 r25, r6
    floor.f32 r1, r1
    ceil.f16 r2, r2
    trunc.bf16 r3, r3
    rint.f32 r1, r1
    round.f32 r1, r1
    fract.f16 r2, r2
    sqrt.f32 r1, r1
    rsqrt.f16 r2, r2
    rcp.f32 r1, r1
    exp2.f32 r1, r1
    log2.f32 r1, r1
    exp.bf16 r3, r3
    log.f32 r1, r1
    exp10.f32 r1, r1
    log10.f16 r2, r2
    sin.f32 r1, r1
    cos.f32 r1, r1
    tan.f32 r1, r1
    sinpi.f32 r1, r1
    cospi.f16 r2, r2
    tanpi.f32 r1, r1
    asin.f32 r1, r1
    acos.f32 r1, r1
    atan.f32 r1, r1
    sinh.f32 r1, r1
    cosh.f32 r1, r1
    tanh.f16 r2, r2
    asinh.f32 r1, r1
    acosh.f32 r1, r1
    atanh.f32 r1, r1
    atan2.f32 r1, r1, r10
    pow.f32 r1, r1, 2.0
    fmod.f32 r1, r1, 0.75
    copysign.f32 r1, r1, -1.0
    ldexp.f32 r1, r1, r27
    ldexp.f16 r2, r2, -3
    st.device.f32 [u0 + r0*4], r1
    exit
.end

.kernel memory
.buffer 0 u0 device float a
.buffer 1 u2 device uint counters
.buffer 3 u4 constant half table
.buffer 4 u6 device void
.threadgroup 0 u8 shared
.threadgroup 2 u9
.threadgroup_memory 4096
.thread_memory 64
    mov.u32 r0, %thread_index_in_threadgroup
    mov.u32 r1, %thread_position_in_threadgroup.y
    ld.device.f32 r2, [u0]
    ld.device.f32 r2, [u0 + 16]
    ld.device.f32 r2, [u0 - 4]
    ld.device.f32 r2, [u0 + r0]
    ld.device.f32 r2, [u0 + r0*4]
    ld.device.f32 r2, [u0 + r0*4 + 8]
    ld.device.f32 r2, [u0 + sext(r1)*8 - 12]
    ld.device.v2.f32 r4, [u0 + r0*8]
    ld.device.v3.u32 r4, [u2 + r0*16]
    ld.device.v4.f32 r4, [u0 + r0*16]
    ld.device.v2.u64 r8, [u6 + r0*16]
    ld.constant.f16 r3, [u4 + r0*2]
    ld.constant.v4.i16 r4, [u4 + r0*8 + 2]
    ld.threadgroup.f32 r2, [64]
    ld.threadgroup.f32 r2, [-8]
    ld.threadgroup.f32 r2, [r0*4]
    ld.threadgroup.f32 r2, [r0*1]
    ld.threadgroup.f32 r2, [sext(r1)*16 + 32]
    ld.threadgroup.u8 r3, [u8 + r0]
    ld.threadgroup.v2.i8 r4, [r0 + 4]
    ld.thread.f32 r2, [r0*4]
    ld.thread.v4.u32 r4, [0]
    ld.device.i32 r3, [r12 + r0*4]
    st.device.f32 [u0 + r0*4], r2
    st.device.v4.f32 [u0 + r0*16], r4
    st.device.u64 [u6], r8
    st.device.u32 [u2], 7
    st.device.f32 [u0 + 4], 0.5
    st.threadgroup.f32 [r0*4], r2
    st.threadgroup.v2.u16 [u9 + r0*4], r4
    st.threadgroup.b8 [u8 + r0], 1
    st.thread.i32 [r0*4 + 4], -1
    atomic_load.device.u32 r3, [u2]
    atomic_load.threadgroup.i32 r3, [u8 + r0*4]
    atomic_load.device.f32 r2, [u0 + 8]
    atomic_store.device.u32 [u2 + 4], r3
    atomic_store.threadgroup.i32 [r0*4], 0
    atomic_store.device.f32 [u0], 1.0
    atomic_exchange.device.u32 r3, [u2], r0
    atomic_exchange.device.f32 r2, [u0], r2
    atomic_compare_exchange.device.u32 r3, [u2], 0, 1
    atomic_compare_exchange.threadgroup.i32 r3, [u8], r3, r0
    atomic_add.device.u32 r3, [u2 + r0*4], 1
    atomic_add.device.f32 r2, [u0], 0.5
    atomic_add.threadgroup.i32 r3, [u8], %simdgroup_index_in_threadgroup
    atomic_sub.device.i32 r3, [u2], 1
    atomic_sub.device.f32 r2, [u0], r2
    atomic_min.device.i32 r3, [u2], r0
    atomic_max.threadgroup.u32 r3, [u8 + 4], r0
    atomic_and.device.u32 r3, [u2], 65535
    atomic_or.device.i32 r3, [u2], r0
    atomic_xor.threadgroup.u32 r3, [r0*4 + 64], r1
    threadgroup_barrier.mem_none
    threadgroup_barrier.mem_threadgroup
    threadgroup_barrier.mem_device.mem_threadgroup
    threadgroup_barrier.mem_device.mem_threadgroup.mem_texture.mem_threadgroup_imageblock
    simdgroup_barrier.mem_none
    simdgroup_barrier.mem_texture
    exit
.end

.kernel simd
.buffer 0 u0 device float a
.buffer 1 u2 device half h
.threadgroup 0 u4
    mov.u32 r0, %thread_index_in_simdgroup
    mov.u32 r1, %thread_index_in_quadgroup
    mov.u32 r2, %threads_per_simdgroup
    ld.device.f32 r3, [u0 + r0*4]
    simd_shuffle.f32 r4, r3, r1
    simd_shuffle.u64 r6, r6, 3
    simd_shuffle_xor.f32 r4, r3, 1
    simd_shuffle_up.i32 r4, r4, u1
    simd_shuffle_down.f16 r4, r4, 2
    simd_shuffle_rotate_up.u32 r4, r4, 5
    simd_shuffle_rotate_down.bf16 r4, r4, r0
    simd_broadcast.f32 r4, r3, 0
    simd_broadcast_first.u32 r4, r0
    simd_is_first r5
    simd_ballot r5, r5
    simd_all r5, r5
    simd_any r5, 1
    simd_active_threads_mask r5
    simd_sum.f32 r4, r3
    simd_product.i32 r4, r4
    simd_min.u32 r4, r0
    simd_max.f16 r4, r4
    simd_and.u32 r4, r4
    simd_or.i64 r6, r6
    simd_xor.u8 r4, r4
    simd_prefix_inclusive_sum.f32 r4, r3
    simd_prefix_exclusive_sum.u32 r4, r0
    simd_prefix_inclusive_product.f32 r4, r3
    simd_prefix_exclusive_product.i16 r4, r4
    quad_shuffle.f32 r4, r3, r1
    quad_shuffle_xor.u32 r4, r0, 2
    quad_shuffle_up.f32 r4, r3, 1
    quad_shuffle_down.i32 r4, r4, 1
    quad_shuffle_rotate_up.f16 r4, r4, 1
    quad_shuffle_rotate_down.b8 r4, r4, 3
    quad_broadcast.f32 r4, r3, 0
    quad_broadcast_first.u64 r6, r6
    quad_is_first r5
    quad_ballot r5, r5
    quad_all r5, r5
    quad_any r5, r5
    quad_active_threads_mask r5
    quad_sum.f32 r4, r3
    quad_product.bf16 r4, r4
    quad_min.i32 r4, r4
    quad_max.u32 r4, r0
    quad_and.u32 r4, r4
    quad_or.i8 r4, r4
    quad_xor.u16 r4, r4
    quad_prefix_inclusive_sum.f32 r4, r3
    quad_prefix_exclusive_sum.u32 r4, r0
    quad_prefix_inclusive_product.f16 r4, r4
    quad_prefix_exclusive_product.i32 r4, r4
    simdgroup_load.device.f32 r8, [u0], 8
    simdgroup_load.device.f32.transpose r10, [u0 + 256], r2
    simdgroup_load.constant.f16 r12, [u2], 16
    simdgroup_load.threadgroup.f32 r14, [u4 + 64], 8
    simdgroup_multiply_accumulate.f32 r16, r8, r10, r14
    simdgroup_multiply_accumulate.f16 r18, r12, r12, r12
    simdgroup_store.device.f32 [u0 + 512], r16, 8
    simdgroup_store.threadgroup.f16.transpose [r0*2], r18, 8
    simdgroup_store.device.f32.transpose [u0], r16, u1
    exit
.end

.kernel control
.buffer 0 u0 device uint out
.buffer 1 u2 constant uint n
    .loc 1 10 5
    mov.u32 r0, %thread_position_in_grid.x
    mov.u32 r1, %threadgroup_position_in_grid.y
    .loc 1 11 9
    ld.constant.u32 r2, [u2]
    ge.u32 r3, r0, r2
    .loc 0 0
    bnz r3, done, done
    mov.u32 r4, 0
loop:
    .loc 2 3
    add.u32 r4, r4, 1
    lt.u32 r5, r4, 8
    .loc 1 14 3
    bnz r5, loop, after
after:
    .loc 0 0
    bz r4, skip, skip
    mov.u32 r6, %threads_per_threadgroup.z
skip:
    br tail
dead:
    exit
stop:
    trap
tail:
    st.device.u32 [u0 + r0*4], r4
done:
    exit
.end

.kernel tiny
    exit
.end
