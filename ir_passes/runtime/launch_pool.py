"""The launch records of a gradient's parallel loops, kept between calls
(transforms/reverse/parallel/parallel_launch.py).

A pool is one heap block: {i64 count, i64 capacity, ptr record[capacity]}. Each record is a
heap block whose 32-byte header precedes the record pointer: {ptr drop, ptr fail, i64 size,
pad}. `drop(record)` frees the record and what it keeps (its tasks' frames and copies);
`fail(record)` releases what a forward sweep made in it this call when the reverse will never
run. A gradient call takes its pool from a global at entry (an atomic exchange: a concurrent
call starts with none) and parks it at exit; the n-th launch of the call reuses record n while
it has the same drop function and size, so a repeat call with the same shapes and threads
allocates no record, frame, tape or copy. `each(pool, n, hook)` calls, on each of the first n
records, the function in its header at offset `hook` (-32 drop, -24 fail): dropping a pool and
parking a failed call's pool walk it the same way.
"""
from __future__ import annotations

from .helpers import add_file

add_file(("enzpy.pool.take", "enzpy.pool.drop", "enzpy.pool.park", "enzpy.pool.release",
          "enzpy.pool.record", "enzpy.pool.copy"), "launch_pool")
