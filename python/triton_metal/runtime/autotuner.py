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

from . import device as _device
from . import launch_context
from .errors import OutOfResources
from .jit import JITFunction, KernelInterface, debug_enabled, _debug


class Config:
    """A set of meta-parameters (kwargs) and launch options for autotune."""

    def __init__(self, kwargs, num_warps=4, num_stages=3, num_ctas=1,
                 maxnreg=None, pre_hook=None, **options):
        self.kwargs = dict(kwargs)
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.num_ctas = num_ctas
        self.maxnreg = maxnreg
        self.pre_hook = pre_hook
        self.options = options

    def all_kwargs(self):
        out = dict(self.kwargs)
        if self.num_warps is not None:
            out["num_warps"] = self.num_warps
        return out

    def __str__(self):
        parts = [f"{k}: {v}" for k, v in self.kwargs.items()]
        parts.append(f"num_warps: {self.num_warps}")
        parts.append(f"num_stages: {self.num_stages}")
        return ", ".join(parts)

    __repr__ = __str__


def cache_dir():
    d = os.environ.get("TRITON_METAL_CACHE_DIR")
    if d:
        return d
    return os.path.join(os.path.expanduser("~"), ".cache", "triton_metal")


class Autotuner(KernelInterface):
    def __init__(self, fn, arg_names, configs, key, reset_to_zero=None,
                 restore_value=None, pre_hook=None, post_hook=None,
                 prune_configs_by=None, warmup=None, rep=None,
                 use_cuda_graph=False, do_bench=None, cache_results=True):
        self.fn = fn
        self.arg_names = arg_names
        self.configs = list(configs) if configs else [Config({})]
        self.keys = list(key)
        self.reset_to_zero = list(reset_to_zero or [])
        self.restore_value = list(restore_value or [])
        self.pre_hook = pre_hook
        self.post_hook = post_hook
        prune = prune_configs_by or {}
        self.perf_model = prune.get("perf_model")
        self.top_k = prune.get("top_k", 1.0)
        self.early_config_prune = prune.get("early_config_prune")
        self.cache = {}  # key: the config chosen last (Triton's attribute)
        self._chosen = launch_context.OncePerKey()  # (chip, key): config
        self.best_config = None
        self.cache_results = cache_results
        self.__name__ = getattr(fn, "__name__", "kernel")

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

    def _load(self, key):
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

    def _save(self, key, config, timings):
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

    def prune_configs(self, named):
        configs = self.configs
        if self.early_config_prune:
            configs = self.early_config_prune(configs, named)
        if self.perf_model:
            k = self.top_k
            if isinstance(k, float) and k <= 1.0:
                k = max(1, int(len(configs) * k))
            configs = sorted(configs, key=lambda c: self.perf_model(
                **named, **c.all_kwargs()))[:k]
        return configs

    def _bench(self, config, args, kwargs, grid, named):
        """Simulated microseconds of one launch with `config`. The
        reset_to_zero arguments are zeroed for it; those and the
        restore_value ones get their contents back afterwards, so the real
        launch sees what the caller passed."""
        saved = {}
        for name in set(self.restore_value) | set(self.reset_to_zero):
            v = named.get(name)
            if v is not None and (hasattr(v, "clone") or hasattr(v, "copy")):
                saved[name] = v.clone() if hasattr(v, "clone") else v.copy()
        for name in self.reset_to_zero:
            v = named.get(name)
            if v is not None:
                v[...] = 0
        current = dict(kwargs)
        current.update(config.all_kwargs())
        if config.pre_hook:
            config.pre_hook({**named, **config.all_kwargs()})
        if self.pre_hook:
            self.pre_hook({**named, **config.all_kwargs()})
        try:
            with launch_context.collecting_times() as times:
                self.fn.run(*args, grid=grid, warmup=False, **current)
            us = sum(times)
        finally:
            for name, copy in saved.items():
                named[name][...] = copy
        if self.post_hook:
            self.post_hook({**named, **config.all_kwargs()}, None)
        return us

    def run(self, *args, grid, warmup, **kwargs):
        named = self._named(args, kwargs)
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
        config = self._load(key)
        if config is not None:
            return config
        configs = self.prune_configs(named)
        if len(configs) == 1:
            config, timings = configs[0], {}
        else:
            timings = {}
            for c in configs:
                try:
                    timings[str(c)] = self._bench(c, args, kwargs, grid, named)
                except OutOfResources:
                    timings[str(c)] = float("inf")  # as Triton does
            config = builtins.min(configs, key=lambda c: timings[str(c)])
            if timings[str(config)] == float("inf"):
                raise OutOfResources(
                    f"{self.__name__}: no autotune config fits the chip")
            if debug_enabled():
                _debug(f"triton_metal: autotune {self.__name__} {key}: "
                       f"simulated us {json.dumps(timings)} -> {config}")
        self._save(key, config, timings)
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
