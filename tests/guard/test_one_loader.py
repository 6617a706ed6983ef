"""No code path imports user code except the one loader (`usercode`): a new path cannot bypass it."""

import re
from pathlib import Path

import pytest

from open_agent_compiler.errors import FactoryError
from open_agent_compiler.usercode import loader

SRC = Path(__file__).resolve().parents[2] / "src" / "open_agent_compiler"
IMPORTING = re.compile(r"\bimport_module\s*\(|\.exec_module\s*\(|spec_from_file_location\s*\(|__import__\b|"
                       r"\bexec\s*\(|importlib\.util\.find_spec\s*\(")
# (file, why) — code that imports only modules of this package, never user code
OWN_MODULES_ONLY = {
    "testing/invokers/harness/__init__.py": "imports the built-in harness session classes (open_agent_compiler.*)",
    "cli/__init__.py": "imports a command's module when it runs (cli.COMMANDS, open_agent_compiler.cli.*)",
    "tasks/__init__.py": "imports its own submodules on first use of a name (open_agent_compiler.tasks.*)",
    "__init__.py": "imports the module of a public name on first use (open_agent_compiler.*)",
    "testing/__init__.py": "imports its own submodules on first use of a name (open_agent_compiler.testing.*)",
    "testing/moved.py": "imports the new home of a moved module path, from its fixed MOVED table (ours only)",
}


def test_nothing_outside_the_loader_imports_user_code() -> None:
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        relative = path.relative_to(SRC).as_posix()
        if relative.startswith("usercode/") or relative in OWN_MODULES_ONLY:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if IMPORTING.search(line.split("#", 1)[0]) and "open_agent_compiler.execution.handler_child" not in line:
                offenders.append(f"{relative}:{number}: {line.strip()}")
    assert not offenders, "import user code through open_agent_compiler.usercode.loader:\n" + "\n".join(offenders)


def test_the_allowed_own_module_import_only_names_this_package() -> None:
    from open_agent_compiler.cli import COMMANDS

    text = (SRC / "testing/invokers/harness/__init__.py").read_text()
    assert re.findall(r"import_module\((.*?)\)", text) == ['f"{__name__}.{module}"']
    assert re.findall(r"import_module\((.*?)\)", (SRC / "cli/__init__.py").read_text()) == ["module"]
    for lazy in ("tasks/__init__.py", "testing/__init__.py"):
        assert re.findall(r"import_module\((.*?)\)", (SRC / lazy).read_text()) == ['f"{__name__}.{_EXPORTS[name]}"']
    assert re.findall(r"import_module\((.*?)\)", (SRC / "__init__.py").read_text()) == ['f"{__name__}.{module}"']
    assert all(module.startswith("open_agent_compiler.cli.") for module, _ in COMMANDS.values())


@pytest.mark.parametrize("spec", ["sys:exit", "os:_exit", "builtins:print", "json:dumps", "subprocess:run"])
def test_specs_outside_the_project_that_are_not_factories_are_refused(tmp_path: Path, spec: str) -> None:
    with pytest.raises(loader.UserCodeError, match=rf"^judge factory {re.escape(repr(spec))}: .* is a built-in"):
        loader.load(spec, tmp_path, "judge factory")


@pytest.mark.parametrize(("body", "said"), [
    ("import sys\nsys.exit(4)\n", "importing 'exits' called sys.exit(4)"),
    ("raise KeyError('k')\n", "importing 'exits' failed: KeyError: 'k'"),
    ("class Boom(BaseException):\n    pass\nraise Boom('b')\n", "importing 'exits' raised Boom: b"),
])
def test_import_time_exits_are_one_line(tmp_path: Path, body: str, said: str) -> None:
    (tmp_path / "exits.py").write_text(body + "def make():\n    return 1\n")
    with pytest.raises(FactoryError) as caught:
        loader.load("exits:make", tmp_path, "factory", error=FactoryError)
    assert str(caught.value) == f"factory 'exits:make': {said}"


