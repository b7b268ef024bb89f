"""The prepare pipelines are declared once (transforms/prepare/pipeline.py): every step is a pass
of `opt` with golden tests of its own, and the drivers run exactly these steps."""
import os

from ir_passes.passes import PASSES
from ir_passes.transforms.prepare.pipeline import PIPELINES

HERE = os.path.dirname(os.path.abspath(__file__))


def test_every_step_is_a_pass_with_golden_tests():
    for steps in PIPELINES.values():
        for step in steps:
            assert step.name in PASSES, step.name
            assert any(n.endswith(".ll") for n in os.listdir(os.path.join(HERE, "filecheck", step.name)))

