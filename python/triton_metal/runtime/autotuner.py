"""@autotune and @heuristics, as Triton's. Autotune times each config with
the timing model on the current chip (simulated time: deterministic, so
each config runs once) and keeps the fastest per key, in memory and on
disk (TRITON_METAL_CACHE_DIR, else ~/.cache/triton_metal)."""
import builtins
import hashlib
import inspect
import json
import os
import tempfile
import threading
import time

from . import device as _device
from . import launch_context
from .errors import OutOfResources, TritonError
from .jit import JITFunction, KernelInterface, debug_enabled, _debug


class Config:
    """A set of meta-parameters (kwargs) and launch options for autotune, as
    Triton's (num_stages, num_ctas, maxnreg mean nothing on Apple GPUs and
    are passed on, to be ignored)."""

    def __init__(self, kwargs, num_warps=4, num_stages=3, num_ctas=1,
                 maxnreg=None, pre_hook=None, ir_override=None, **options):
        self.kwargs = dict(kwargs)
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.num_ctas = num_ctas
        self.maxnreg = maxnreg
        self.pre_hook = pre_hook
        self.ir_override = ir_override
        self.options = options

    def all_kwargs(self):
        """The kwargs and the launch options that are set (Triton's)."""
        out = dict(self.kwargs)
        for k, v in (("num_warps", self.num_warps), ("num_ctas", self.num_ctas),
                     ("num_stages", self.num_stages), ("maxnreg", self.maxnreg),
                     ("ir_override", self.ir_override)):
            if v is not None:
                out[k] = v
        return out

    def __str__(self):
        parts = [f"{k}: {v}" for k, v in self.kwargs.items()]
        parts.append(f"num_warps: {self.num_warps}")
        parts.append(f"num_ctas: {self.num_ctas}")
        parts.append(f"num_stages: {self.num_stages}")
        parts.append(f"maxnreg: {self.maxnreg}")
        return ", ".join(parts)

    __repr__ = __str__

    def _identity(self):
        return (*self.all_kwargs().items(), self.pre_hook)

    def __hash__(self):
        return hash(self._identity())

    def __eq__(self, other):
        return isinstance(other, Config) and self._identity() == other._identity()


def cache_dir():
    d = os.environ.get("TRITON_METAL_CACHE_DIR")
    if d:
        return d
    return os.path.join(os.path.expanduser("~"), ".cache", "triton_metal")


