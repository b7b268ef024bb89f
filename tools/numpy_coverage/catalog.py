"""Numba's supported NumPy API ("Supported NumPy features" in Numba's reference docs), the
functions that take or return floats, grouped as those docs group them.

Each entry is either
  D(name, expr, params): a function with a derivative, checked on the kernel
      `def k(<params>): <expr>` (inputs.py names the parameters; every one is Duplicated; the
      last line of `expr` is the returned float, earlier lines are statements), or
  N(name, why): no derivative to check (integer or boolean output, or no float input).
Bit-twiddling ufuncs (integers only), datetime functions and numpy.random (samples, no
derivative with respect to the draw) take no float to differentiate and are left out, and so are
the functions the installed Numba does not compile (np.tile, np.trapz, and the ufuncs
heaviside, modf and frexp, which Numba lists as unsupported in nopython mode).
"""
from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class Entry:
    name: str
    expr: Optional[str]        # None: no derivative
    params: str = ""
    why: str = ""              # for N entries

    @property
    def differentiable(self) -> bool:
        return self.expr is not None


def D(name, expr, params):
    return Entry(name, expr, params)


def N(name, why):
    return Entry(name, None, "", why)


BOOL = "boolean output"
INDEX = "integer output (indices or counts)"
NO_FLOAT_IN = "no float input: the output does not depend on differentiable data"

