"""pytest -p triton_metal.pytest_plugin: run a Triton test suite on
triton_metal, unchanged.

Loaded before the tests are collected, it makes `import triton` mean
triton_metal (triton_metal.compat), so that the suite's own conftest.py
and test modules import this package; and it marks as skipped, with the
reason, each test that asks for what Apple GPUs do not have, as
`test_skips.txt` (next to this file) lists them: lines of
`PATTERN  REASON` (fields separated by two or more spaces), PATTERN a test id with `*` (any text) and `?` (any
character) as wildcards, brackets meaning themselves
(`test_core.py::test_dot[*float64*]`, matched against the id's end), and
`#` comments. A line `raised:TEXT  REASON` skips, after the fact, a test
that fails with an error whose message holds TEXT (float64 data is refused
where the test makes it, whatever its id says). A line
`if-missing:MODULE.NAME  PATTERN  REASON` skips PATTERN's tests only where
MODULE lacks NAME (the tests whose own reference code needs a newer
torch), and runs them where it has it. A line
`placeholders:MODULE.NAME[,MODULE.NAME...]  PATTERN  REASON` runs
PATTERN's tests with a stand-in object for each missing name, for tests
that only name what they do not use (a dict of torch's float8 dtypes
built whole where one bfloat16 entry is read); any use of a stand-in in
torch fails with its type's name in the message. `--triton-metal-skips
FILE` adds a list of your own;
`--triton-metal-every N` keeps every Nth test collected (a sample spread
over every test function, the same in each pytest-xdist worker)."""
import os
import re

import pytest

from triton_metal import compat

compat.install()

_HERE = os.path.dirname(os.path.abspath(__file__))


# Fields of a skip list line: separated by two or more spaces, or tabs
# (a `raised:` text may hold single spaces).
_FIELDS = re.compile(r"\t+| {2,}")


def read_skip_list(path):
    """[(pattern, reason)] of a skip list file."""
    entries = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = _FIELDS.split(line, 1)
            if parts[0].startswith("placeholders:"):
                rest = _FIELDS.split(parts[1], 1) if len(parts) == 2 else []
                if len(rest) != 2:
                    raise ValueError(f"{path}:{number}: placeholders:MODULE.NAME[,...], a pattern "
                                     f"and its reason, separated by two spaces, not '{line}'")
                names = [n for n in parts[0][len("placeholders:"):].split(",") if _missing(n)]
                if names:
                    entries.append((_Placeholders(names, _pattern(rest[0])), rest[1]))
                continue
            if parts[0].startswith("if-missing:"):
                if len(parts) != 2 or len(_FIELDS.split(parts[1], 1)) != 2:
                    raise ValueError(f"{path}:{number}: if-missing:MODULE.NAME, a pattern and its "
                                     f"reason, separated by two spaces, not '{line}'")
                if not _missing(parts[0][len("if-missing:"):]):
                    continue
                parts = _FIELDS.split(parts[1], 1)
            if len(parts) != 2:
                raise ValueError(f"{path}:{number}: a pattern and its reason, "
                                 f"separated by two spaces, not '{line}'")
            if parts[0].startswith("raised:"):
                entries.append((parts[0][len("raised:"):], parts[1]))
            else:
                entries.append((_pattern(parts[0]), parts[1]))
    return entries


def _missing(dotted):
    """Whether MODULE.NAME (a module and an attribute path) is missing."""
    import importlib
    module, _, names = dotted.partition(".")
    try:
        value = importlib.import_module(module)
    except ImportError:
        return True
    for name in names.split(".") if names else []:
        if not hasattr(value, name):
            return True
        value = getattr(value, name)
    return False


class _Placeholders:
    """Names to stand in for during the tests a pattern matches."""

    def __init__(self, dotted_names, pattern):
        self.names = dotted_names
        self.pattern = pattern

    def install(self):
        """Sets a stand-in for each name; returns what undoes it."""
        import importlib
        done = []
        for dotted in self.names:
            module, _, name = dotted.rpartition(".")
            owner = importlib.import_module(module)
            if hasattr(owner, name):
                continue
            kind = type(f"{name}_needs_a_newer_{module}", (), {"__repr__": lambda self, d=dotted: d})
            setattr(owner, name, kind())
            done.append((owner, name))

        def undo():
            for owner, name in done:
                delattr(owner, name)
        return undo


def placeholders_for(nodeid, entries):
    """The `placeholders:` entries whose pattern matches the test id."""
    return [p for p, _ in entries if isinstance(p, _Placeholders) and p.pattern.match(nodeid)]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    """Runs a test with the placeholders a `placeholders:` line gives it."""
    undo = [p.install() for p in placeholders_for(item.nodeid, item.config._triton_metal_skips)]
    try:
        yield
    finally:
        for u in reversed(undo):
            u()


def _pattern(text):
    """A compiled pattern: * and ? are wildcards, everything else literal;
    it matches a test id's end."""
    body = re.escape(text).replace(r"\*", ".*").replace(r"\?", ".")
    return re.compile(f"(^|.*[/:]){body}$" if not text.startswith("*") else f"{body}$")


def pytest_addoption(parser):
    parser.addoption("--triton-metal-skips", action="append", default=[],
                     help="another skip list (lines of PATTERN REASON)")
    parser.addoption("--triton-metal-every", type=int, default=1,
                     help="run every Nth test collected")


def pytest_configure(config):
    files = [os.path.join(_HERE, "test_skips.txt")] + config.getoption("--triton-metal-skips")
    config._triton_metal_skips = [e for f in files for e in read_skip_list(f)]


def reason_to_skip(nodeid, entries):
    for pattern, reason in entries:
        if isinstance(pattern, re.Pattern) and pattern.match(nodeid):
            return reason
    return None


def reason_to_skip_raised(message, entries):
    for text, reason in entries:
        if isinstance(text, str) and text in message:
            return reason
    return None


def pytest_runtest_makereport(item, call):
    """A test that failed with an error a `raised:` line names is a skip,
    with that line's reason."""
    if call.when != "call" or call.excinfo is None:
        return None
    import pytest
    reason = reason_to_skip_raised(str(call.excinfo.value), item.config._triton_metal_skips)
    if reason is None or call.excinfo.errisinstance(pytest.skip.Exception):
        return None
    from _pytest.reports import TestReport
    report = TestReport.from_item_and_call(item, call)
    report.outcome = "skipped"
    report.longrepr = (str(item.path), item.location[1] or 0, f"Skipped: triton_metal: {reason}")
    return report


def pytest_collection_modifyitems(config, items):
    import pytest
    every = config.getoption("--triton-metal-every")
    if every > 1:
        kept = items[::every]
        chosen = set(id(i) for i in kept)
        config.hook.pytest_deselected(items=[i for i in items if id(i) not in chosen])
        items[:] = kept
    entries = config._triton_metal_skips
    for item in items:
        reason = reason_to_skip(item.nodeid, entries)
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason=f"triton_metal: {reason}"))
