"""What a launch takes from where it is made: the open profiles, the
timed-run collector of do_bench and autotune, and the kernel checks. Each
is a context variable, so that it belongs to the thread (or asyncio task)
that set it: launches from other threads never see it, and two threads
profiling at once each get their own reports."""
import contextlib
import contextvars
import os
import threading

# The profiles open here, outermost first (a tuple: contexts never share a
# list).
_profiles = contextvars.ContextVar("triton_metal_profiles", default=())
# Where the simulated microseconds of each launch go (do_bench, autotune),
# or None: launches are not timed for them.
_timed = contextvars.ContextVar("triton_metal_timed", default=None)
# The kernel checks of launches here, over TRITON_METAL_CHECK; None: the
# environment's.
_checks = contextvars.ContextVar("triton_metal_checks", default=None)


def open_profiles():
    return _profiles.get()


def enter_profile(profile):
    """Opens `profile` here; the token closes it (exit_profile)."""
    return _profiles.set(_profiles.get() + (profile,))


def exit_profile(token):
    _profiles.reset(token)


def timed_runs():
    """The list that collects this context's launch times, or None."""
    return _timed.get()


@contextlib.contextmanager
def collecting_times():
    """Within: every launch of this context is timed, and its simulated
    microseconds appended to the list this yields (the innermost collector
    only)."""
    times = []
    token = _timed.set(times)
    try:
        yield times
    finally:
        _timed.reset(token)


def kernel_check_list():
    """The checks (as TRITON_METAL_CHECK spells them) for a launch here."""
    checks = _checks.get()
    return os.environ.get("TRITON_METAL_CHECK", "") if checks is None else checks


def out_of_bounds_policy():
    """TRITON_METAL_OOB: what an access just outside a buffer does (within
    the 16 KiB page a Mac maps): "report" (the default: zeros read, nothing
    stored, a RuntimeWarning naming the line) or "fault" (KernelError)."""
    return os.environ.get("TRITON_METAL_OOB", "report")


def schedule():
    """TRITON_METAL_SCHEDULE: the order of a program's SIMD groups between
    barriers, as the command line's --schedule names it: "interleaved"
    (the default, as the GPU runs them), "sequential" or "random:SEED"."""
    return os.environ.get("TRITON_METAL_SCHEDULE", "interleaved")


@contextlib.contextmanager
def kernel_checks(checks="all"):
    """with triton_metal.kernel_checks("race,init"): ... launches ...

    Runs the launches of this thread (or task) inside the block under the
    kernel checks named as TRITON_METAL_CHECK names them (race, init, simd,
    all; "" for none), over what the environment says; other threads'
    launches are not affected."""
    token = _checks.set(str(checks))
    try:
        yield
    finally:
        _checks.reset(token)


class OncePerKey:
    """Values made once per key however many threads ask at once: the first
    makes it, the others wait for it and share it."""

    def __init__(self):
        self.values = {}
        self._lock = threading.Lock()
        self._making = {}

    def get(self, key, make):
        value = self.values.get(key)
        if value is not None:
            return value
        with self._lock:
            lock = self._making.setdefault(key, threading.Lock())
        try:
            with lock:
                value = self.values.get(key)
                if value is None:
                    value = make()
                    self.values[key] = value
                return value
        finally:
            with self._lock:
                self._making.pop(key, None)
