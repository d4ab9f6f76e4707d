"""`@triton_metal.jit`: a kernel's source goes to mtlemu's C++ front end
(compiled once per specialization, per chip), and `kernel[grid](...)`
launches it on the emulated GPU over the caller's arrays and tensors."""
import ast
import collections
import functools
import hashlib
import inspect
import json
import linecache
import os
import re
import shutil
import sys
import textwrap
import threading
import types
import warnings

from .. import _core
from ..language import core as tlc
from . import arguments
from . import device as _device
from . import launch_context
from .. import knobs
from .errors import KernelError, OutOfResources
from .reinterpret import TensorWrapper, reinterpret  # noqa: F401 (Triton's names here)
from .._utils import type_canonicalisation_dict  # noqa: F401

_MISSING = object()

# Launch options Triton takes that mean nothing on an Apple GPU.
IGNORED_OPTIONS = (
    "num_stages", "num_ctas", "maxnreg", "waves_per_eu",
    "matrix_instr_nonkdim", "kpack", "launch_cooperative_grid", "launch_pdl",
    "num_buffers_warp_spec", "num_consumer_groups", "reg_dec_producer",
    "reg_inc_consumer", "debug", "sanitize_overflow", "instrumentation_mode",
    "allowed_dot_input_precisions", "extern_libs", "cluster_dims",
)


def debug_enabled():
    return os.environ.get("TRITON_METAL_DEBUG", "") not in ("", "0")


def _debug(text):
    sys.stderr.write(text if text.endswith("\n") else text + "\n")


class profile:
    """with triton_metal.profile(trace_dir=None) as p: ... launches ...

    Runs the launches inside with the chip's timing model and keeps, in
    p.reports, one dict per launch: the kernel, the grid and the report of
    `mtlemu run --timing --report json` (cycles, time_us, limiter,
    occupancy, bytes per level, stall reasons...). With trace_dir, each
    launch also writes a Chrome/Perfetto trace there, KERNEL_N.json (its
    path is the report's "trace").

    A profile holds the launches of the thread (or asyncio task) that
    opened it, those of nested blocks included: a nested profile has its
    own, and launches from other threads are in neither."""

    def __init__(self, trace_dir=None):
        self.trace_dir = trace_dir
        self.reports = []
        self._lock = threading.Lock()
        self._traces = {}  # kernel: traces written
        self._token = None

    def __enter__(self):
        if self.trace_dir:
            os.makedirs(self.trace_dir, exist_ok=True)
        self._token = launch_context.enter_profile(self)
        return self

    def __exit__(self, *exc):
        launch_context.exit_profile(self._token)
        return False

    def _next_trace_path(self, kernel):
        if not self.trace_dir:
            return None
        with self._lock:
            n = self._traces.get(kernel, 0)
            self._traces[kernel] = n + 1
        return os.path.join(self.trace_dir, f"{kernel}_{n}.json")

    def _add(self, report):
        with self._lock:
            self.reports.append(report)


class CompiledKernel:
    """One specialization of a kernel, as Triton's CompiledKernel: `asm`
    (ttir, msl, isa), `n_regs`, `metadata.shared`."""

    def __init__(self, core_kernel, name, num_warps):
        self._kernel = core_kernel
        self.name = name
        self.asm = {"ttir": core_kernel.ttir, "msl": core_kernel.msl,
                    "isa": core_kernel.isa, "layouts": core_kernel.layouts}
        self.n_regs = core_kernel.n_regs
        self.n_spills = 0
        self.metadata = types.SimpleNamespace(
            name=name, num_warps=num_warps, num_stages=1, num_ctas=1,
            shared=core_kernel.shared, target="metal")
        self.packed_metadata = self.metadata
        self.function = core_kernel.function

    def _init_handles(self):
        pass

    def __getitem__(self, grid):
        """compiled[grid](*args): launches this specialization with the
        kernel's arguments (all of them, constexprs included, as Triton's
        CompiledKernel takes them)."""
        def launch(*args, **kwargs):
            fn = self._jit
            values = fn._bind(args, kwargs)
            classified = {n: arguments.classify(n, v) for n, v in values.items()}
            g = grid(values) if callable(grid) else grid
            g = tuple(int(x) for x in g) + (1,) * (3 - len(g))
            fn._launch(self._device, self, g, classified)
        return launch


