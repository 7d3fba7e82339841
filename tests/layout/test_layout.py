"""The house's rules, read from the source with ``ast`` (docs/guide/layout.md draws the house):
every room holds one kind of thing, imports flow one way, and no module or page grows past
its size.

An import counts wherever it is written (at the top, in a function, under ``TYPE_CHECKING``).
``from P import x`` imports ``P`` (a package's ``__init__``) and, where ``x`` is a module,
``P.x`` as well; ``import P.Q`` imports ``P.Q``.
"""

import ast
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MOST_LINES = 800
#: The floor of each room (docs/guide/layout.md): a module may import modules on its floor or
#: below, never above. The longest prefix of a module's name gives its room.
FLOORS = {
    "bayesvm.linalg": 0,
    "bayesvm.exceptions": 0,
    "bayesvm._convergence_warning": 0,
    "bayesvm.files": 0,
    "bayesvm.version": 0,
    "bayesvm.moved": 0,
    "bayesvm._arviz": 0,
    "bayesvm._blas": 0,
    "bayesvm.compiled_special": 0,
    "bayesvm.interrupts": 0,
    "bayesvm.data": 0,
    "bayesvm.blocks": 1,
    "bayesvm.models": 2,
    "bayesvm.moments": 3,
    "bayesvm.fit_file": 3,
    "bayesvm.results": 3,
    "bayesvm.persistence": 3,
    "bayesvm.drivers": 3,
    "bayesvm.registry": 3,
    "bayesvm.catalogue": 3,
    "bayesvm.formula": 3,
    "bayesvm.method_comparison": 3,
    "bayesvm.model_comparison": 3,
    "bayesvm.calibration": 3,
    "bayesvm.sbc": 3,
    "bayesvm.estimator": 3,
    "bayesvm.system_info": 3,
    "bayesvm.checks": 4,
    "bayesvm.samplers": 5,
    "bayesvm.vb": 5,
    "bayesvm": 6,
    "bayesvm.cli": 7,
    "bayesvm.fit_command": 7,
    "bayesvm.command_line": 7,
    "bayesvm.bench": 7,
    "bayesvm.case_studies": 7,
}
README_MOST_LINES = 300
#: What the blocks may not import: the rooms above them (blocks import shared numerics only).
ABOVE_BLOCKS = (
    "bayesvm.models",
    "bayesvm.samplers",
    "bayesvm.vb",
    "bayesvm.case_studies",
    "bayesvm.bench",
    "bayesvm.results",
    "bayesvm.registry",
    "bayesvm.drivers",
)


def library_modules() -> dict[str, Path]:
    """Every module of the installed packages (pyproject's ``package-dir``) by dotted name."""
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = settings["package-dir"]
    modules = {}
    for package in settings["packages"]:
        parts = package.split(".")
        mapped = max(i for i in range(1, len(parts) + 1) if ".".join(parts[:i]) in folders)
        folder = ROOT / folders[".".join(parts[:mapped])] / Path(*parts[mapped:])
        for path in folder.glob("*.py"):
            name = package if path.stem == "__init__" else f"{package}.{path.stem}"
            modules[name] = path
    return modules


MODULES = library_modules()


