"""The disk-cache key covers ir_passes' runtime helpers written in LLVM IR (runtime/*.ll).

Before, it hashed the .py files of enzyme_py and ir_passes only: a changed helper (its body
or its parameters) left the key as it was, and a fresh process loaded gradients compiled
against the old helper. Now generated modules call the helpers of a library compiled once
per process (bridge/runtime.py), so a stale call would reach a different helper."""
import builtins
import io
import os

from enzyme_py import disk_cache


def test_changed_runtime_file_changes_the_key(monkeypatch):
    monkeypatch.setattr(disk_cache, "_versions", [])
    before = disk_cache._library_version()

    def changed(path, *args, **kwargs):
        if os.path.basename(str(path)) == "gemm_guarded.ll":
            with builtins.open(path, "rb") as f:
                return io.BytesIO(f.read() + b"; changed\n")
        return builtins.open(path, *args, **kwargs)
    monkeypatch.setattr(disk_cache, "_versions", [])
    monkeypatch.setattr(disk_cache, "open", changed, raising=False)
    assert disk_cache._library_version() != before
