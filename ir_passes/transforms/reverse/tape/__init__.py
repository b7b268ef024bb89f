"""What the reverse sweep reads back, and how: tape.py (loop counters, the frame and its arrays),
tape_keys.py (what an entry holds), availability.py + plan.py (how each primal value is got
again), recurrence.py (integer recurrences run backwards), restore.py (overwritten memory put
back), retain.py (allocations kept alive until the reverse sweep ends)."""
