"""The layers as docs/architecture.md draws them are the layers of the tree: its table names every package (and
top-level module) once, in order, and no module imports one that sits above its own at module level. A lazy
import inside a function is a deliberate seam and is not counted; neither is an `if TYPE_CHECKING:` block."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "src" / "open_agent_compiler"
ARCHITECTURE = REPO / "docs" / "architecture.md"


def documented_layers() -> list[list[str]]:
    """The table's rows, top to bottom: each row's packages, e.g. ['fsio', 'usercode'] (one layer)."""
    rows = []
    for line in ARCHITECTURE.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) >= 3 and cells[0].isdigit():
            rows.append(re.findall(r"`open_agent_compiler\.([a-z_]+)`", cells[1]))
    return rows


def layer_of() -> dict[str, int]:
    return {name: n for n, row in enumerate(documented_layers()) for name in row}


def top_level_parts() -> set[str]:
    parts = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    parts |= {p.stem for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "__main__")}
    return parts


def module_level_imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.dump(node.test):
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return {name for name in found if name.startswith("open_agent_compiler.")}


def climbs(layers: dict[str, int]) -> list[str]:
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[0] in ("__init__", "__main__"):
            continue  # the package's front door re-exports lazily and runs the CLI: above every layer
        own = layers[parts[0]]
        for target in module_level_imports(path):
            part = target.split(".")[1]
            if part in layers and layers[part] > own:
                wrong.append(f"{'/'.join(parts)} imports {target} (layer {layers[part]} above {own})")
    return sorted(set(wrong))


def test_the_table_names_every_package_once() -> None:
    named = [name for row in documented_layers() for name in row]
    assert len(named) == len(set(named)), named
    assert set(named) == top_level_parts()


def test_no_module_imports_a_layer_above_its_own() -> None:
    assert climbs(layer_of()) == []


def test_the_guard_sees_a_climb() -> None:
    """Swap two layers that import each other in one direction: the guard must report it."""
    layers = layer_of()
    layers["model"], layers["compiler"] = layers["compiler"], layers["model"]
    assert any(line.startswith("compiler/") and "open_agent_compiler.model" in line for line in climbs(layers))
