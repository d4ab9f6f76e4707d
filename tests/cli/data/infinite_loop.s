; Test data: out[i] = i, then loops forever.
.kernel spin
.buffer 0 u0 device uint out
    mov.u32 r0, %thread_position_in_grid.x
    st.device.u32 [u0 + r0*4], r0
loop:
    add.u32 r0, r0, 1
    br loop
.end