class KernelInterface:
    """The base of JITFunction, Autotuner and Heuristics, as Triton's:
    `kernel[grid](*args)` calls `self.run(*args, grid=grid, warmup=False)`,
    so that a subclass with its own `run` (libraries wrap kernels so) is
    launched the same way."""

    def run(self, *args, grid, warmup, **kwargs):
        raise NotImplementedError("run not implemented")

    def warmup(self, *args, grid, **kwargs):
        return self.run(*args, grid=grid, warmup=True, **kwargs)

    def __getitem__(self, grid):
        """kernel[grid](*args, **kwargs): a launch over `grid` programs (a
        tuple, or a function of the arguments and meta-parameters)."""
        return functools.partial(self.run, grid=grid, warmup=False)


def _normalize_ty(ty):
    """A parameter annotation as Triton spells it: "constexpr", "*fp32",
    "i32", "" for none."""
    if isinstance(ty, str):
        ty = ty.strip()
        if ty.startswith("const "):
            inner = _normalize_ty(ty[len("const"):])
            return "*k" + inner[1:] if inner.startswith("*") else inner
        if ty.endswith("*"):
            return "*" + _normalize_ty(ty[:-1])
        if ty.startswith("*"):
            return "*" + _normalize_ty(ty[1:])
        if ty.startswith("tl."):
            return _normalize_ty(ty[len("tl."):])
    elif isinstance(ty, tlc.pointer_type):
        return "*" + _normalize_ty(ty.element_ty)
    elif isinstance(ty, tlc.dtype):
        ty = ty.name
    elif isinstance(ty, type):
        ty = ty.__name__
    else:
        ty = str(ty)
    return type_canonicalisation_dict.get(ty.replace("_t", ""), ty)


class KernelParam:
    """One parameter of a @jit function, as Triton's: its position, name,
    annotation (normalized: "constexpr", "*fp32", "i32", ""), default and
    specialization flags."""

    def __init__(self, num, param, do_not_specialize, do_not_specialize_on_alignment):
        self.num = num
        self._param = param
        self.name = param.name
        self.do_not_specialize = do_not_specialize
        self.do_not_specialize_on_alignment = do_not_specialize_on_alignment
        a = param.annotation
        self.annotation = "" if a is inspect.Parameter.empty or not a else _normalize_ty(a)
        self.is_constexpr = "constexpr" in self.annotation
        self.is_const = not self.is_constexpr and (
            "const" in self.annotation or self.annotation.startswith("*k"))

    @property
    def annotation_type(self):
        a = self.annotation
        a = a[2:] if a.startswith("*k") else a[1:] if a.startswith("*") else a
        return self.annotation if a in set(type_canonicalisation_dict.values()) else ""

    @property
    def default(self):
        return self._param.default

    @property
    def has_default(self):
        return self._param.default is not inspect.Parameter.empty

    def __repr__(self):
        return f"KernelParam({self.num}, {self.name!r}, {self.annotation!r})"


_parsed_texts = collections.OrderedDict()  # module text: its ast (read only)
_PARSED_TEXTS_KEPT = 8


def _parsed(text):
    """ast.parse(text), kept for the last few texts: a test file defines
    hundreds of kernels inside its test functions, and parsing its 7,000
    lines for each would be most of a test's time."""
    tree = _parsed_texts.get(text)
    if tree is None:
        tree = ast.parse(text)
        _parsed_texts[text] = tree
        while len(_parsed_texts) > _PARSED_TEXTS_KEPT:
            _parsed_texts.popitem(last=False)
    return tree


