# Triton kernels written for mtlemu's tests, one per feature the Triton
# path must get right. Each is run by tests/compiler/triton/corpus_test.cpp
# and checked against a plain C++ reference.
import triton
import triton.language as tl


# --- matmul with grouped program ordering, as in Triton's tutorial 03 ---------

@triton.jit
def grouped_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                          stride_am, stride_ak, stride_bk, stride_bn,
                          stride_cm, stride_cn,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                          BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = accumulator.to(c_ptr.dtype.element_ty)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


# --- layer norm, forward and backward, as in Triton's tutorial 05 ---------------

@triton.jit
def layer_norm_fwd(X, Y, W, B, Mean, Rstd, stride, N, eps,
                   BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    mean = 0
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        tl.store(Y + cols, y, mask=mask)


@triton.jit
def layer_norm_bwd_dx_fused(DX, DY, DW, DB, X, W, Mean, Rstd, Lock, stride, N,
                            GROUP_SIZE_M: tl.constexpr,
                            BLOCK_SIZE_N: tl.constexpr):
    # dx for one row, and this row's share of dw and db added into one of
    # GROUP_SIZE_M partial sums, guarded by a spin lock.
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE_N)
    mask = cols < N
    X += row * stride
    DY += row * stride
    DX += row * stride
    lock_id = row % GROUP_SIZE_M
    Lock += lock_id
    Count = Lock + GROUP_SIZE_M
    DW = DW + lock_id * N + cols
    DB = DB + lock_id * N + cols
    x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
    dy = tl.load(DY + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)
    xhat = (x - mean) * rstd
    wdy = w * dy
    xhat = tl.where(mask, xhat, 0.)
    wdy = tl.where(mask, wdy, 0.)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    dx = (wdy - (xhat * c1 + c2)) * rstd
    tl.store(DX + cols, dx, mask=mask)
    partial_dw = (dy * xhat).to(w.dtype)
    partial_db = (dy).to(w.dtype)
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = tl.load(Count)
    if count == 0:
        tl.atomic_xchg(Count, 1)
    else:
        partial_dw += tl.load(DW, mask=mask)
        partial_db += tl.load(DB, mask=mask)
    tl.store(DW, partial_dw, mask=mask)
    tl.store(DB, partial_db, mask=mask)
    tl.debug_barrier()
    tl.atomic_xchg(Lock, 0)


# --- fused attention forward: online softmax, two dots ---------------------------

@triton.jit
def attention_fwd(Q, K, V, Out, sm_scale, seq_len,
                  stride_qm, stride_km, stride_vm, stride_om,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  HEAD_DIM: tl.constexpr):
    start_m = tl.program_id(0)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + offs_m[:, None] * stride_qm + offs_d[None, :],
                mask=offs_m[:, None] < seq_len, other=0.0)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    for start_n in range(0, seq_len, BLOCK_N):
        cols = start_n + offs_n
        k = tl.load(K + cols[None, :] * stride_km + offs_d[:, None],
                    mask=cols[None, :] < seq_len, other=0.0)
        qk = tl.dot(q, k)
        qk = tl.where(cols[None, :] < seq_len, qk * qk_scale, -float("inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(V + cols[:, None] * stride_vm + offs_d[None, :],
                    mask=cols[:, None] < seq_len, other=0.0)
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    tl.store(Out + offs_m[:, None] * stride_om + offs_d[None, :],
             acc.to(Out.dtype.element_ty), mask=offs_m[:, None] < seq_len)


# --- scans, argmax, histogram, custom combiners --------------------------------

@triton.jit
def cumsum_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0)
    tl.store(y_ptr + row * n_cols + cols, tl.cumsum(x, axis=0), mask=cols < n_cols)


@triton.jit
def _compose_affine(a1, b1, a2, b2):
    # x -> a1 * x + b1, then x -> a2 * x + b2: not commutative, so the scan's
    # order shows.
    return a1 * a2, b1 * a2 + b2


@triton.jit
def linear_recurrence_kernel(a_ptr, b_ptr, h_ptr, ROWS: tl.constexpr, COLS: tl.constexpr,
                             AXIS: tl.constexpr, REVERSE: tl.constexpr):
    offs = tl.arange(0, ROWS)[:, None] * COLS + tl.arange(0, COLS)[None, :]
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    _, h = tl.associative_scan((a, b), AXIS, _compose_affine, reverse=REVERSE)
    tl.store(h_ptr + offs, h)


@triton.jit
def argmax_kernel(x_ptr, out_ptr, n_cols, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :],
                mask=cols[None, :] < n_cols, other=-float("inf"))
    tl.store(out_ptr + rows, tl.argmax(x, axis=1))


