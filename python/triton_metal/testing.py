"""triton_metal.testing: do_bench (simulated time from the timing model),
assert_close, Benchmark and perf_report, as in Triton's tutorials."""
import math
import os
import sys

from .runtime import launch_context


_said_host_time = False


def do_bench(fn, warmup=25, rep=100, grad_to_none=None, quantiles=None,
             return_mode="mean"):
    """Simulated milliseconds that the kernels `fn` launches take on the
    current chip (the timing model's figure, not host time). The model is
    deterministic, so `fn` runs once, and every quantile is that one figure.
    A function that launches no triton_metal kernel (a torch baseline) is
    timed on the host instead, as Triton's do_bench would: for about `rep`
    ms after `warmup` ms, its median or mean and the quantiles."""
    global _said_host_time
    if launch_context.timed_runs() is not None:
        raise RuntimeError("do_bench cannot be nested")
    with launch_context.collecting_times() as times:
        fn()
    launched = bool(times)
    ms = sum(times) / 1000.0
    if not launched:
        if not _said_host_time:
            _said_host_time = True
            print("triton_metal.testing.do_bench: a function that launches no "
                  "kernel is timed on the host (wall clock), not simulated",
                  file=sys.stderr)
        return _host_bench(fn, warmup, rep, quantiles, return_mode)
    if quantiles is not None:
        return [ms for _ in quantiles]
    return ms


def _host_bench(fn, warmup, rep, quantiles, return_mode):
    import statistics
    import time
    start = time.perf_counter()
    while time.perf_counter() - start < warmup / 1000.0:
        fn()
    times = []
    start = time.perf_counter()
    while not times or (time.perf_counter() - start < rep / 1000.0 and len(times) < 1000):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000.0)
    if quantiles is not None:
        ordered = sorted(times)
        return [ordered[min(len(ordered) - 1, int(q * len(ordered)))] for q in quantiles]
    if return_mode == "median":
        return statistics.median(times)
    if return_mode == "min":
        return min(times)
    if return_mode == "max":
        return max(times)
    return statistics.fmean(times)


def _to_numpy(x):
    import numpy as np
    if hasattr(x, "detach"):
        x = x.detach()
        if str(x.dtype) == "torch.bfloat16":
            x = x.float()
        x = x.cpu().numpy()
    return np.asarray(x)


def assert_close(x, y, atol=None, rtol=None, err_msg=""):
    """Raises AssertionError where |x - y| > atol + rtol * |y|."""
    import numpy as np
    a, b = _to_numpy(x).astype(np.float64), _to_numpy(y).astype(np.float64)
    atol = 1e-2 if atol is None else (atol(a.dtype) if callable(atol) else atol)
    rtol = 0.0 if rtol is None else (rtol(a.dtype) if callable(rtol) else rtol)
    np.testing.assert_allclose(a, b, atol=atol, rtol=rtol, err_msg=err_msg,
                               equal_nan=True)


class Benchmark:
    """One table of a perf_report, as in Triton's tutorials."""

    def __init__(self, x_names, x_vals, line_arg, line_vals, line_names,
                 plot_name, args, xlabel="", ylabel="", x_log=False,
                 y_log=False, styles=None):
        self.x_names = x_names
        self.x_vals = x_vals
        self.line_arg = line_arg
        self.line_vals = line_vals
        self.line_names = line_names
        self.plot_name = plot_name
        self.args = args
        self.xlabel = xlabel
        self.ylabel = ylabel
        self.x_log = x_log
        self.y_log = y_log
        self.styles = styles


class Mark:
    def __init__(self, fn, benchmarks):
        self.fn = fn
        self.benchmarks = benchmarks

    def _table(self, bench):
        rows = []
        for x in bench.x_vals:
            xs = x if isinstance(x, (list, tuple)) else [x] * len(bench.x_names)
            kwargs = dict(zip(bench.x_names, xs))
            row = list(xs)
            for line in bench.line_vals:
                r = self.fn(**kwargs, **{bench.line_arg: line}, **bench.args)
                row.append(r[0] if isinstance(r, (tuple, list)) else r)
            rows.append(row)
        return rows

    def run(self, show_plots=False, print_data=False, save_path="", **kwargs):
        results = []
        for bench in (self.benchmarks if isinstance(self.benchmarks, list) else [self.benchmarks]):
            rows = self._table(bench)
            header = list(bench.x_names) + list(bench.line_names)
            if print_data:
                print(bench.plot_name + ":")
                widths = [max(len(str(h)), 12) for h in header]
                print("  ".join(str(h).rjust(w) for h, w in zip(header, widths)))
                for row in rows:
                    print("  ".join(_cell(v).rjust(w) for v, w in zip(row, widths)))
            if save_path:
                os.makedirs(save_path, exist_ok=True)
                with open(os.path.join(save_path, bench.plot_name + ".csv"), "w") as f:
                    f.write(",".join(map(str, header)) + "\n")
                    for row in rows:
                        f.write(",".join(map(str, row)) + "\n")
            if show_plots or save_path:
                _plot(bench, rows, show_plots, save_path)
            results.append((header, rows))
        return results


def _cell(v):
    if isinstance(v, float):
        return f"{v:.6g}" if not math.isnan(v) else "nan"
    return str(v)


def _plot(bench, rows, show, save_path):
    try:
        import matplotlib
        if not show:
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return  # tables only: matplotlib (python3-matplotlib) is not here
    fig, ax = plt.subplots()
    n = len(bench.x_names)
    xs = [r[0] for r in rows]
    for i, name in enumerate(bench.line_names):
        ax.plot(xs, [r[n + i] for r in rows], label=name)
    ax.set_xlabel(bench.xlabel or bench.x_names[0])
    ax.set_ylabel(bench.ylabel)
    if bench.x_log:
        ax.set_xscale("log")
    if bench.y_log:
        ax.set_yscale("log")
    ax.legend()
    if save_path:
        fig.savefig(os.path.join(save_path, bench.plot_name + ".png"))
    if show:
        plt.show()
    plt.close(fig)


def perf_report(benchmarks):
    """@perf_report(Benchmark(...)): the function gets .run()."""
    def decorator(fn):
        return Mark(fn, benchmarks)
    return decorator
