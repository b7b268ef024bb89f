"""enzyme_py.torch: kernels as torch operators. gradcheck and gradgradcheck on float64 against
torch's finite differences, torch.compile, and the backward not re-running the kernel."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from enzyme_py.torch import Out, kernel_op  # noqa: E402
from tests import torch_kernels as K  # noqa: E402

gradcheck = torch.autograd.gradcheck
gradgradcheck = torch.autograd.gradgradcheck


def rand(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(*shape, generator=g, dtype=torch.float64).requires_grad_()


ELEMENTWISE = kernel_op(K.elementwise, ["in", "in", Out(like=0)])
RNN = kernel_op(K.rnn, ["in", "in", "in", "inout",
                        Out(shape=lambda W, U, xs, h: (xs.shape[0], h.shape[0]))])
HEAT = kernel_op(K.heat, ["in", Out(like=0), "in", int])
HEAT_INPLACE = kernel_op(K.heat_inplace, ["inout", "in", int])
NBODY = kernel_op(K.nbody, ["in", "in", "in", Out(like=0), Out(like=0)])


def cases():
    return {
        "elementwise": (ELEMENTWISE, (rand(6), rand(6, seed=1))),
        "rnn": (RNN, (rand(3, 3) - 0.5, rand(3, 2) - 0.5, rand(4, 2), rand(3, seed=2))),
        "heat": (HEAT, (rand(8), torch.tensor(0.2, dtype=torch.float64, requires_grad=True), 5)),
        "heat_inplace": (HEAT_INPLACE, (rand(8), torch.tensor(0.2, dtype=torch.float64,
                                                              requires_grad=True), 5)),
        "nbody": (NBODY, (rand(5), rand(5, seed=1), rand(5, seed=2) + 0.5)),
    }


@pytest.mark.parametrize("name", list(cases()))
def test_gradcheck(name):
    op, args = cases()[name]
    assert gradcheck(op, args)


@pytest.mark.parametrize("name", list(cases()))
def test_gradgradcheck(name):
    """The double backward is forward mode over the guarded reverse-mode gradient (rnn's and
    nbody's reverse sweeps have irreducible control flow after cleanup)."""
    op, args = cases()[name]
    assert gradgradcheck(op, args)


def test_values_match_a_plain_call():
    x, y = rand(6), rand(6, seed=1)
    out = np.zeros(6)
    K.elementwise(x.detach().numpy(), y.detach().numpy(), out)
    np.testing.assert_array_equal(ELEMENTWISE(x, y).detach().numpy(), out)
    u0 = rand(8)
    u = u0.detach().numpy().copy()
    K.heat_inplace(u, 0.2, 5)
    got = HEAT_INPLACE(u0, torch.tensor(0.2, dtype=torch.float64), 5)
    np.testing.assert_array_equal(got.detach().numpy(), u)
    assert not np.array_equal(u0.detach().numpy(), u)      # the caller's tensor is not written


def test_backward_does_not_rerun_the_kernel():
    calls = torch.zeros(1, dtype=torch.int64)
    op = kernel_op(K.counted, ["in", "const"], returns=True)
    x = rand(4)
    value = op(x, calls)
    assert calls.item() == 1
    (g,) = torch.autograd.grad(value, x, retain_graph=True)
    (g2,) = torch.autograd.grad(2.0 * value, x)
    assert calls.item() == 1
    np.testing.assert_allclose(g.numpy(), 3.0 * x.detach().numpy() ** 2, rtol=1e-14)
    np.testing.assert_allclose(g2.numpy(), 6.0 * x.detach().numpy() ** 2, rtol=1e-14)
    with torch.no_grad():
        op(x, calls)
    assert calls.item() == 2


class Diffusion(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.alpha = torch.nn.Parameter(torch.tensor(0.1, dtype=torch.float64))
        self.scale = torch.nn.Parameter(torch.ones(8, dtype=torch.float64))

    def forward(self, u0):
        return (HEAT_INPLACE(self.scale * u0, self.alpha, 4) ** 2).sum()


def test_compile_keeps_the_op_and_its_gradient():
    model = Diffusion()
    u0 = rand(8).detach()
    eager = model(u0)
    ge = torch.autograd.grad(eager, list(model.parameters()))
    torch._dynamo.reset()
    compiled = torch.compile(model, fullgraph=True, backend="aot_eager")
    value = compiled(u0)
    gc = torch.autograd.grad(value, list(model.parameters()))
    torch.testing.assert_close(value, eager, rtol=1e-14, atol=0)
    for a, b in zip(gc, ge):
        torch.testing.assert_close(a, b, rtol=1e-14, atol=0)


def test_bad_descriptions_and_tensors():
    with pytest.raises(ValueError, match="not a role"):
        kernel_op(K.elementwise, ["in", "in", "out"])
    with pytest.raises(TypeError, match="takes 2 arguments"):
        ELEMENTWISE(rand(3))
    with pytest.raises(ValueError, match="an output"):
        kernel_op(K.counted, ["in", "const"])
    op = kernel_op(K.copy_and_sum, ["in", Out(like=0)])
    with pytest.raises(TypeError, match="returns=True"):
        op(rand(3))


def test_rerun_backward_gives_the_tape_gradient_and_runs_the_kernel_again():
    calls = torch.zeros(1, dtype=torch.int64)
    op = kernel_op(K.counted, ["in", "const"], returns=True, backward="rerun")
    x = rand(4)
    (g,) = torch.autograd.grad(op(x, calls), x)
    assert calls.item() == 2
    np.testing.assert_allclose(g.numpy(), 3.0 * x.detach().numpy() ** 2, rtol=1e-14)
    nbody = kernel_op(K.nbody, ["in", "in", "in", Out(like=0), Out(like=0)], backward="rerun")
    args = cases()["nbody"][1]
    assert gradcheck(nbody, args)
    w = (rand(5, seed=5).detach(), rand(5, seed=6).detach())
    np.testing.assert_allclose(torch.autograd.grad(nbody(*args), args, w)[2].numpy(),
                               torch.autograd.grad(NBODY(*args), args, w)[2].numpy(), rtol=1e-13)


def test_example_layer_fits_its_parameters(capsys):
    import importlib.util
    import os
    path = os.path.join(os.path.dirname(os.path.dirname(__file__)), "examples", "torch_layer.py")
    spec = importlib.util.spec_from_file_location("example_torch_layer", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main(iters=200) < 1e-6
    assert "alpha 0.3000" in capsys.readouterr().out.splitlines()[-1]


def test_import_enzyme_py_does_not_import_torch():
    import subprocess
    import sys
    code = "import sys, enzyme_py; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("name", ["elementwise", "heat_inplace", "nbody"])
def test_forward_mode_gradcheck(name):
    """torch's forward AD (the op's jvp rule: enzyme_py's forward mode) against finite
    differences."""
    op, args = cases()[name]
    assert gradcheck(op, args, check_forward_ad=True, check_backward_ad=False)


def test_torch_func_transforms():
    op, args = cases()["rnn"]
    W, U, xs, h = (a.detach() for a in args)
    f = lambda W: RNN(W, U, xs, h)[1]      # noqa: E731 - every step's state
    jf = torch.func.jacfwd(f)(W)
    jr = torch.func.jacrev(f)(W)
    torch.testing.assert_close(jf, jr, rtol=1e-12, atol=1e-14)
    x, y = rand(3, 6).detach(), rand(6, seed=1).detach()
    g = lambda x: ELEMENTWISE(x, y).sum()      # noqa: E731
    rows = torch.stack([torch.func.grad(g)(r) for r in x])
    torch.testing.assert_close(torch.func.vmap(torch.func.grad(g))(x), rows, rtol=0, atol=0)
    analytic = torch.cos(x) * y - 2.0 * x * torch.exp(-x * x)
    torch.testing.assert_close(rows, analytic, rtol=1e-14, atol=1e-15)
    torch.testing.assert_close(torch.func.vmap(lambda x: ELEMENTWISE(x, y))(x),
                               torch.stack([ELEMENTWISE(r, y) for r in x]), rtol=0, atol=0)


def test_float32_strided_input():
    x = torch.rand(12, dtype=torch.float32, requires_grad=True)
    y = torch.rand(6, dtype=torch.float32)
    out = ELEMENTWISE(x[::2], y)
    out.sum().backward()
    xs = x.detach()[::2]
    assert out.dtype == torch.float32
    torch.testing.assert_close(x.grad[::2], torch.cos(xs) * y - 2.0 * xs * torch.exp(-xs * xs))
    assert not x.grad[1::2].any()
    alpha = torch.tensor(0.2, dtype=torch.float32, requires_grad=True)
    HEAT(torch.rand(8, dtype=torch.float64), alpha, 3).sum().backward()
    assert alpha.grad.dtype == torch.float32


def test_state_copied_from_an_input():
    op = kernel_op(K.rnn_copy, ["in", "in", "in", "in",
                                Out(shape=lambda W, U, xs, h: (xs.shape[0], h.shape[0]))])
    args = (rand(3, 3) - 0.5, rand(3, 2) - 0.5, rand(4, 2), rand(3, seed=2))
    assert gradcheck(op, args) and gradgradcheck(op, args)


@pytest.mark.parametrize("name", ["elementwise", "heat_inplace", "nbody"])
def test_jacobians_are_one_batched_call(name):
    """jacrev's k seeds: one batched reverse-mode call; jacfwd's k directions: one forward-mode
    call; against the loop (op.lanes = False) and central differences."""
    op, args = cases()[name]
    args = [a.detach() if isinstance(a, torch.Tensor) else a for a in args]
    diff = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor)]

    def f(*xs):
        a = list(args)
        for i, x in zip(diff, xs):
            a[i] = x
        out = op(*a)
        return torch.cat([o.reshape(-1) for o in (out if isinstance(out, tuple) else (out,))])
    xs = [args[i] for i in diff]
    argnums = tuple(range(len(xs)))
    op.calls.clear()
    jr = torch.func.jacrev(f, argnums=argnums)(*xs)
    jf = torch.func.jacfwd(f, argnums=argnums)(*xs)
    assert dict(op.calls) == {"vjp_lanes": 1, "jvp_lanes": 1}
    for r, again in zip(jr, torch.func.jacrev(f, argnums=argnums)(*xs)):   # the built entry
        torch.testing.assert_close(again, r, rtol=0, atol=0)
    op.lanes = False
    try:
        loop = torch.func.jacrev(f, argnums=argnums)(*xs)
    finally:
        op.lanes = True
    assert op.calls["vjp_lanes"] == 2
    h = 1e-6
    for j, (r, fw, lp) in enumerate(zip(jr, jf, loop)):
        torch.testing.assert_close(r, lp, rtol=1e-12, atol=1e-14)
        torch.testing.assert_close(fw, r, rtol=1e-10, atol=1e-12)
        cols = []
        for e in torch.eye(xs[j].numel(), dtype=torch.float64):
            e = e.reshape(xs[j].shape) * h
            plus, minus = list(xs), list(xs)
            plus[j], minus[j] = xs[j] + e, xs[j] - e
            cols.append((f(*plus) - f(*minus)) / (2 * h))
        fd = torch.stack(cols, -1).reshape(r.shape)
        torch.testing.assert_close(r, fd, rtol=1e-6, atol=1e-8)
