; Test data: out[i] = i, then out[i] = in[i] + 1. Run with more threads than
; `in` has elements: the load at line 12, column 5 faults for the first
; thread past the end, after every thread of its SIMD group stored out[i] = i.
.kernel read_past_end
.buffer 0 u0 device float in
.buffer 1 u2 device float out
    mov.u32 r0, %thread_position_in_grid.x
    cvt.f32.u32 r1, r0
    st.device.f32 [u2 + r0*4], r1
    ; Reads past the end of `in` when the grid is larger than `in`.
    ; The next line is line 12.
    ld.device.f32 r2, [u0 + r0*4]
    add.f32 r2, r2, 1.0
    st.device.f32 [u2 + r0*4], r2
    exit
.end
