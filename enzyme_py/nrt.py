"""Numba's runtime (NRT) described for ir_passes: how kernels allocate memory.

`np.empty` and friends call an NRT allocator that returns a meminfo handle, and
`NRT_MemInfo_data*` turns the handle into the data pointer. ir_passes gives an
allocation that receives differentiable data a zeroed shadow of the same size.
"""
from ir_passes import register_allocator

for _alloc in ("NRT_MemInfo_alloc_aligned", "NRT_MemInfo_alloc_safe_aligned",
               "NRT_MemInfo_alloc", "NRT_MemInfo_alloc_safe"):
    for _data in ("NRT_MemInfo_data_fast", "NRT_MemInfo_data"):
        register_allocator(_alloc, size_arg=0, data=_data)