@triton.jit
def histogram_kernel(x_ptr, hist_ptr, n, NUM_BINS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    bins = tl.arange(0, NUM_BINS)
    for i in tl.static_range(NUM_BINS):
        count = tl.sum(((x == i) & (offs < n)).to(tl.int32), axis=0)
        tl.atomic_add(hist_ptr + i, count)


@triton.jit
def _max_and_count(a_max, a_count, b_max, b_count):
    # The largest value, and how many times it occurs.
    bigger = a_max > b_max
    same = a_max == b_max
    out_max = tl.where(bigger, a_max, b_max)
    out_count = tl.where(same, a_count + b_count, tl.where(bigger, a_count, b_count))
    return out_max, out_count


@triton.jit
def custom_reduce_kernel(x_ptr, max_ptr, count_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    ones = tl.full([BLOCK], 1, tl.int32)
    m, c = tl.reduce((x, ones), 0, _max_and_count)
    tl.store(max_ptr, m)
    tl.store(count_ptr, c)


# --- broadcasting, integer arithmetic, control flow -----------------------------

@triton.jit
def outer_kernel(x_ptr, y_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, M))
    y = tl.load(y_ptr + tl.arange(0, N))
    out = x[:, None] * y[None, :] + tl.arange(0, N)[None, :]
    tl.store(out_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], out)


@triton.jit
def int_div_mod_kernel(a_ptr, b_ptr, q_ptr, r_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=1)
    b = tl.load(b_ptr + offs, mask=mask, other=1)
    tl.store(q_ptr + offs, a // b, mask=mask)
    tl.store(r_ptr + offs, a % b, mask=mask)


@triton.jit
def while_kernel(x_ptr, out_ptr, limit):
    # Doubles until the value passes a runtime limit; counts the steps.
    pid = tl.program_id(0)
    v = tl.load(x_ptr + pid)
    steps = 0
    while v < limit:
        v = v * 2
        steps += 1
    tl.store(out_ptr + pid, steps)


@triton.jit
def early_exit_kernel(x_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if pid * BLOCK >= n:
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, offs.to(tl.float32), mask=offs < n)


# --- block pointers and tensor descriptors ----------------------------------------

@triton.jit
def block_ptr_copy_kernel(src, dst, M, N, stride_m, BLOCK_M: tl.constexpr,
                          BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    s = tl.make_block_ptr(base=src, shape=(M, N), strides=(stride_m, 1),
                          offsets=(pid_m * BLOCK_M, pid_n * BLOCK_N),
                          block_shape=(BLOCK_M, BLOCK_N), order=(1, 0))
    d = tl.make_block_ptr(base=dst, shape=(N, M), strides=(M, 1),
                          offsets=(pid_n * BLOCK_N, pid_m * BLOCK_M),
                          block_shape=(BLOCK_N, BLOCK_M), order=(1, 0))
    x = tl.load(s, boundary_check=(0, 1), padding_option="zero")
    tl.store(d, tl.trans(x) * 2, boundary_check=(0, 1))


@triton.jit
def descriptor_add_kernel(a, b, out, M, N, BLOCK_M: tl.constexpr,
                          BLOCK_N: tl.constexpr):
    da = tl.make_tensor_descriptor(a, shape=[M, N], strides=[N, 1],
                                   block_shape=[BLOCK_M, BLOCK_N])
    db = tl.make_tensor_descriptor(b, shape=[M, N], strides=[N, 1],
                                   block_shape=[BLOCK_M, BLOCK_N])
    do = tl.make_tensor_descriptor(out, shape=[M, N], strides=[N, 1],
                                   block_shape=[BLOCK_M, BLOCK_N])
    om = tl.program_id(0) * BLOCK_M
    on = tl.program_id(1) * BLOCK_N
    do.store([om, on], da.load([om, on]) + db.load([om, on]))


# --- random numbers, sorting ------------------------------------------------------

@triton.jit
def rand_kernel(out_uniform, out_normal, out_int, seed, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_uniform + offs, tl.rand(seed, offs), mask=mask)
    tl.store(out_normal + offs, tl.randn(seed, offs), mask=mask)
    tl.store(out_int + offs, tl.randint(seed, offs), mask=mask)


@triton.jit
def sort_kernel(x_ptr, out_ptr, DESCENDING: tl.constexpr, N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + row * N + offs)
    tl.store(out_ptr + row * N + offs, tl.sort(x, descending=DESCENDING))


@triton.jit
def flip_kernel(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, tl.flip(tl.load(x_ptr + offs), 0))


# --- math ------------------------------------------------------------------------

@triton.jit
def gelu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    y = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(out_ptr + offs, y, mask=offs < n)


# --- an integer dot (no simdgroup_matrix for integers) ---------------------------

@triton.jit
def int8_dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr,
                    K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b))
