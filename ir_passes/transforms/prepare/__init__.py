"""The passes run on the primal before differentiation, each file named as its pass."""