def _nested_source(fn, text):
    """For a function defined inside another: the module text with the
    enclosing top-level statement blanked but for this function (and the
    other functions defined there), dedented in place, so that line numbers
    stay the file's."""
    lines = text.split("\n")
    tree = _parsed(text)
    first = fn.__code__.co_firstlineno
    for stmt in tree.body:
        start = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", [])])
        if start <= first <= stmt.end_lineno:
            inner = [n for n in ast.walk(stmt)
                     if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n is not stmt]
            keep = {}
            # The enclosing function's own imports (`from triton.language.core
            # import constexpr_type` in a test), so that its kernels see them.
            imports = [n for n in getattr(stmt, "body", [])
                       if isinstance(n, (ast.Import, ast.ImportFrom))]
            for node in imports:
                block = lines[node.lineno - 1:node.end_lineno]
                for i, text in enumerate(textwrap.dedent("\n".join(block)).split("\n")):
                    keep.setdefault(node.lineno + i, text)
            for node in inner:
                top = min([node.lineno] + [d.lineno for d in node.decorator_list])
                block = lines[top - 1:node.end_lineno]
                for i, text in enumerate(textwrap.dedent("\n".join(block)).split("\n")):
                    keep.setdefault(top + i, text)
            for line in range(start, stmt.end_lineno + 1):
                lines[line - 1] = keep.get(line, "")
            # Functions nested in functions nested here: keep only the
            # outermost (their bodies are part of it already).
            return "\n".join(lines)
    return None


