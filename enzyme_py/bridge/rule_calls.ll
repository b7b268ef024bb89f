; The bodies rule_calls.py gives each specialisation of an @njit function with a custom rule, in
; pieces: `slot`, the global holding an address (Numba's way to call a ctypes function, whose
; name ir_passes reads); `trampoline`, Numba's calling convention as a call of the compiled code
; at slot COMPILED (PARAMS: ", " and the parameters, or nothing), its status returned when it
; raised, its result (type RET) read by RESULT and stored back as Y; RESULT is `plain`, the result
; %y0 as the call left it, or `ruled`, %y0 passed through the cfunc at slot SLOT that carries the
; rule (RULE_ARGS: the parameters and ", ", or nothing);
; `forwarding`, a definition's HEADER line with its body replaced by a call of the compiled code
; with the same arguments (ARGS), returning its status.

; -- slot
@"{{SLOT}}" = linkonce global ptr inttoptr (i64 {{ADDRESS}} to ptr)

; -- trampoline
define linkonce_odr i32 @"{{NAME}}"(ptr noalias %retptr, ptr noalias %excinfo{{PARAMS}}) {
entry:
  %fn = load ptr, ptr @"{{COMPILED}}"
  %st = call i32 %fn(ptr %retptr, ptr %excinfo{{PARAMS}})
  %ok = icmp eq i32 %st, 0
  br i1 %ok, label %done, label %raised
raised:
  ret i32 %st
done:
{{RESULT}}
  store {{RET}} {{Y}}, ptr %retptr
  ret i32 0
}

; -- plain
  %y0 = load {{RET}}, ptr %retptr

; -- ruled
  %y0 = load {{RET}}, ptr %retptr
  %rule = load ptr, ptr @"{{SLOT}}"
  %y = call {{RET}} %rule({{RULE_ARGS}}{{RET}} %y0)

; -- forwarding
{{HEADER}}
entry.forward:
  %fn.forward = load ptr, ptr @"{{COMPILED}}"
  %st.forward = call i32 %fn.forward({{ARGS}})
  ret i32 %st.forward
}
