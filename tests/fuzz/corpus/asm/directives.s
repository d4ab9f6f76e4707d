; Every directive: threadgroup arguments, memory sizes, constant data,
; source files and locations.
.file 1 "kernel.metal"
.kernel directives
.buffer 0 u0 device void data
.buffer 1 u2 constant int params
.threadgroup 0 u4 scratch
.threadgroup_memory 256
.thread_memory 16
.max_total_threads_per_threadgroup 128
.constant_data u6 8
.data 0000803f00000040
.loc 1 12 5
    mov.u32 r0, %thread_index_in_threadgroup
    ld.constant.f32 r1, [u6 + r0*4]
    st.threadgroup.f32 [u4 + r0*4], r1
.loc 0 0
    threadgroup_barrier.mem_threadgroup
    ld.threadgroup.v2.f32 r2, [r0*8 + 16]
    st.thread.f32 [r0], r2
    cvt.f16.f32 r4, r2
    cvt_sat.u8.i32 r5, r0
    exit
.end
