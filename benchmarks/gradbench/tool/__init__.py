"""The enzyme_py GradBench tool: `python -m benchmarks.gradbench.tool` speaks GradBench's protocol
(JSON lines on stdin/stdout: start, define, evaluate, analysis, end).

Each eval is a module here whose FUNCTIONS maps a function name to a `Function`: `prepare` turns
the JSON input into NumPy arrays (untimed), `compute` is the timed call, `post` turns the result
back into JSON. Derivatives are enzyme_py's, of Numba kernels; nothing is hand-written.
"""
