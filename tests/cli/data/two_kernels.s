; Test data: a module with two kernels.
.kernel fill_ones
.buffer 0 u0 device float out
    mov.u32 r0, %thread_position_in_grid.x
    st.device.f32 [u0 + r0*4], 1.0
    exit
.end

.kernel fill_twos
.buffer 0 u0 device float out
    mov.u32 r0, %thread_position_in_grid.x
    st.device.f32 [u0 + r0*4], 2.0
    exit
.end
