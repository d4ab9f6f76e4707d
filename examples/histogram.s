; histogram: a 256-bin histogram of n bytes.
;
; hist[b] += the number of i < n with data[i] == b, for b in 0..255.
;
; Each threadgroup zeroes a 256-bin histogram in threadgroup memory, waits at
; a barrier, counts the elements its threads visit (a grid-stride loop: the
; thread at grid position t visits t, t + T, t + 2T, ... with
; T = threads_per_grid.x) with atomic_add.threadgroup.u32, waits again, then
; adds its non-zero bins into hist with atomic_add.device.u32. The result
; does not depend on the grid. 1-D grids and threadgroups only.
;
; Buffers:
;   0  data  device uchar[n]   the bytes
;   1  hist  device uint[256]  the histogram; give it zeroed to get counts
;   2  n     constant uint     the element count
;
; Run (n = 100000, 8 threadgroups of 256 threads):
;   mtlemu run examples/histogram.s --kernel histogram --groups 8 \
;     --threadgroup 256 --buffer '0=uchar[100000]:iota' \
;     --buffer '1=uint[256]:zeros' --bytes 2=uint:100000 --out 1=hist.npy
.kernel histogram
.buffer 0 u0 device uchar data
.buffer 1 u2 device uint hist
.buffer 2 u4 constant uint n
.threadgroup_memory 1024
    mov.u32 r0, %thread_index_in_threadgroup
    mov.u32 r1, %threads_per_threadgroup.x
    ; local[b] = 0 for b = r0, r0 + r1, ... < 256
    mov.u32 r2, r0
    ge.u32 r3, r2, 256
    bnz r3, zeroed, zeroed
zero_loop:
    st.threadgroup.u32 [r2*4], 0
    add.u32 r2, r2, r1
    lt.u32 r3, r2, 256
    bnz r3, zero_loop, zeroed
zeroed:
    threadgroup_barrier.mem_threadgroup
    ; local[data[i]] += 1 for i = grid position, + threads_per_grid, ... < n
    mov.u32 r4, %thread_position_in_grid.x
    ld.constant.u32 r5, [u4]
    ge.u32 r3, r4, r5
    bnz r3, counted, counted
count_loop:
    ld.device.u8 r6, [u0 + r4]
    atomic_add.threadgroup.u32 r7, [r6*4], 1
    add.u32 r4, r4, %threads_per_grid.x
    lt.u32 r3, r4, r5
    bnz r3, count_loop, counted
counted:
    threadgroup_barrier.mem_threadgroup
    ; hist[b] += local[b] for the non-zero bins b = r0, r0 + r1, ... < 256
    mov.u32 r2, r0
    ge.u32 r3, r2, 256
    bnz r3, done, done
flush_loop:
    ld.threadgroup.u32 r8, [r2*4]
    bz r8, flushed, flushed
    atomic_add.device.u32 r7, [u2 + r2*4], r8
flushed:
    add.u32 r2, r2, r1
    lt.u32 r3, r2, 256
    bnz r3, flush_loop, done
done:
    exit
.end