class Autotuner(KernelInterface):
    """Triton's Autotuner, with its state (`configs`, `keys`, `cache`,
    `pre_hook`, `user_defined_pre_hook`, `perf_model`, `configs_top_k`...)
    for libraries that subclass it; configs are timed in simulated time."""

    def __init__(self, fn, arg_names, configs, key, reset_to_zero=None,
                 restore_value=None, pre_hook=None, post_hook=None,
                 prune_configs_by=None, warmup=None, rep=None,
                 use_cuda_graph=False, do_bench=None, cache_results=True):
        self.fn = fn
        self.base_fn = fn
        while not inspect.isfunction(self.base_fn) and hasattr(self.base_fn, "fn"):
            self.base_fn = self.base_fn.fn
        self.arg_names = arg_names
        self.configs = list(configs) if configs else [Config({})]
        self.keys = list(key)
        self.reset_to_zero = list(reset_to_zero or [])
        self.restore_value = list(restore_value or [])
        # Triton's hooks: the user's, else ones that zero reset_to_zero's
        # arguments and save (and then restore) restore_value's.
        self._saved = threading.local()
        self.user_defined_pre_hook = pre_hook is not None
        self.user_defined_post_hook = post_hook is not None
        self.pre_hook = pre_hook if pre_hook else self._default_pre_hook
        self.post_hook = post_hook if post_hook else self._default_post_hook
        prune = prune_configs_by or {}
        self.perf_model = prune.get("perf_model")
        self.configs_top_k = prune.get("top_k", 1.0)
        self.early_config_prune = prune.get("early_config_prune")
        self.cache = {}  # key: the config chosen last (Triton's attribute)
        self._chosen = launch_context.OncePerKey()  # (chip, key): config
        self.best_config = None
        self.configs_timings = None  # Triton's: {config: _bench's times} of the last tuning
        self.bench_time = 0.0
        self.nargs = None
        self.cache_results = cache_results
        self.num_warmups = warmup
        self.num_reps = rep
        self.use_cuda_graph = use_cuda_graph
        self._do_bench = do_bench
        self.__name__ = getattr(fn, "__name__", "kernel")

    @property
    def top_k(self):
        return self.configs_top_k

    @property
    def do_bench(self):
        """The benchmark function (the user's, else testing.do_bench: the
        simulated milliseconds of the launches)."""
        if self._do_bench is not None:
            return self._do_bench
        from .. import testing
        return testing.do_bench

    # Arguments that a benchmark launch changes get their contents back
    # afterwards, so that the real launch sees what the caller passed:
    # restore_value's, and reset_to_zero's too.
    def _save(self, named):
        saved = {}
        for name in set(self.restore_value) | set(self.reset_to_zero):
            v = named.get(name)
            if v is not None and (hasattr(v, "clone") or hasattr(v, "copy")):
                saved[name] = v.clone() if hasattr(v, "clone") else v.copy()
        self._saved.copies = saved

    def _restore(self, named):
        for name, copy in getattr(self._saved, "copies", {}).items():
            named[name][...] = copy
        self._saved.copies = {}

    def _zero(self, named):
        for name in self.reset_to_zero:
            v = named.get(name)
            if v is not None:
                v[...] = 0

    def _default_pre_hook(self, kwargs, reset_only=False):
        self._zero(kwargs)
        if not reset_only:
            self._save(kwargs)

    def _default_post_hook(self, kwargs, exception):
        self._restore(kwargs)

    # --- the disk cache ----------------------------------------------------------

    def _disk_key(self, key):
        inner = self.fn
        while isinstance(inner, KernelInterface) and not isinstance(inner, JITFunction):
            inner = inner.fn
        base = inner.fn if isinstance(inner, JITFunction) else inner
        try:
            src = inspect.getsource(base)
        except (OSError, TypeError):
            src = self.__name__
        h = hashlib.sha256()
        h.update(src.encode())
        h.update(repr([str(c) for c in self.configs]).encode())
        h.update(repr((_device.get_chip(), key)).encode())
        return h.hexdigest()

    def _disk_file(self, digest):
        return os.path.join(cache_dir(), "autotune", digest + ".json")

    def _load_choice(self, key):
        if not self.cache_results:
            return None
        try:
            with open(self._disk_file(self._disk_key(key))) as f:
                index = json.load(f)["config"]
        except (OSError, ValueError, KeyError):
            return None
        if isinstance(index, int) and 0 <= index < len(self.configs):
            return self.configs[index]
        return None

    def _save_choice(self, key, config, timings):
        if not self.cache_results:
            return
        path = self._disk_file(self._disk_key(key))
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            # A file of its own for each writer (thread or process); the
            # rename puts a whole one in place.
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path),
                                       prefix=os.path.basename(path) + ".", suffix=".tmp")
            try:
                with os.fdopen(fd, "w") as f:
                    json.dump({"config": self.configs.index(config),
                               "microseconds": timings}, f)
                os.replace(tmp, path)
            except BaseException:
                os.unlink(tmp)
                raise
        except OSError:
            pass  # a cache that cannot be written is only slower

    # --- choosing -------------------------------------------------------------------

    def _named(self, args, kwargs):
        named = dict(zip(self.arg_names, args))
        named.update(kwargs)
        return named

    def prune_configs(self, kwargs, nargs=None):
        """The configs to time: early_config_prune(configs, nargs, **kwargs),
        then perf_model's configs_top_k best (as Triton's)."""
        nargs = self.nargs if nargs is None else nargs
        nargs = nargs or {}
        configs = self.configs
        if self.early_config_prune:
            configs = self.early_config_prune(self.configs, nargs, **kwargs)
            if not configs:
                raise TritonError("No valid autotuner configs after pruning. "
                                  "`early_config_prune` should return at least one config.")
        if self.perf_model:
            k = self.configs_top_k
            if isinstance(k, float) and k <= 1.0:
                k = max(1, int(len(self.configs) * k))
            elif not isinstance(k, int):
                raise TypeError("Error while pruning configs, top_k must be either "
                                "1) a float <= 1.0 or 2) an int")
            if len(configs) > k:
                configs = sorted(configs, key=lambda c: self.perf_model(
                    **nargs, **kwargs, **c.all_kwargs()))[:k]
        return configs

    def _bench(self, *args, config, **meta):
        """Times one launch with `config`, as Triton's Autotuner._bench
        (which libraries' subclasses call so: the launch's arguments, the
        config, its keywords with grid): [median, 20th, 80th percentile]
        in milliseconds, the simulated time of the launch (a user's
        do_bench times it its way), or infinities for a config that does
        not fit the chip. The reset_to_zero arguments are zeroed for it;
        those and the restore_value ones get their contents back
        afterwards, so the real launch sees what the caller passed."""
        grid = meta.pop("grid")
        meta.pop("warmup", None)
        conflicts = meta.keys() & config.kwargs.keys()
        if conflicts:
            raise ValueError(f"Conflicting meta-parameters: {', '.join(conflicts)}."
                             " Make sure that you don't re-define auto-tuned symbols.")
        current = dict(meta)
        current.update(config.all_kwargs())
        full = {**self._named(args, meta), **config.all_kwargs()}

        def kernel_call():
            if self.user_defined_pre_hook:
                self._zero(full)
                self._save(full)
            if config.pre_hook:
                config.pre_hook(full)
            self.pre_hook(full)
            try:
                self.fn.run(*args, grid=grid, warmup=False, **current)
            except Exception as e:
                try:
                    self.post_hook(full, exception=e)
                finally:
                    if self.user_defined_post_hook:
                        self._restore(full)
                raise
            self.post_hook(full, exception=None)
            if self.user_defined_post_hook:
                self._restore(full)

        try:
            if self._do_bench is not None:
                t = self._do_bench(kernel_call, quantiles=(0.5, 0.2, 0.8))
                return [float(x) for x in t] if isinstance(t, (list, tuple)) else [float(t)] * 3
            with launch_context.collecting_times() as times:
                kernel_call()
        except OutOfResources:
            return [float("inf")] * 3  # as Triton does
        return [sum(times) / 1e3] * 3

    def run(self, *args, grid, warmup, **kwargs):
        named = self._named(args, kwargs)
        self.nargs = dict(zip(self.arg_names, args))
        key = tuple(_key_part(named[k]) for k in self.keys if k in named)
        # Per chip (threads may run on different ones: device.chip()); of
        # the threads asking for one key at once, one tunes.
        config = self._chosen.get((_device.get_chip(), key),
                                  lambda: self._choose(key, args, kwargs, grid, named))
        self.cache[key] = config
        self.best_config = config
        current = dict(kwargs)
        current.update(config.all_kwargs())
        if config.pre_hook and not warmup:
            config.pre_hook({**named, **config.all_kwargs()})
        return self.fn.run(*args, grid=grid, warmup=warmup, **current)

    def _choose(self, key, args, kwargs, grid, named):
        """The config for `key`: from the disk cache, else the fastest one
        (saved there)."""
        config = self._load_choice(key)
        if config is not None:
            return config
        configs = self.prune_configs(kwargs, dict(zip(self.arg_names, args)))
        if len(configs) == 1:
            config, timings = configs[0], {}
        else:
            start = time.time()
            self.configs_timings = {c: self._bench(*args, config=c, grid=grid, **kwargs)
                                    for c in configs}
            self.bench_time = time.time() - start
            # Simulated microseconds (each median), by the config's text.
            timings = {str(c): t[0] * 1e3 for c, t in self.configs_timings.items()}
            config = builtins.min(configs, key=lambda c: timings[str(c)])
            if timings[str(config)] == float("inf"):
                raise OutOfResources(
                    f"{self.__name__}: no autotune config fits the chip")
            if debug_enabled():
                _debug(f"triton_metal: autotune {self.__name__} {key}: "
                       f"simulated us {json.dumps(timings)} -> {config}")
        self._save_choice(key, config, timings)
        return config

    def warmup(self, *args, **kwargs):
        return self.run(*args, warmup=True, **kwargs)


