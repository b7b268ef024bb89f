"""Reverse mode: the augmented forward sweep, the reverse sweep, and what they share."""
