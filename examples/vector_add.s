; vector_add: out[i] = a[i] + b[i] for i < n
.kernel vector_add
.buffer 0 u0 device float a
.buffer 1 u2 device float b
.buffer 2 u4 device float out
.buffer 3 u6 constant uint n
    mov.u32 r0, %thread_position_in_grid.x
    ld.constant.u32 r1, [u6]
    ge.u32 r2, r0, r1
    bnz r2, done, done
    ld.device.f32 r3, [u0 + r0*4]
    ld.device.f32 r4, [u2 + r0*4]
    add.f32 r5, r3, r4
    st.device.f32 [u4 + r0*4], r5
done:
    exit
.end
