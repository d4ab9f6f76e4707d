; Test data: an unknown mnemonic at line 6, column 5.
.kernel broken
.buffer 0 u0 device float out
    mov.u32 r0, %thread_position_in_grid.x
    cvt.f32.u32 r1, r0
    bogus.f32 r2, r1
    st.device.f32 [u0 + r0*4], r2
    exit
.end