def test_call_time_exit_is_one_line_and_ctrl_c_is_not_caught(tmp_path: Path) -> None:
    (tmp_path / "calls.py").write_text("import sys\ndef bye():\n    sys.exit(5)\ndef stop():\n    raise KeyboardInterrupt\n")
    with pytest.raises(loader.UserCodeError, match=r"^invoker factory 'calls:bye' called sys.exit\(5\)$"):
        loader.load_factory("calls:bye", tmp_path, "invoker factory", lambda made: True, "")
    with pytest.raises(KeyboardInterrupt):
        loader.load_factory("calls:stop", tmp_path, "invoker factory", lambda made: True, "")


def test_the_load_lists_every_project_file_it_ran_or_read(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "table.txt").write_text("7")
    (tmp_path / "helper_mod.py").write_text("from pathlib import Path\nVALUE = Path('data/table.txt').read_text()\n")
    (tmp_path / "top_mod.py").write_text("import os\nimport helper_mod\nNAMES = os.listdir('data')\n"
                                         "def make():\n    return helper_mod.VALUE\n")
    import os
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        loaded = loader.load("top_mod:make", tmp_path, "script")
    finally:
        os.chdir(here)
    root = str(tmp_path.resolve())
    assert sorted(loaded.files) == sorted([f"{root}/top_mod.py", f"{root}/helper_mod.py", f"{root}/data/table.txt",
                                           f"{root}/data/"])
    again = loader.load("helper_mod:VALUE", tmp_path, "script")  # imported before: its recorded read still counts
    assert sorted(again.files) == sorted([f"{root}/helper_mod.py", f"{root}/data/table.txt"])
    before = loaded.digest()
    (tmp_path / "data" / "table.txt").write_text("8")
    assert loaded.digest() != before
    (tmp_path / "data" / "new.txt").write_text("")
    changed = loaded.digest()
    assert changed != before
    (tmp_path / "helper_mod.py").write_text("VALUE = 9\n")
    assert loaded.digest() != changed


def test_a_submodule_load_lists_its_packages_init_also_when_imported_before(tmp_path: Path) -> None:
    """Importing `pkg.sub` runs `pkg/__init__.py`: an edit there must change the key, also on the second load."""
    (tmp_path / "pkg_one").mkdir()
    (tmp_path / "pkg_one" / "__init__.py").write_text("SCALE = 2\n")
    (tmp_path / "pkg_one" / "sub.py").write_text("def make():\n    return 1\n")
    root = str(tmp_path.resolve())
    wanted = sorted([f"{root}/pkg_one/__init__.py", f"{root}/pkg_one/sub.py"])
    assert sorted(loader.load("pkg_one.sub:make", tmp_path, "script").files) == wanted
    assert sorted(loader.load("pkg_one.sub:make", tmp_path, "script").files) == wanted  # from sys.modules now


@pytest.mark.parametrize("mode", ["r", "rb", "r+", "rb+", "w+", "a+"])
def test_a_file_opened_for_reading_is_recorded_whatever_else_the_mode_allows(tmp_path: Path, mode: str) -> None:
    from open_agent_compiler.usercode import reads

    reads.set_root(tmp_path)
    data = tmp_path / "data.txt"
    data.write_text("x")
    with reads.recording() as read:
        with open(data, mode):
            pass
    assert read == {f"read:{data.resolve()}"}
    with reads.recording() as written:
        with open(tmp_path / "out.txt", "w"):
            pass
    assert written == set()


def test_what_user_code_reads_when_called_joins_the_load(tmp_path: Path) -> None:
    """A factory reading its prompt only when called (not at import): the prompt is one of the load's files."""
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "system.md").write_text("be brief")
    (tmp_path / "call_reader.py").write_text(
        "from pathlib import Path\n\ndef make():\n    return Path(__file__).parent.joinpath('prompts/system.md')"
        ".read_text()\n")
    loaded = loader.load("call_reader:make", tmp_path, "script")
    root = str(tmp_path.resolve())
    assert loaded.files == (f"{root}/call_reader.py",)
    assert loader.call(loaded, "call_reader:make", "script") == "be brief"
    assert sorted(loaded.files) == [f"{root}/call_reader.py", f"{root}/prompts/system.md"]
    before = loaded.digest()
    (tmp_path / "prompts" / "system.md").write_text("be verbose")
    assert loaded.digest() != before
