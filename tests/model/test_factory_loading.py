"""`load_registry`: every way a factory spec can fail is one line naming the spec."""

import itertools
from pathlib import Path

import pytest

from open_agent_compiler.errors import FactoryError
from open_agent_compiler.model.factory import load_registry
from open_agent_compiler.model.registry import AgentRegistry

_counter = itertools.count()


def module(tmp_path: Path, source: str) -> str:
    name = f"oac_factory_case_{next(_counter)}"
    (tmp_path / f"{name}.py").write_text(source)
    return name


@pytest.mark.parametrize(
    ("source", "attr", "message"),
    [
        (None, "registry", "no module {module!r} importable from"),
        ("x = 1\n", "registry", "module {module!r} has no attribute 'registry'"),
        ("registry = 42\n", "registry", "'registry' is not callable"),
        ("def registry():\n    return {}\n", "registry", "returned dict, not an AgentRegistry"),
        ("def registry():\n    raise RuntimeError('db down')\n", "registry", "raised RuntimeError: db down"),
        ("import not_a_real_dependency_xyz\n", "registry", "importing {module!r} failed: ModuleNotFoundError"),
        ("def registry(:\n", "registry", "importing {module!r} failed: SyntaxError"),
        ("from open_agent_compiler.model.registry import AgentRegistry\n"
         "def registry():\n    r = AgentRegistry()\n    r.register_agent('a/b', None)\n",
         "registry", "failed: unsafe agent name 'a/b'"),
    ],
)
def test_factory_failures_are_one_line(source: str | None, attr: str, message: str, tmp_path: Path) -> None:
    name = module(tmp_path, source) if source is not None else f"oac_missing_{next(_counter)}"
    spec = f"{name}:{attr}"
    with pytest.raises(FactoryError) as exc:
        load_registry(spec, str(tmp_path))
    text = str(exc.value)
    assert "\n" not in text and text.startswith(f"factory {spec!r}")
    assert message.format(module=name) in text


@pytest.mark.parametrize("spec", ["agents", "agents:", ":registry", ""])
def test_malformed_spec(spec: str) -> None:
    with pytest.raises(FactoryError, match="must look like 'module:callable'"):
        load_registry(spec)


def test_a_registry_instance_or_factory_both_work(tmp_path: Path) -> None:
    source = ("from open_agent_compiler.model.registry import AgentRegistry\n"
              "REG = AgentRegistry()\n"
              "def make():\n    return REG\n")
    name = module(tmp_path, source)
    assert isinstance(load_registry(f"{name}:make", str(tmp_path)), AgentRegistry)
    assert load_registry(f"{name}:REG", str(tmp_path)) is load_registry(f"{name}:make", str(tmp_path))


def test_two_projects_with_the_same_module_name_each_get_their_own(tmp_path) -> None:
    from open_agent_compiler.model.factory import load_registry

    roots = []
    for name in ("one", "two"):
        root = tmp_path / name
        root.mkdir()
        (root / "samename.py").write_text(
            "from open_agent_compiler.model.registry import AgentRegistry\n"
            f"def registry():\n    reg = AgentRegistry()\n    reg.origin = {name!r}\n    return reg\n"
        )
        roots.append(root)
    for _ in range(2):  # alternate, so each root is already on sys.path the second time
        for root in roots:
            assert load_registry("samename:registry", str(root)).origin == root.name