def _with_function_source(fn, file, original, text, src):
    """`text` (the module text `original`, or it with lines blanked, line
    numbers kept) with `fn`'s definition, from its `def` line to its end,
    replaced by `src`, indented as it was in `text`."""
    lines = text.split("\n")
    first = fn.__code__.co_firstlineno
    for node in ast.walk(_parsed(original)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name != fn.__name__:
            continue
        start = min([node.lineno] + [d.lineno for d in node.decorator_list])
        if start != first and node.lineno != first:
            continue
        indent = lines[node.lineno - 1][:len(lines[node.lineno - 1]) -
                                         len(lines[node.lineno - 1].lstrip())]
        body = [indent + line if line else line for line in src.rstrip("\n").split("\n")]
        lines[node.lineno - 1:node.end_lineno] = body
        return "\n".join(lines)
    raise TypeError(f"{fn.__name__}: its definition is not in {file}")


_ERROR_LINE = re.compile(r"^.*?:\d+:\d+: error: (.*)$", re.MULTILINE)


def _set_cause(e):
    """Gives a CompilationError the cause Triton's has: the error its
    semantic layer raised (ValueError "program_id axis must be 0, 1, or 2
    but got 20"), which tests read as str(e.__cause__). A failed
    tl.static_assert has none (Triton raises CompileTimeAssertionFailure
    itself)."""
    found = _ERROR_LINE.search(str(e))
    if found and not found.group(1).startswith("Static assertion failed"):
        e.__cause__ = ValueError(found.group(1))


class _Specialization:
    """What @jit(repr=f) gets, as Triton's ASTSource: `signature` (each
    parameter's type: "*fp32", "i32", "i64", "u64", "fp32", "i1", or
    "constexpr" for constexprs and what Triton folds, 1 and None) and
    `constants` (name: value of those)."""

    def __init__(self, fn, classified):
        self.fn = fn
        self.signature, self.constants = {}, {}
        for i, (name, c) in enumerate(classified.items()):
            if isinstance(c, arguments.Pointer):
                self.signature[name] = "*" + c.dtype
                continue
            kind, value = c
            if i in fn.constexprs or kind in ("none", "str", "dtype") or (
                    kind == "int" and value == 1):
                self.signature[name] = "constexpr"
                self.constants[name] = value
            elif kind == "int":
                self.signature[name] = arguments.int_type(value)
            else:
                self.signature[name] = {"float": "fp32", "bool": "i1"}.get(kind, kind)
        self.attrs = None


def _referenced_names(code):
    names = set(code.co_names) | set(code.co_freevars)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _referenced_names(c)
    return names


def _module_roots(scope):
    """The folders the modules in `scope` were imported from that
    sys.path does not name (a package loaded from elsewhere, by an
    import hook or by hand): the front end reads their files too."""
    roots = []
    for v in list(scope.values()):
        if not isinstance(v, types.ModuleType):
            continue
        top = sys.modules.get(v.__name__.partition(".")[0])
        where = list(getattr(top, "__path__", None) or ())[:1] or [getattr(top, "__file__", None)]
        if where[0]:
            root = os.path.dirname(os.path.abspath(where[0]))
            if root not in roots and os.path.isdir(root):
                roots.append(root)
    return roots


def _builtin_module_name(module):
    """The dotted name the front end knows a triton_metal module by
    ("triton.language.extra.libdevice"), or None for any other module."""
    name = module.__name__
    if name.startswith("triton_metal."):
        name = "triton." + name[len("triton_metal."):]
    elif name == "triton_metal":
        name = "triton"
    elif not name.startswith("triton"):
        return None
    return name if tlc.kernel_names(name) else None


def _wrapped_jit_function(value):
    """The JITFunction `value` is or wraps: through Autotuner, Heuristics
    and a library's own KernelInterface (their `fn`)."""
    depth = 0
    while isinstance(value, KernelInterface) and not isinstance(value, JITFunction) and depth < 8:
        value, depth = getattr(value, "fn", None), depth + 1
    return value


class JITFunction(KernelInterface):
    """A @triton_metal.jit function."""

    def __init__(self, fn, version=None, do_not_specialize=None,
                 do_not_specialize_on_alignment=None, debug=None,
                 noinline=None, repr=None, launch_metadata=None):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__qualname__ = fn.__qualname__
        self.__module__ = fn.__module__
        self.__doc__ = fn.__doc__
        self.__globals__ = fn.__globals__
        self.module = fn.__module__
        self.signature = inspect.signature(fn)
        self.version = version
        self.debug = debug
        self._repr = repr
        self.launch_metadata = launch_metadata
        self.do_not_specialize = list(do_not_specialize or ())
        self.do_not_specialize_on_alignment = list(do_not_specialize_on_alignment or ())
        self.params = []
        for i, p in enumerate(self.signature.parameters.values()):
            self.params.append(KernelParam(
                i, p, i in self.do_not_specialize or p.name in self.do_not_specialize,
                i in self.do_not_specialize_on_alignment
                or p.name in self.do_not_specialize_on_alignment))
        self.arg_names = [p.name for p in self.params]
        self.constexprs = [
            i for i, p in enumerate(self.signature.parameters.values())
            if self._is_constexpr_annotation(p.annotation)]
        self.pre_run_hooks = []
        params = self.signature.parameters.values()
        self._param_set = set(self.arg_names)
        self._defaults = [(p.name, p.default) for p in params
                          if p.default is not inspect.Parameter.empty]
        self._has_varargs = any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                                for p in params)
        self.noinline = noinline
        self._compiled = launch_context.OncePerKey()  # specialization key: kernel
        self._source_info = None
        self._global_names = None
        self._src = None  # the function's source, from `def` (src)
        self._src_updated = False  # src set by _unsafe_update_src

    @staticmethod
    def _is_constexpr_annotation(a):
        if a is tlc.constexpr or isinstance(a, tlc.constexpr):
            return True
        return isinstance(a, str) and a.split(".")[-1] == "constexpr"

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            f"{self.__name__} is a @jit function: call it from another "
            "kernel, or launch it with kernel[grid](...)")

    def __repr__(self):
        return f"JITFunction({self.__module__}:{self.__qualname__})"

    def repr(self, specialization):
        """The kernel's name for profilers: @jit(repr=f)'s f(specialization),
        else module.qualname (as Triton's)."""
        if self._repr is None:
            return f"{self.__module__}.{self.__qualname__}"
        return self._repr(specialization)

    # --- where the source is ---------------------------------------------------

    def _source(self):
        """(file, text or None, module paths) for the C++ front end."""
        if self._source_info is None:
            raw = self.fn.__code__.co_filename
            file = os.path.abspath(raw)
            text = None
            if not os.path.isfile(file):
                # Source that lives only in memory (exec, an interactive
                # session): linecache has it, or nothing does.
                lines = linecache.getlines(raw)
                if not lines:
                    raise TypeError(
                        f"{self.__name__}: @jit needs the kernel's source, and "
                        f"'{raw}' is not a file Python kept the lines of")
                text, file = "".join(lines), raw
            if "<locals>" in self.__qualname__ or self._src_updated:
                original = text
                if original is None:
                    with open(file, encoding="utf-8") as f:
                        original = f.read()
                text = original
                if "<locals>" in self.__qualname__:
                    text = _nested_source(self.fn, original) or original
                if self._src_updated:
                    text = _with_function_source(self.fn, file, original, text, self._src)
            paths = [os.path.dirname(file)]
            paths += [p for p in sys.path if p and os.path.isdir(p) and p not in paths]
            paths += [p for p in _module_roots(self.fn.__globals__) if p not in paths]
            self._source_info = (file, text, paths)
        return self._source_info

    @property
    def src(self):
        """The function's source text, from its `def` line (as Triton's)."""
        if self._src is None:
            text = textwrap.dedent(inspect.getsource(self.fn))
            start = re.search(r"^(async\s+)?def\s", text, re.MULTILINE)
            self._src = text[start.start():] if start else text
        return self._src

    @property
    def cache_key(self):
        """Triton's: a hash of the function's source, its version and, for
        every name it and the jit functions it reaches read, that jit
        function's source or that simple value. Libraries key their own
        caches of generated code on it."""
        h = hashlib.sha256(self.src.encode())
        h.update(repr(self.version).encode())
        for name, scope, v, _ in self._names_read():
            callee = _wrapped_jit_function(v)
            if isinstance(callee, JITFunction):
                h.update(f"\0{name}\0{callee.src}".encode())
            elif v is None or isinstance(v, (bool, int, float, str, tlc.constexpr, tlc.dtype)):
                h.update(f"\0{name}\0{v!r}".encode())
        return h.hexdigest()

    def _unsafe_update_src(self, new_src):
        """Compiles `new_src` from now on in place of the function's own
        source (Triton's tests patch a kernel's text so)."""
        self._src = new_src
        self._src_updated = True
        self._source_info = None
        self._global_names = None
        self._compiled = launch_context.OncePerKey()

    def _globals(self):
        """The simple values (numbers, strings, None, dtypes, constexprs) of
        the names this kernel, and the jit functions it calls, read from
        their globals and closures: they may differ from what the file says
        (computed at run time, closure variables)."""
        out = []
        for name, _, v, _ in self._names_read():
            if v is _MISSING:
                continue
            if v is None or isinstance(v, (bool, int, float, str, tlc.constexpr, tlc.dtype)):
                try:
                    out.append((name,) + arguments.classify(name, v))
                except (TypeError, OverflowError):
                    continue
        return out

    def _references(self):
        """(name, module file, file, function) or (name, module file, "",
        builtin) for the names this kernel and the jit functions it reaches
        read whose value the text does not say: a jit function the reading file does not define
        under that name (one a library put into a generated module's
        globals, as FlagGems' pointwise_dynamic does), and Triton builtins
        and builtin modules (a libdevice module a library picks at run
        time, and its functions). The front end, reading files, would not
        find them. The module file is that of the function reading the
        name ("" for the kernel's own)."""
        out = []
        own = self.fn.__code__.co_filename
        for name, scope, v, reader in self._names_read():
            if isinstance(scope, types.CellType):
                continue  # closures: the front end reads them from the text
            module_file = "" if reader == own else os.path.abspath(reader)
            if module_file and not os.path.isfile(module_file):
                continue
            if isinstance(v, tlc._KernelOnly):
                out.append((name, module_file, "", v._dotted))
                continue
            if isinstance(v, types.ModuleType):
                dotted = _builtin_module_name(v)
                if dotted:
                    out.append((name, module_file, "", dotted))
                continue
            callee = _wrapped_jit_function(v)
            if (not isinstance(callee, JITFunction) or callee.__qualname__ != callee.__name__
                    or callee._src_updated):
                continue  # the front end finds nested and patched ones in the text
            file = os.path.abspath(callee.fn.__code__.co_filename)
            if not os.path.isfile(file):
                continue
            if name == callee.__name__ and os.path.abspath(reader) == file:
                continue  # the reading file's own def (or its import)
            out.append((name, module_file, file, callee.__name__))
        return sorted(set(out))

    def _names_read(self):
        """(name, scope, its value now or _MISSING, the file of the
        function reading it) for every name this kernel and the jit
        functions it reaches read (the names found once, their values at
        each call)."""
        if self._global_names is None:
            self._global_names = self._find_global_names()
        for name, scope, reader in self._global_names:
            v = scope.cell_contents if isinstance(scope, types.CellType) else scope.get(name, _MISSING)
            yield name, scope, v, reader

    def _find_global_names(self):
        """(name, dict or closure cell, the file of the function reading
        it) for every name this kernel and the jit functions it reaches
        refer to."""
        seen, found, todo = set(), [], [self]
        while todo:
            f = todo.pop()
            if id(f) in seen:
                continue
            seen.add(id(f))
            code = f.fn.__code__
            cells = dict(zip(code.co_freevars, f.fn.__closure__ or ()))
            for name in sorted(_referenced_names(code)):
                if name in cells:
                    scope = cells[name]
                    try:
                        value = scope.cell_contents
                    except ValueError:  # not yet assigned
                        continue
                elif name in f.fn.__globals__:
                    scope = f.fn.__globals__
                    value = scope[name]
                else:
                    continue
                found.append((name, scope, code.co_filename))
                callee = _wrapped_jit_function(value)
                if isinstance(callee, JITFunction):
                    todo.append(callee)
        return found

    # --- compile and launch -----------------------------------------------------

    def _bind(self, args, kwargs):
        """{parameter: value} in the signature's order, defaults filled."""
        names = self.arg_names
        if len(args) <= len(names) and not self._has_varargs:
            values = dict(zip(names, args))
            for k, v in kwargs.items():
                if k not in self._param_set or k in values:
                    break
                values[k] = v
            else:
                if len(values) == len(names):
                    return values if not kwargs else {k: values[k] for k in names}
                for k, d in self._defaults:
                    if k not in values:
                        values[k] = d
                if len(values) == len(names):
                    return {k: values[k] for k in names}
        try:  # the slow path, for its messages (and *args, **kwargs)
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self.__name__}(): {e}") from None
        bound.apply_defaults()
        return bound.arguments

    def run(self, *args, grid, warmup, **kwargs):
        num_warps = kwargs.pop("num_warps", None) if "num_warps" not in self._param_set else None
        # Triton's own check and words (its backends' options assert it).
        assert num_warps is None or (num_warps > 0 and num_warps & (num_warps - 1) == 0), \
            "num_warps must be a power of 2"
        fp_fusion = None
        if "enable_fp_fusion" not in self._param_set:
            fp_fusion = kwargs.pop("enable_fp_fusion", None)
        if fp_fusion is None:
            fp_fusion = knobs.language.default_fp_fusion
        fp_fusion = bool(fp_fusion)
        ignored = [k for k in IGNORED_OPTIONS if k in kwargs and k not in self._param_set]
        for k in ignored:
            kwargs.pop(k)
        if ignored and debug_enabled():
            _debug(f"triton_metal: {self.__name__}: {', '.join(ignored)} "
                   "ignored (no meaning on Apple GPUs)")
        values = self._bind(args, kwargs)
        device = _device.current_device()
        classified = {}
        key = [device.chip, num_warps, fp_fusion]
        for i, (name, value) in enumerate(values.items()):
            c = arguments.classify(name, value)
            classified[name] = c
            if i in self.constexprs:
                if isinstance(c, arguments.Pointer):
                    raise TypeError(f"argument '{name}' is a tl.constexpr; "
                                    "an array cannot be one")
                key.append(("constexpr", c))
            elif isinstance(c, arguments.Pointer):
                key.append(("ptr", c.dtype))
            else:
                key.append(arguments.specialization(*c))
        globals_ = self._globals()
        references = self._references()
        key.append(tuple(globals_))
        key.append(tuple(references))
        key = tuple(key)
        compiled = self._compiled.get(
            key, lambda: self._compile(device, classified, globals_, num_warps, fp_fusion,
                                       references))
        if warmup:
            return compiled
        if callable(grid):
            grid = grid(dict(values))
        grid = tuple(int(g) for g in grid) + (1,) * (3 - len(grid))
        self._launch(device, compiled, grid, classified)
        return compiled

    def warmup(self, *args, grid, **kwargs):
        """Compiles for these arguments without launching; the
        CompiledKernel (asm, n_regs, metadata)."""
        return self.run(*args, grid=grid, warmup=True, **kwargs)

    def _compile(self, device, classified, globals_, num_warps, fp_fusion=True,
                 references=()):
        file, text, paths = self._source()
        args = []
        for name, c in classified.items():
            if isinstance(c, arguments.Pointer):
                args.append((name, "ptr", c.dtype))
            else:
                args.append((name, c[0], c[1]))
        try:
            core = _core.compile(device, file, text, self.__name__, args,
                                 globals_, paths, num_warps, _module_cache_dir(),
                                 enable_fp_fusion=fp_fusion, references=list(references))
        except _core.CompilationError as e:
            if "more than Metal's 32 KB" in str(e):
                raise OutOfResources(str(e)) from None
            _set_cause(e)
            raise
        name = self.__name__ if self._repr is None else self.repr(
            _Specialization(self, classified))
        compiled = CompiledKernel(core, name, core.threads_per_threadgroup // 32)
        compiled._jit = self
        compiled._device = device
        for m in core.messages:
            print(m)
        if debug_enabled():
            for stage in ("ttir", "msl", "isa"):
                _debug(f"--- {self.__name__}: {stage} ---\n{compiled.asm[stage]}")
        return compiled

    def _launch(self, device, compiled, grid, classified):
        launch_args = []
        for name, c in classified.items():
            if isinstance(c, arguments.Pointer):
                launch_args.append((name, (c.start, c.nbytes, c.offset)))
            else:
                # Numbers; strings, dtypes and None are folded into the code.
                launch_args.append((name, c[1] if c[0] in ("int", "float", "bool") else None))
        profiles = launch_context.open_profiles()
        times = launch_context.timed_runs()
        # One trace, written for the innermost profile that keeps them and
        # copied for the others.
        traces = [t for t in (p._next_trace_path(self.__name__) for p in reversed(profiles)) if t]
        timed = times is not None or bool(profiles)
        try:
            report = _core.launch(device, compiled._kernel, grid, launch_args,
                                  timing=timed, trace=traces[0] if traces else None,
                                  checks=launch_context.kernel_check_list(),
                                  oob=launch_context.out_of_bounds_policy(),
                                  schedule=launch_context.schedule())
        except _core.LaunchError as e:
            for line in getattr(e, "printed", []):
                print(line)
            if "maxTotalThreadsPerThreadgroup" in str(e):
                raise OutOfResources(str(e)) from None
            raise KernelError(str(e), getattr(e, "kind", "fault")) from None
        for line in report["printed"]:
            print(line)
        for message in report["warnings"]:
            warnings.warn(message, RuntimeWarning, stacklevel=3)
        if timed and "timing_json" in report:
            timing = json.loads(report["timing_json"])
            if times is not None:
                times.append(timing["time_us"])
            for t in traces[1:]:
                shutil.copyfile(traces[0], t)
            paths = iter(reversed(traces))  # the profiles' order
            for p in profiles:
                trace = next(paths) if p.trace_dir else None
                p._add({"kernel": self.__name__, "grid": grid,
                        "chip": device.chip, "trace": trace, **timing})
        if debug_enabled():
            _debug(f"triton_metal: {self.__name__}[{grid}] on {device.name}: "
                   f"{report['instructions']} SIMD-group instructions, "
                   f"{report['seconds'] * 1e3:.3f} ms to emulate")


def _module_cache_dir():
    """Where compiled modules are cached: TRITON_METAL_CACHE_DIR/modules
    unless MTLEMU_CACHE_DIR says otherwise (None: the C++ side reads
    MTLEMU_CACHE_DIR and its defaults)."""
    ours = os.environ.get("TRITON_METAL_CACHE_DIR")
    if ours and not os.environ.get("MTLEMU_CACHE_DIR"):
        return os.path.join(ours, "modules")
    return None


def jit(fn=None, *, version=None, repr=None, launch_metadata=None,
        do_not_specialize=None, do_not_specialize_on_alignment=None,
        debug=None, noinline=None):
    """@triton_metal.jit, or @triton_metal.jit(do_not_specialize=[...])."""
    def decorator(f):
        return JITFunction(f, version=version, do_not_specialize=do_not_specialize,
                           do_not_specialize_on_alignment=do_not_specialize_on_alignment,
                           debug=debug, noinline=noinline, repr=repr,
                           launch_metadata=launch_metadata)
    return decorator(fn) if fn is not None else decorator
