"""check_gradient's report of a failed complex argument listed the worst elements by their real
parts alone (the arrays cast to float64): a wrong imaginary part showed an error of 0."""
import numpy as np

from enzyme_py.check import ArgReport, GradientReport


def test_worst_elements_keep_the_imaginary_part():
    ad = np.array([1.0 + 2.0j, 3.0 + 0.0j])
    fd = np.array([1.0 + 5.0j, 3.0 + 0.0j])
    arg = ArgReport(0, "Duplicated", ad, fd, 3.0, 0.6, 1e-6, 1e-6, False, "z")
    (idx, a, f, err), _ = arg.worst(2)
    assert idx == (0,) and a == 1 + 2j and f == 1 + 5j and err == 3.0
    report = GradientReport("k", 1.0, [arg])
    assert "+2.0000000000e+00j" in str(report)