GROUPS = [
    ("Array attributes", [
        D("ndarray.T", "W(A.T)", "A"),
        D("ndarray.real", "W(x.real)", "x"),
        D("ndarray.flat", "s = 0.0\nfor i, v in enumerate(A.flat):\n    s += v * (i + 1.0)\ns",
          "A"),
    ]),
    ("Calculation (methods and top-level functions)", [
        N("all", BOOL),
        N("any", BOOL),
        N("argmax", INDEX),
        N("argmin", INDEX),
        D("conj", "W(np.conj(x))", "x"),
        D("conjugate", "W(x.conjugate())", "x"),
        D("cumprod", "W(np.cumprod(x))", "x"),
        D("cumsum", "W(np.cumsum(x))", "x"),
        D("max", "np.max(u) * 2.0", "u"),
        D("mean", "np.mean(A) * A[0, 1]", "A"),
        D("min", "np.min(u) * 2.0", "u"),
        N("nonzero", INDEX),
        D("prod", "np.prod(x)", "x"),
        D("std", "np.std(x)", "x"),
        D("take", "W(np.take(x, np.array([3, 0, 2])))", "x"),
        D("var", "np.var(x)", "x"),
    ]),
    ("Other methods", [
        N("argsort", INDEX),
        D("astype", "W(x.astype(np.float64) * x)", "x"),
        D("copy", "c = x.copy()\nc[1] = 2.0 * c[0]\nW(c)", "x"),
        D("dot", "x.dot(y)", "xy"),
        D("flatten", "W(A.T.flatten())", "A"),
        D("item", "(x[2:3] * x[0]).item()", "x"),
        D("ravel", "W(A.T.ravel())", "A"),
        D("repeat", "W(np.repeat(x, 2))", "x"),
        D("reshape", "W(x.reshape((2, 3)).T)", "x"),
        D("sort", "c = x.copy()\nc.sort()\nW(c)", "x"),
        D("sum", "W(A.sum(axis=0)) + A.sum()", "A"),
        D("transpose", "W(A.transpose() @ B)", "AB"),
        D("view", "W(x.view(np.float64))", "x"),
    ]),
    ("Linear algebra", [
        D("dot", "W(np.dot(A, B))", "AB"),
        D("kron", "W(np.kron(A, B))", "AB"),
        D("outer", "W(np.outer(x, y))", "xy"),
        D("trace", "np.trace(A @ B)", "AB"),
        D("vdot", "np.vdot(x, y)", "xy"),
        D("matmul (@)", "W(A @ B)", "AB"),
        D("linalg.cholesky", "W(np.linalg.cholesky(S))", "S"),
        D("linalg.cond", "np.linalg.cond(A)", "A"),
        D("linalg.det", "np.linalg.det(A)", "A"),
        D("linalg.eig", "w, v = np.linalg.eig(H)\nW(w) + W(v * v)", "H"),
        D("linalg.eigh", "w, v = np.linalg.eigh(H)\nW(w) + W(v * np.conj(v))", "H"),
        D("linalg.eigvals", "W(np.linalg.eigvals(H))", "H"),
        D("linalg.eigvalsh", "W(np.linalg.eigvalsh(H))", "H"),
        D("linalg.inv", "W(np.linalg.inv(A))", "A"),
        D("linalg.lstsq", "W(np.linalg.lstsq(R, x[:4])[0])", "Rx"),
        D("linalg.matrix_power", "W(np.linalg.matrix_power(A, 3))", "A"),
        N("linalg.matrix_rank", INDEX),
        D("linalg.norm", "np.linalg.norm(x) + np.linalg.norm(A)", "xA"),
        D("linalg.pinv", "W(np.linalg.pinv(R))", "R"),
        D("linalg.qr", "q, r = np.linalg.qr(R)\nW(q) + W(r)", "R"),
        D("linalg.slogdet", "s, l = np.linalg.slogdet(A)\ns * l", "A"),
        D("linalg.solve", "W(np.linalg.solve(A, z))", "Az"),
        D("linalg.svd", "u, s, vt = np.linalg.svd(R)\nW(s) + W(u[:, 0] * np.conj(u[:, 0]))", "R"),
    ]),
    ("Reductions", [
        D("amax", "np.amax(u) * 2.0", "u"),
        D("amin", "np.amin(u) * 2.0", "u"),
        D("average", "np.average(x, weights=y)", "xy"),
        D("diff", "W(np.diff(x))", "x"),
        D("median", "np.median(x)", "x"),
        D("nancumprod", "W(np.nancumprod(x))", "x"),
        D("nancumsum", "W(np.nancumsum(x))", "x"),
        D("nanmax", "np.nanmax(u) * 2.0", "u"),
        D("nanmean", "np.nanmean(x) * x[0]", "x"),
        D("nanmedian", "np.nanmedian(x)", "x"),
        D("nanmin", "np.nanmin(u) * 2.0", "u"),
        D("nanpercentile", "np.nanpercentile(x, 30.0)", "x"),
        D("nanquantile", "np.nanquantile(x, 0.3)", "x"),
        D("nanprod", "np.nanprod(x)", "x"),
        D("nanstd", "np.nanstd(x)", "x"),
        D("nansum", "np.nansum(x) * x[1]", "x"),
        D("nanvar", "np.nanvar(x)", "x"),
        D("percentile", "np.percentile(x, 30.0)", "x"),
        D("quantile", "np.quantile(x, 0.3)", "x"),
    ]),
    ("Polynomials", [
        D("roots", "W(np.roots(np.array([1.0, -6.0, 11.0, -6.0 + 0.05 * z[0]])).real)", "z"),
        D("polynomial.polynomial.polyval", "np.polynomial.polynomial.polyval(q[0], z)", "qz"),
        D("polynomial.polynomial.polyadd", "W(np.polynomial.polynomial.polyadd(z, x))", "zx"),
        D("polynomial.polynomial.polysub", "W(np.polynomial.polynomial.polysub(z, x))", "zx"),
        D("polynomial.polynomial.polymul", "W(np.polynomial.polynomial.polymul(z, x))", "zx"),
        D("polynomial.polynomial.polyint", "W(np.polynomial.polynomial.polyint(z))", "z"),
        D("polynomial.polynomial.polydiv",
          "qq, rr = np.polynomial.polynomial.polydiv(x, z)\nW(qq) + W(rr)", "xz"),
    ]),
    ("Other functions", [
        N("allclose", BOOL),
        D("append", "W(np.append(x, y))", "xy"),
        D("arange", "W(np.arange(q[0], 3.0, 0.5))", "q"),
        N("argpartition", INDEX),
        N("argwhere", INDEX),
        D("array", "W(np.array([x[0], x[2] * x[1]]))", "x"),
        N("array_equal", BOOL),
        D("array_split", "p = np.array_split(x, 4)\nW(p[1]) + W(p[3])", "x"),
        D("asarray", "W(np.asarray(x))", "x"),
        D("asarray_chkfinite", "W(np.asarray_chkfinite(x))", "x"),
        D("ascontiguousarray", "W(np.ascontiguousarray(A.T))", "A"),
        D("asfortranarray", "W(np.asfortranarray(A) @ B)", "AB"),
        D("atleast_1d", "W(np.atleast_1d(x))", "x"),
        D("atleast_2d", "W(np.atleast_2d(x))", "x"),
        D("atleast_3d", "W(np.atleast_3d(A))", "A"),
        N("bartlett", NO_FLOAT_IN),
        D("bincount", "W(np.bincount(np.array([2, 0, 2, 1, 3, 0]), x))", "x"),
        N("blackman", NO_FLOAT_IN),
        D("broadcast_arrays", "a, c = np.broadcast_arrays(x, A[:1, :1])\nW(a * c)", "xA"),
        D("broadcast_to", "W(np.broadcast_to(z, (2, 3)))", "z"),
        D("clip", "W(np.clip(u, -0.5, 0.5))", "u"),
        D("column_stack", "W(np.column_stack((x, y)))", "xy"),
        D("concatenate", "W(np.concatenate((x, y)))", "xy"),
        D("convolve", "W(np.convolve(x, z))", "xz"),
        D("copy", "c = np.copy(x)\nc[1] = 2.0 * c[0]\nW(c)", "x"),
        D("corrcoef", "W(np.corrcoef(x, y))", "xy"),
        D("correlate", "W(np.correlate(x, z))", "xz"),
        N("count_nonzero", INDEX),
        D("cov", "W(np.cov(x, y))", "xy"),
        D("cross", "W(np.cross(z, A[0]))", "zA"),
        D("delete", "W(np.delete(x, 2))", "x"),
        D("diag", "W(np.diag(A)) + W(np.diag(z))", "Az"),
        D("diagflat", "W(np.diagflat(z))", "z"),
        N("digitize", INDEX),
        D("dsplit", "W(np.dsplit(np.atleast_3d(A).reshape((1, 3, 3)), 3)[1])", "A"),
        D("dstack", "W(np.dstack((x, y)))", "xy"),
        D("ediff1d", "W(np.ediff1d(x))", "x"),
        N("empty_like", "uninitialised output"),
        D("expand_dims", "W(np.expand_dims(x, 0))", "x"),
        D("extract", "W(np.extract(x > 0.5, x))", "x"),
        N("eye", NO_FLOAT_IN),
        D("fill_diagonal", "c = A.copy()\nnp.fill_diagonal(c, z[0])\nW(c)", "Az"),
        N("flatnonzero", INDEX),
        D("flip", "W(np.flip(x))", "x"),
        D("fliplr", "W(np.fliplr(A))", "A"),
        D("flipud", "W(np.flipud(A))", "A"),
        D("full", "W(np.full(4, q[0]))", "q"),
        D("full_like", "W(np.full_like(x, q[0]))", "xq"),
        D("geomspace", "W(np.geomspace(q[1], q[0] + 1.0, 5))", "q"),
        N("hamming", NO_FLOAT_IN),
        N("hanning", NO_FLOAT_IN),
        D("histogram", "W(np.histogram(x, 4)[1])", "x"),
        D("hsplit", "W(np.hsplit(A, 3)[1])", "A"),
        D("hstack", "W(np.hstack((x, y)))", "xy"),
        N("identity", NO_FLOAT_IN),
        N("indices", NO_FLOAT_IN),
        D("interp", "W(np.interp(y, np.sort(b) - 1.0, x))", "ybx"),
        D("intersect1d", "W(np.intersect1d(x, np.array([x[1], x[4], 5.0])))", "x"),
        N("isclose", BOOL),
        N("iscomplex", BOOL),
        N("isneginf", BOOL),
        N("isposinf", BOOL),
        N("isreal", BOOL),
        D("kaiser", "W(np.kaiser(5, q[0] * 4.0))", "q"),
        D("linspace", "W(np.linspace(q[1], q[0] + 1.0, 5))", "q"),
        D("logspace", "W(np.logspace(q[1], q[0] + 1.0, 5))", "q"),
        D("nan_to_num", "W(np.nan_to_num(x))", "x"),
        D("ndenumerate", "s = 0.0\nfor i, v in np.ndenumerate(A):\n    s += v * (i[0] + 2.0 * i[1] + 1.0)\ns",
          "A"),
        D("nditer", "s = 0.0\nk = 1.0\nfor v in np.nditer(A):\n    s += v.item() * k\n    k += 1.0\ns",
          "A"),
        N("ones_like", NO_FLOAT_IN),
        D("partition", "W(np.partition(x, 2)[:3] * np.array([1.0, 1.0, 1.0])) + np.partition(x, 2)[2]",
          "x"),
        D("ptp", "np.ptp(u)", "u"),
        D("ravel", "W(np.ravel(A.T))", "A"),
        D("repeat", "W(np.repeat(x, 3))", "x"),
        D("reshape", "W(np.reshape(x, (3, 2)).T)", "x"),
        D("resize", "W(np.resize(x, 9))", "x"),
        D("roll", "W(np.roll(x, 2))", "x"),
        D("rot90", "W(np.rot90(A))", "A"),
        D("round / around / round_", "W(np.round(u * 10.0)) + W(np.around(u) + u)", "u"),
        N("searchsorted", INDEX),
        D("select", "W(np.select([x > 0.5, x <= 0.5], [x * 2.0, y]))", "xy"),
        D("sinc", "W(np.sinc(u))", "u"),
        D("sort", "W(np.sort(x))", "x"),
        D("split", "W(np.split(x, 3)[1])", "x"),
        D("stack", "W(np.stack((x, y)))", "xy"),
        D("swapaxes", "W(np.swapaxes(A, 0, 1))", "A"),
        D("take", "W(np.take(A, np.array([5, 1, 7])))", "A"),
        D("take_along_axis", "W(np.take_along_axis(A, np.array([[2], [0], [1]]), 1))", "A"),
        D("trapezoid", "np.trapezoid(x, y)", "xy"),
        N("tri", NO_FLOAT_IN),
        D("tril", "W(np.tril(A))", "A"),
        N("tril_indices", NO_FLOAT_IN),
        D("triu", "W(np.triu(A, 1))", "A"),
        N("triu_indices", NO_FLOAT_IN),
        D("trim_zeros", "W(np.trim_zeros(x))", "x"),
        D("union1d", "W(np.union1d(x, y))", "xy"),
        D("unique", "W(np.unique(np.concatenate((x, x[:2]))))", "x"),
        D("unwrap", "W(np.unwrap(u * 4.0))", "u"),
        D("vander", "W(np.vander(z))", "z"),
        D("vsplit", "W(np.vsplit(A, 3)[2])", "A"),
        D("vstack", "W(np.vstack((x, y)))", "xy"),
        D("where", "W(np.where(x > 0.5, x, y * y))", "xy"),
        N("zeros_like", NO_FLOAT_IN),
        D("setdiff1d", "W(np.setdiff1d(x, np.array([x[2], 5.0])))", "x"),
        D("setxor1d", "W(np.setxor1d(x, np.array([x[2], 5.0])))", "x"),
        N("in1d / isin", BOOL),
    ]),
]


