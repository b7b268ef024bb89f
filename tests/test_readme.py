"""The README's Python blocks run as written: in order, in one namespace, as a reader would
paste them into one Python prompt (each block defines what it uses beyond the earlier blocks)."""
import os
import re

import numpy as np

README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")


def _blocks():
    with open(README) as f:
        return re.findall(r"^```python\n(.*?)^```", f.read(), re.S | re.M)


def test_readme_python_blocks_run_in_order(capsys):
    blocks = _blocks()
    assert len(blocks) >= 4
    scope = {"__name__": "readme"}
    for n, block in enumerate(blocks, 1):
        try:
            exec(compile(block, f"README.md block {n}", "exec"), scope)
        except Exception as exc:    # noqa: BLE001 - name the block that failed
            raise AssertionError(f"README.md python block {n} failed: {exc!r}\n{block}") from exc
    x = scope["x"]
    np.testing.assert_allclose(scope["dx"], 2.0 * np.concatenate([[0], np.diff(x)])
                               - 2.0 * np.concatenate([np.diff(x), [0]]), rtol=1e-12)
    np.testing.assert_allclose(scope["w"], [1.0, -2.0, 0.5], atol=1e-3)
    assert "cached values" in capsys.readouterr().out
