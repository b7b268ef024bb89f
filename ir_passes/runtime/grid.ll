; The loop of the elementwise matrix helpers (matrix_grids.ll says what fills it): a helper
; `enzpy.NAME.SUFFIX(PARAMS)` over a column-major ROWS x COLS grid, %j the column (HEAD runs once
; per column), %i the row (BODY, straight-line code, once per element); PRE runs once first, and
; TAIL (declarations) follows the function.

define internal void @enzpy.{{NAME}}.{{SUFFIX}}({{PARAMS}}) {
entry:
{{PRE}}
  %norows = icmp sle i64 {{ROWS}}, 0
  %nocols = icmp sle i64 {{COLS}}, 0
  %none = or i1 %norows, %nocols
  br i1 %none, label %done, label %col
col:
  %j = phi i64 [ 0, %entry ], [ %j1, %colnext ]
{{HEAD}}
  br label %row
row:
  %i = phi i64 [ 0, %col ], [ %i1, %row ]
{{BODY}}
  %i1 = add i64 %i, 1
  %rmore = icmp slt i64 %i1, {{ROWS}}
  br i1 %rmore, label %row, label %colnext
colnext:
  %j1 = add i64 %j, 1
  %cmore = icmp slt i64 %j1, {{COLS}}
  br i1 %cmore, label %col, label %done
done:
  ret void
}
{{TAIL}}