def _ufuncs(names, params):
    args = ", ".join(params)
    return [D(n, f"W(np.{n}({args}))", params) for n in names]


UFUNC_GROUPS = [
    ("Ufuncs: math operations",
     _ufuncs(["add", "subtract", "multiply", "divide", "logaddexp", "logaddexp2", "true_divide",
              "floor_divide", "power", "float_power", "remainder", "mod", "fmod"], "xy")
     + _ufuncs(["negative", "positive", "abs", "absolute", "fabs", "rint", "sign", "conj",
                "conjugate", "exp", "exp2", "log", "log2", "log10", "expm1", "log1p", "sqrt",
                "square", "cbrt", "reciprocal"], "x")
     + [D("divmod", "d, m = np.divmod(b, x)\nW(d) + W(m)", "bx")]),
    ("Ufuncs: trigonometric functions",
     _ufuncs(["sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
              "arcsinh", "arctanh", "deg2rad", "rad2deg", "degrees", "radians"], "u")
     + _ufuncs(["arctan2", "hypot"], "uy") + _ufuncs(["arccosh"], "b")),
    ("Ufuncs: comparison functions",
     [N(n, BOOL) for n in ["greater", "greater_equal", "less", "less_equal", "not_equal", "equal",
                           "logical_and", "logical_or", "logical_xor", "logical_not"]]
     + _ufuncs(["maximum", "minimum", "fmax", "fmin"], "uy")),
    ("Ufuncs: floating functions",
     [N(n, BOOL) for n in ["isfinite", "isinf", "isnan", "signbit"]]
     + _ufuncs(["copysign", "nextafter"], "xu")
     + [D("ldexp", "W(np.ldexp(x, 3))", "x")]
     + _ufuncs(["floor", "ceil", "trunc", "spacing"], "b")),
]

ALL_GROUPS = GROUPS + UFUNC_GROUPS
