"""Forward mode: the primal with tangents beside each instruction."""
