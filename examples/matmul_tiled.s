; matmul_tiled: C = A * B for row-major float matrices, A M x K, B K x N,
; C M x N, with 16 x 16 tiles of A and B in threadgroup memory.
;
; The thread at grid position (x, y) computes C[y][x] as
;   acc = 0; for k in 0..K-1: acc = fma(A[y][k], B[k][x], acc)
; in that order (the zero padding of the last tile adds nothing).
;
; Threadgroups must be 16 x 16: threadgroup (gx, gy) owns the tile of C at
; rows 16*gy.., columns 16*gx... For each 16-wide slice of K it loads a tile
; of A and a tile of B into threadgroup memory (elements outside the matrices
; as zero), waits at a barrier, accumulates 16 products, and waits again
; before the next slice overwrites the tiles. Its threads share the 512
; loads of a tile pair, so a smaller threadgroup at the grid's edge under
; dispatchThreads still fills the tiles; threads outside C store nothing.
;
; Buffers:
;   0  A     device float[M*K]
;   1  B     device float[K*N]
;   2  C     device float[M*N]  (output)
;   3  dims  constant struct { uint M, N, K; }
;
; Run (M = 37, N = 29, K = 50; the grid is N x M threads):
;   mtlemu run examples/matmul_tiled.s --kernel matmul_tiled --grid 29,37 \
;     --threadgroup 16,16 --buffer '0=float[1850]:random(1)' \
;     --buffer '1=float[1450]:random(2)' --buffer '2=float[1073]:zeros' \
;     --bytes 3=uint:37,29,50 --out 2=C.npy
.kernel matmul_tiled
.buffer 0 u0 device float A
.buffer 1 u2 device float B
.buffer 2 u4 device float C
.buffer 3 u6 constant void dims
.threadgroup_memory 2048                        ; As[16][16] at 0, Bs at 1024
.max_total_threads_per_threadgroup 256
    ld.constant.u32 r0, [u6]                    ; M
    ld.constant.u32 r1, [u6 + 4]                ; N
    ld.constant.u32 r2, [u6 + 8]                ; K
    mov.u32 r3, %thread_position_in_threadgroup.x   ; tx
    mov.u32 r4, %thread_position_in_threadgroup.y   ; ty
    mov.u32 r5, %threadgroup_position_in_grid.x
    shl.u32 r5, r5, 4                           ; col0: the tile's column
    mov.u32 r6, %threadgroup_position_in_grid.y
    shl.u32 r6, r6, 4                           ; row0: the tile's row
    add.u32 r7, r6, r4                          ; row = row0 + ty
    add.u32 r8, r5, r3                          ; col = col0 + tx
    mov.u32 r9, %thread_index_in_threadgroup
    mov.u32 r10, %threads_per_threadgroup.x
    mul.u32 r10, r10, %threads_per_threadgroup.y    ; threads in the group
    mov.f32 r11, 0.0                            ; acc
    mov.u32 r12, 0                              ; k0: the slice of K
    bz r2, store, store
tile_loop:
    ; Tile element e = r9, r9 + r10, ... < 256 at row e / 16, column e % 16.
    mov.u32 r13, r9
load_loop:
    shr.u32 r14, r13, 4                         ; r = e / 16
    and.u32 r15, r13, 15                        ; c = e % 16
    ; As[r][c] = A[row0 + r][k0 + c], or 0 outside A
    add.u32 r16, r6, r14
    add.u32 r17, r12, r15
    lt.u32 r18, r16, r0
    lt.u32 r19, r17, r2
    and.u32 r18, r18, r19
    mov.f32 r20, 0.0
    bz r18, a_loaded, a_loaded
    mad.u32 r21, r16, r2, r17
    ld.device.f32 r20, [u0 + r21*4]
a_loaded:
    st.threadgroup.f32 [r13*4], r20
    ; Bs[r][c] = B[k0 + r][col0 + c], or 0 outside B
    add.u32 r16, r12, r14
    add.u32 r17, r5, r15
    lt.u32 r18, r16, r2
    lt.u32 r19, r17, r1
    and.u32 r18, r18, r19
    mov.f32 r20, 0.0
    bz r18, b_loaded, b_loaded
    mad.u32 r21, r16, r1, r17
    ld.device.f32 r20, [u2 + r21*4]
b_loaded:
    st.threadgroup.f32 [r13*4 + 1024], r20
    add.u32 r13, r13, r10
    lt.u32 r18, r13, 256
    bnz r18, load_loop, tiles_loaded
tiles_loaded:
    threadgroup_barrier.mem_threadgroup
    ; acc = fma(As[ty][k], Bs[k][tx], acc) for k = 0..15
    shl.u32 r22, r4, 6                          ; &As[ty][0]
    shl.u32 r23, r3, 2                          ; &Bs[0][tx] - 1024
    mov.u32 r24, 0                              ; k
k_loop:
    ld.threadgroup.f32 r25, [r22]
    ld.threadgroup.f32 r26, [r23 + 1024]
    fma.f32 r11, r25, r26, r11
    add.u32 r22, r22, 4
    add.u32 r23, r23, 64
    add.u32 r24, r24, 1
    lt.u32 r18, r24, 16
    bnz r18, k_loop, k_done
k_done:
    threadgroup_barrier.mem_threadgroup
    add.u32 r12, r12, 16
    lt.u32 r18, r12, r2
    bnz r18, tile_loop, store
store:
    lt.u32 r18, r7, r0
    lt.u32 r19, r8, r1
    and.u32 r18, r18, r19
    bz r18, done, done
    mad.u32 r21, r7, r1, r8
    st.device.f32 [u4 + r21*4], r11
done:
    exit
.end
