"""How adjoints reach shadow memory: memory.py (loads, stores, memory intrinsics), growing.py (a
reallocation that moved a shadow), shadow_updates.py (plain, privatised or atomic adds, for
functions run by many threads), deferred.py (a loop's sums kept in a register), deferred_rank1.py
(a loop's rank-1 updates as one gemm)."""
