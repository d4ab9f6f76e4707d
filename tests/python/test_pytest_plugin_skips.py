"""triton_metal.pytest_plugin's skip lists: fields split by two spaces (a
`raised:` text may hold single spaces, and matches only as a whole), and
`if-missing:` lines that skip only where a name is missing, and
`placeholders:` lines that stand in for names a test only names."""
import os
import subprocess
import sys

import pytest

from triton_metal import pytest_plugin


def entries_of(tmp_path, text):
    path = tmp_path / "skips.txt"
    path.write_text(text)
    return pytest_plugin.read_skip_list(str(path))


def test_raised_text_is_matched_whole(tmp_path):
    entries = entries_of(tmp_path, "raised:Apple GPUs have no float64    no doubles\n")
    assert pytest_plugin.reason_to_skip_raised("x: Apple GPUs have no float64; cast", entries) == "no doubles"
    # Before, the text was cut at its first space and "Apple" alone matched.
    assert pytest_plugin.reason_to_skip_raised("Apple GPUs have no fp8 matrix units", entries) is None


def test_if_missing_skips_only_where_the_name_is_missing(tmp_path):
    entries = entries_of(
        tmp_path, "if-missing:os.no_such_name  test_a.py::test_x[*]  needs os.no_such_name\n"
        "if-missing:os.path.join  test_a.py::test_y[*]  os.path.join exists\n"
        "if-missing:no_such_module.thing  test_a.py::test_z  no module\n")
    assert pytest_plugin.reason_to_skip("test_a.py::test_x[1-2]", entries) == "needs os.no_such_name"
    assert pytest_plugin.reason_to_skip("test_a.py::test_y[1]", entries) is None
    assert pytest_plugin.reason_to_skip("test_a.py::test_z", entries) == "no module"


@pytest.mark.parametrize("line", ["test_a.py::test_x needs-two-spaces\n", "if-missing:os.x  pattern-only\n"])
def test_malformed_lines_name_file_and_line(tmp_path, line):
    with pytest.raises(ValueError, match=r"skips.txt:1: "):
        entries_of(tmp_path, line)


def test_placeholders_stand_in_for_missing_names_during_matching_tests(tmp_path):
    entries = entries_of(
        tmp_path, "placeholders:os.no_such_name,os.sep  test_a.py::test_x[*]  names only\n")
    (p,) = pytest_plugin.placeholders_for("test_a.py::test_x[1]", entries)
    assert p.names == ["os.no_such_name"]  # os.sep exists
    assert pytest_plugin.placeholders_for("test_a.py::test_y", entries) == []
    assert pytest_plugin.reason_to_skip("test_a.py::test_x[1]", entries) is None
    undo = p.install()
    assert repr(os.no_such_name) == "os.no_such_name"
    assert "needs_a_newer_os" in type(os.no_such_name).__name__
    undo()
    assert not hasattr(os, "no_such_name")


def test_placeholders_in_a_pytest_run(tmp_path):
    import triton_metal
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(triton_metal.__file__)))
    (tmp_path / "skips.txt").write_text(
        "placeholders:os.float8_stand_in  test_names.py::test_builds_a_dict  names only\n")
    (tmp_path / "test_names.py").write_text(
        "import os\n"
        "def test_builds_a_dict():\n"
        "    table = {'e4m3': os.float8_stand_in, 'bf16': 'bf16'}\n"
        "    assert table['bf16'] == 'bf16'\n"
        "def test_sees_no_stand_in():\n"
        "    assert not hasattr(os, 'float8_stand_in')\n")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "triton_metal.pytest_plugin",
                        "-p", "no:cacheprovider", "--triton-metal-skips", "skips.txt",
                        "test_names.py"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=300, env=dict(os.environ, PYTHONPATH=package_root))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "2 passed" in r.stdout


def test_the_shipped_list_parses():
    entries = pytest_plugin.read_skip_list(os.path.join(os.path.dirname(pytest_plugin.__file__), "test_skips.txt"))
    assert any(r.startswith("Apple GPUs have no float64") for _, r in entries)
