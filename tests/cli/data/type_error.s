; Test data: assembles, but the verifier rejects line 5, column 5 (and takes
; no float type).
.kernel mistyped
    mov.u32 r0, %thread_position_in_grid.x
    and.f32 r1, r0, r0
    exit
.end
