.kernel branches
.buffer 0 u0 device long out
    mov.u32 r0, %thread_position_in_grid.x
    mov.u64 r2, 0
loop:
    add.i64 r2, r2, -1
    add.u32 r0, r0, 0x10
    lt.u32 r1, r0, 1000
    bnz r1, loop, after
after:
    bz r1, tail, tail
tail:
    st.device.i64 [u0 + sext(r0)*8 - 8], r2
    br end
end:
    trap
.end
