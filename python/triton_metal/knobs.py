"""`triton.knobs`: Triton's settings as attributes, each backed by its
environment variable (set one here and the variable follows, unless
`propagate_env` is False), in sets (`knobs.cache`, `knobs.runtime`,
`knobs.language`...) that `scope()` restores and `copy()`/`reset()` clone,
as Triton's test fixtures use them. The knobs triton_metal reads are
marked; the others are kept for the code that sets or reads them."""
import contextlib
import os

propagate_env = True


class Env:
    """Assigning `knobs.env` to a knob drops what was set here: the
    environment decides again."""


env = Env()


def setenv(key, value):
    if not propagate_env:
        return
    if value is not None:
        os.environ[key] = value
    else:
        os.environ.pop(key, None)


def _to_env(value):
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (str, int)):
        return str(value)
    return None


class env_base:
    """A knob: its value set here, else its environment variable's, else
    its default."""

    def __init__(self, key, default=None):
        self.key = key
        self.default = default

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        if self.name in obj.__dict__:
            return obj.__dict__[self.name]
        raw = os.environ.get(self.key)
        return self.parse(raw) if raw is not None else self.default_value()

    def __set__(self, obj, value):
        if isinstance(value, Env):
            obj.__dict__.pop(self.name, None)
            return
        obj.__dict__[self.name] = value
        text = _to_env(value)
        if text is not None or value is None:
            setenv(self.key, text)

    def __delete__(self, obj):
        obj.__dict__.pop(self.name, None)

    def default_value(self):
        return self.default() if callable(self.default) else self.default

    def parse(self, raw):
        return raw


class env_str(env_base):
    pass


env_opt_str = env_str


class env_bool(env_base):
    def __init__(self, key, default=False):
        super().__init__(key, default)

    def parse(self, raw):
        return raw.strip().lower() in ("1", "true", "on", "yes")


env_opt_bool = env_bool


class env_int(env_base):
    def __init__(self, key, default=0):
        super().__init__(key, default)

    def parse(self, raw):
        return int(raw)


class base_knobs:
    @property
    def knob_descriptors(self):
        return {k: v for k, v in type(self).__dict__.items() if isinstance(v, env_base)}

    @property
    def knobs(self):
        return {k: getattr(self, k) for k in self.knob_descriptors}

    def copy(self):
        other = type(self)()
        other.__dict__.update(self.__dict__)
        return other

    def reset(self):
        for name in self.knob_descriptors:
            self.__dict__.pop(name, None)
        return self

    @contextlib.contextmanager
    def scope(self):
        """Within: set knobs freely; afterwards they and their environment
        variables are as before."""
        before = {k.key: os.environ.get(k.key) for k in self.knob_descriptors.values()}
        saved = dict(self.__dict__)
        try:
            yield
        finally:
            self.__dict__.clear()
            self.__dict__.update(saved)
            for key, value in before.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


def _home():
    return os.path.expanduser("~/")


class cache_knobs(base_knobs):
    home_dir = env_str("TRITON_HOME", _home)
    # triton_metal's autotune and compile caches (TRITON_METAL_CACHE_DIR).
    dir = env_str("TRITON_METAL_CACHE_DIR",
                  lambda: os.path.join(_home(), ".cache", "triton_metal"))
    dump_dir = env_str("TRITON_DUMP_DIR", lambda: os.path.join(_home(), ".triton", "dump"))
    override_dir = env_str("TRITON_OVERRIDE_DIR",
                           lambda: os.path.join(_home(), ".triton", "override"))


class compilation_knobs(base_knobs):
    override = env_bool("TRITON_KERNEL_OVERRIDE")
    dump_ir = env_bool("TRITON_KERNEL_DUMP")
    always_compile = env_bool("TRITON_ALWAYS_COMPILE")
    disable_line_info = env_bool("TRITON_DISABLE_LINE_INFO")
    front_end_debugging = env_bool("TRITON_FRONT_END_DEBUGGING")
    allow_non_constexpr_globals = env_bool("TRITON_ALLOW_NON_CONSTEXPR_GLOBALS")
    listener = None


class autotuning_knobs(base_knobs):
    cache = env_bool("TRITON_CACHE_AUTOTUNING")
    print = env_bool("TRITON_PRINT_AUTOTUNING")


class runtime_knobs(base_knobs):
    interpret = env_bool("TRITON_INTERPRET")
    debug = env_bool("TRITON_DEBUG")
    override_arch = env_opt_str("TRITON_OVERRIDE_ARCH")
    launch_enter_hook = None
    launch_exit_hook = None
    jit_cache_hook = None
    jit_post_compile_hook = None


class language_knobs(base_knobs):
    fp32_default = env_opt_str("TRITON_F32_DEFAULT")
    default_fp_fusion = env_bool("TRITON_DEFAULT_FP_FUSION", True)


class build_knobs(base_knobs):
    cc = env_opt_str("CC")
    backend_dirs = None


class nvidia_knobs(base_knobs):
    pass


class amd_knobs(base_knobs):
    pass


build = build_knobs()
cache = cache_knobs()
compilation = compilation_knobs()
autotuning = autotuning_knobs()
runtime = runtime_knobs()
language = language_knobs()
nvidia = nvidia_knobs()
amd = amd_knobs()
