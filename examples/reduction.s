; reduction: per-threadgroup partial sums of n floats.
;
; partial[g] = the sum of in[i] over the indices i < n visited by the threads
; of threadgroup g, where the thread at grid position t visits t, t + T,
; t + 2T, ... (a grid-stride loop; T = threads_per_grid.x). Add the partial
; sums on the host: one partial per threadgroup keeps the result
; deterministic, where atomic_add.device.f32 into one float would depend on
; the order the threadgroups run in.
;
; Each thread sums its elements; simd_sum reduces each SIMD group; lane 0 of
; each SIMD group writes its sum to threadgroup memory; after the barrier
; SIMD group 0 reduces those (up to 8) sums with simd_sum and lane 0 writes
; partial[threadgroup_position_in_grid.x]. Works with dispatchThreads
; (--grid, a smaller last threadgroup included) and dispatchThreadgroups
; (--groups), 1-D threadgroups of up to 256 threads.
;
; Buffers:
;   0  in       device float[n]        the data
;   1  partial  device float[groups]   one sum per threadgroup (output)
;   2  n        constant uint          the element count
;
; Run (n = 100000, 16 threadgroups of 256 threads = 8 SIMD groups each):
;   mtlemu run examples/reduction.s --kernel reduce_sum --groups 16 \
;     --threadgroup 256 --buffer '0=float[100000]:random(1)' \
;     --buffer '1=float[16]:zeros' --bytes 2=uint:100000 --out 1=partial.npy
.kernel reduce_sum
.buffer 0 u0 device float in
.buffer 1 u2 device float partial
.buffer 2 u4 constant uint n
.threadgroup_memory 32
.max_total_threads_per_threadgroup 256
    mov.u32 r0, %thread_position_in_grid.x      ; i = this thread's first
    ld.constant.u32 r1, [u4]                    ; n
    mov.f32 r2, 0.0                             ; sum
    ge.u32 r3, r0, r1
    bnz r3, reduce, reduce
loop:
    ld.device.f32 r4, [u0 + r0*4]
    add.f32 r2, r2, r4
    add.u32 r0, r0, %threads_per_grid.x
    lt.u32 r3, r0, r1
    bnz r3, loop, reduce
reduce:
    simd_sum.f32 r5, r2                         ; this SIMD group's sum
    mov.u32 r6, %thread_index_in_simdgroup
    mov.u32 r7, %simdgroup_index_in_threadgroup
    bnz r6, stored, stored                      ; lane 0 stores it
    st.threadgroup.f32 [r7*4], r5
stored:
    threadgroup_barrier.mem_threadgroup
    bnz r7, done, done                          ; SIMD group 0 goes on
    mov.f32 r8, 0.0                             ; lane L: SIMD group L's sum
    ge.u32 r9, r6, %simdgroups_per_threadgroup
    bnz r9, loaded, loaded
    ld.threadgroup.f32 r8, [r6*4]
loaded:
    simd_sum.f32 r10, r8
    bnz r6, done, done                          ; lane 0 writes the result
    mov.u32 r11, %threadgroup_position_in_grid.x
    st.device.f32 [u2 + r11*4], r10
done:
    exit
.end