def _module_of(name: str) -> str | None:
    """The library module that importing ``name`` runs (its longest known prefix)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str) -> set[str]:
    """The library modules ``module`` imports, by the rules of this module's docstring."""
    path = MODULES[module]
    package = module if path.stem == "__init__" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(_module_of(alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1]
            source = ".".join([*base, node.module or ""]) if node.level else node.module
            source = source.rstrip(".")
            found.add(_module_of(source))
            found.update(
                f"{source}.{alias.name}"
                for alias in node.names
                if f"{source}.{alias.name}" in MODULES
            )
    return found - {None, module}


GRAPH = {module: imports_of(module) for module in MODULES}


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in graph[module]:
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while not component or component[-1] != module:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in graph:
        if module not in index:
            visit(module)
    return cycles


def test_the_reader_finds_every_room_and_the_imports_between_them():
    """The rules below see the whole library: each room's modules, and a known edge of each
    kind (top-level, function-local, ``from P import x`` of a module)."""
    rooms = {name.split(".")[1] for name in MODULES if name.count(".") >= 1}
    assert {"blocks", "models", "samplers", "vb", "case_studies", "data", "bench"} <= rooms
    assert "bayesvm.blocks.base" in GRAPH["bayesvm.blocks.coefficients"]
    assert "bayesvm.fit_file" in GRAPH["bayesvm.results"]  # imported inside Fit.to_netcdf
    assert "bayesvm.version" in GRAPH["bayesvm"]


def test_cycles_are_found_where_they_are():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert import_cycles(graph) == [["a", "b", "c"]]
    assert import_cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_among_the_library_modules():
    assert import_cycles(GRAPH) == []


def floor_of(module: str) -> int:
    """The floor of ``module``'s room in :data:`FLOORS` (KeyError for a module in no room)."""
    prefix = module
    while prefix not in FLOORS or (prefix == "bayesvm" != module):
        prefix = prefix.rpartition(".")[0]
        if not prefix:
            raise KeyError(f"{module} is in no room of FLOORS (nor of docs/guide/layout.md)")
    return FLOORS[prefix]


def test_imports_flow_down_the_floors():
    upward = sorted(
        (module, imported)
        for module, imported_modules in GRAPH.items()
        for imported in imported_modules
        if floor_of(imported) > floor_of(module)
    )
    assert upward == []


def test_blocks_import_nothing_above_them():
    upward = {
        (module, imported)
        for module, imported_modules in GRAPH.items()
        if module.startswith("bayesvm.blocks")
        for imported in imported_modules
        if imported.startswith(ABOVE_BLOCKS)
    }
    assert upward == set()


def test_the_two_driver_families_import_nothing_of_each_other():
    """VB and the samplers share their checks from the floor below (``bayesvm.checks``) and
    reach each other's backends through the registry only.
    """
    families = ("bayesvm.vb", "bayesvm.samplers")
    crossing = sorted(
        (module, imported)
        for module, imported_modules in GRAPH.items()
        for imported in imported_modules
        for family, other in (families, families[::-1])
        if module.startswith(family) and imported.startswith(other)
    )
    assert crossing == []


def test_no_module_is_named_like_a_public_name_of_the_package():
    """Importing ``bayesvm.x`` binds the module ``x`` on the package, over a public ``x``."""
    tree = ast.parse((ROOT / "bayesvm" / "__init__.py").read_text())
    public = next(
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and node.targets[0].id == "__all__"
    )
    assert sorted(set(public) & {name.split(".")[1] for name in MODULES if "." in name}) == []


def test_nothing_points_outside_the_repository():
    """The design the code and the docs refer to is in the repository (docs/guide/design.md)."""
    sources = [*MODULES.values()] + [*ROOT.glob("*.md"), *ROOT.glob("*.toml")]
    pages = [path for path in (ROOT / "docs").rglob("*.md") if "_build" not in path.parts]
    pointing = [
        str(path.relative_to(ROOT))
        for path in sources + pages
        if any(outside in path.read_text() for outside in ("../shared", "ARCHITECTURE"))
    ]
    assert pointing == []


#: Packages that cost start-up time (``import bayesvm`` and ``bayesvm --help`` load none of them,
#: tests/front_door/test_startup.py): a function may import them where it needs them.
STARTUP_COSTLY = (
    "pymc",
    "pytensor",
    "arviz",
    "xarray",
    "matplotlib",
    "scipy",
    "sklearn",
    "pandas",
    "formulae",
    "numba",
    "dask",
    "distributed",
    "nutpie",
    "bayesvm._arviz",
)


def unexplained_local_imports(path: Path) -> list[str]:
    """The function-local imports in ``path`` of anything but :data:`STARTUP_COSTLY` that no
    comment explains (``imported here: ...``, on or just above a run of imports).
    """
    lines = path.read_text().splitlines()
    found = []
    for body in _function_bodies(ast.parse("\n".join(lines))):
        for run in _import_runs(body):
            first = run[0].lineno - 1
            while first > 0 and lines[first - 1].strip().startswith("#"):
                first -= 1
            if any("imported here" in line for line in lines[first : run[-1].end_lineno]):
                continue
            for statement in run:
                names = (
                    [statement.module or ""]
                    if isinstance(statement, ast.ImportFrom)
                    else [alias.name for alias in statement.names]
                )
                for name in names:
                    if not name.startswith(STARTUP_COSTLY):
                        found.append(f"{path.relative_to(ROOT)}:{statement.lineno} {name}")
    return found


def _import_runs(body: list) -> list[list]:
    """The runs of consecutive import statements in the statement list ``body``."""
    runs: list[list] = [[]]
    for statement in body:
        if isinstance(statement, ast.Import | ast.ImportFrom):
            runs[-1].append(statement)
        elif runs[-1]:
            runs.append([])
    return [run for run in runs if run]


def _function_bodies(tree) -> list[list]:
    """Every statement list inside a function of ``tree`` (its body, and those of its ifs,
    loops, ``try`` blocks and nested functions), each once.
    """
    bodies = {}
    for function in ast.walk(tree):
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(function):
                for field in ("body", "orelse", "finalbody"):
                    value = getattr(node, field, None)
                    if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                        bodies[id(value)] = value
    return list(bodies.values())


def test_a_function_imports_locally_only_what_costs_start_up_time_or_says_why():
    """Local imports hide a module's dependencies; they are kept for start-up time (the
    packages of :data:`STARTUP_COSTLY`, and the library's modules that load them, with a
    comment saying so) and nowhere else (docs/guide/layout.md).
    """
    assert [found for path in MODULES.values() for found in unexplained_local_imports(path)] == []


def test_the_front_door_holds_no_benchmark():
    assert [path.name for path in (ROOT / "bayesvm").glob("bench*.py")] == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_is_longer_than_the_limit(module):
    lines = len(MODULES[module].read_text().splitlines())
    assert lines <= MOST_LINES, f"{MODULES[module].relative_to(ROOT)} has {lines} lines"


def test_the_readme_is_a_front_page():
    assert len((ROOT / "README.md").read_text().splitlines()) <= README_MOST_LINES


def test_tests_live_in_rooms_named_like_the_packages():
    assert sorted(path.name for path in (ROOT / "tests").glob("test_*.py")) == []
