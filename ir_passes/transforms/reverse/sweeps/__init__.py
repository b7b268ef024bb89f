"""The reverse-mode pass: driver.py (reverse_mode), gradient.py (the state of one gradient),
forward_sweep.py, reverse_sweep.py, instructions.py (one instruction's reverse, by opcode) and
report.py (the tape layout for `explain`)."""