def _key_part(v):
    if hasattr(v, "dtype") and hasattr(v, "shape"):
        return str(v.dtype)
    return v


def autotune(configs, key, prune_configs_by=None, reset_to_zero=None,
             restore_value=None, pre_hook=None, post_hook=None, warmup=None,
             rep=None, use_cuda_graph=False, do_bench=None,
             cache_results=True):
    """@triton_metal.autotune(configs=[Config(...)], key=["n"])."""
    def decorator(fn):
        return Autotuner(fn, fn.arg_names, configs, key, reset_to_zero,
                         restore_value, pre_hook, post_hook, prune_configs_by,
                         warmup, rep, use_cuda_graph, do_bench, cache_results)
    return decorator


class Heuristics(KernelInterface):
    def __init__(self, fn, arg_names, values):
        self.fn = fn
        self.arg_names = arg_names
        self.values = values
        self.__name__ = getattr(fn, "__name__", "kernel")

    def run(self, *args, grid=None, warmup=False, **kwargs):
        named = dict(zip(self.arg_names, args))
        named.update(kwargs)
        for name, rule in self.values.items():
            kwargs[name] = rule(named)
            named[name] = kwargs[name]
        return self.fn.run(*args, grid=grid, warmup=warmup, **kwargs)

    def warmup(self, *args, **kwargs):
        return self.run(*args, warmup=True, **kwargs)


def heuristics(values):
    """@triton_metal.heuristics({"BLOCK": lambda args: ...})."""
    def decorator(fn):
        return Heuristics(fn, fn.arg_names, values)
    return decorator
