"""Issue 30: an export is reproducible. Teams commit their exports and diff them in pull requests, so
the same application must give the same JSON whatever Python's string hashing (PYTHONHASHSEED) is:
no set or other hash-ordered collection may decide the order of anything written (a step node's
`tools`, `tool_locations`, hand-off destinations, warnings, catalogue entries).

The test exports the suite's applications (tests/lg_apps, tests/oa_apps, tests/agents/inner_apps and
the graphs of tests/graphs.py: each compiled graph and `Agent` a module defines, with its catalogue)
in two subprocesses under two hash seeds, and asserts the two outputs are identical (but for a graph a
library itself builds in set order: LIBRARY_ORDERED). Run as a script
(`python test_reproducible.py`), this file prints those exports as JSON."""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PYTHON_DIR = HERE.parent
#: The packages whose modules are exported (every compiled graph and Agent each module defines).
PACKAGES = ("lg_apps", "oa_apps", "inner_apps")  # inner_apps: in tests/agents
#: Modules whose zero-argument `build_*` functions return the graphs other tests export.
BUILDERS = ("graphs",)
SEEDS = ("1", "2")


def _modules() -> list[str]:
    out = []
    for pkg in PACKAGES:
        mod = importlib.import_module(pkg)
        for info in pkgutil.walk_packages(mod.__path__, pkg + "."):
            if not info.name.rsplit(".", 1)[-1].startswith("_"):
                out.append(info.name)
    return sorted(out)


def _exports() -> dict[str, object]:
    """Every export of the applications, by `module:attribute` (an error's text where one fails, so a
    seed-dependent failure shows too)."""
    from stalwart_export.catalogue import export_catalogue
    from stalwart_export.langgraph.graph import export_graph, is_graph
    from stalwart_export.openai_agents import export_agent, export_agent_catalogue, is_agent

    def both(obj: object, where: str) -> object:
        try:
            if is_agent(obj):
                return [export_agent(obj, base=str(HERE)), export_agent_catalogue(obj, with_warnings=True)]
            return [export_graph(obj, base=str(HERE)), export_catalogue(obj, with_warnings=True)]
        except Exception as e:  # noqa: BLE001 - recorded, compared across seeds
            return f"{where}: {type(e).__name__}: {e}"

    out: dict[str, object] = {}
    done: set[int] = set()  # an application one module imports from another is exported once
    for name in _modules():
        try:
            mod = importlib.import_module(name)
        except Exception as e:  # noqa: BLE001 - an app the environment cannot import
            out[name] = f"import: {type(e).__name__}"
            continue
        for attr, obj in list(vars(mod).items()):
            if (is_graph(obj) or is_agent(obj)) and id(obj) not in done:
                done.add(id(obj))
                out[f"{name}:{attr}"] = both(obj, f"{name}:{attr}")
    for name in BUILDERS:
        mod = importlib.import_module(name)
        for attr, fn in list(vars(mod).items()):
            if attr.startswith("build_") and callable(fn) and getattr(fn, "__module__", None) == name:
                built = fn()  # (the graph, its input, ...) or the graph
                out[f"{name}:{attr}()"] = both(built[0] if isinstance(built, tuple) else built, f"{name}:{attr}")
    return out


def _run(seed: str) -> str:
    env = dict(os.environ, PYTHONHASHSEED=seed,
               PYTHONPATH=os.pathsep.join([str(PYTHON_DIR), str(HERE), str(HERE / "agents"),
                                           os.environ.get("PYTHONPATH", "")]))
    p = subprocess.run([sys.executable, str(Path(__file__).resolve())], env=env, cwd=HERE, capture_output=True,
                       text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    return p.stdout


#: Exports whose graph object itself is built in hash order by the library: langgraph-supervisor
#: 0.0.31's `create_supervisor` collects the agents' names in a `set` (`agent_names`) and makes the
#: supervisor's hand-off tools and its `add_node(destinations=...)` from it, so the compiled graph
#: differs between seeds before the exporter reads it.
LIBRARY_ORDERED = ("graphs:build_supervisor()",)


@pytest.fixture(scope="module")
def exports() -> list[dict]:
    """The exports under each of SEEDS, by `module:attribute`."""
    return [json.loads(_run(seed)) for seed in SEEDS]


def test_exports_do_not_depend_on_the_hash_seed(exports):
    first, second = exports
    # the exports are real: graphs and agents of each package, most exported without an error
    assert any(k.startswith("lg_apps.") for k in first) and any(k.startswith("oa_apps.") for k in first)
    assert any(k.startswith("inner_apps.") for k in first) and "graphs:build_swarm()" in first
    assert sum(isinstance(v, list) for v in first.values()) >= 60, sorted(first)
    assert sorted(first) == sorted(second)
    differ = [k for k in first if k not in LIBRARY_ORDERED
              and json.dumps(first[k], indent=1) != json.dumps(second[k], indent=1)]
    assert not differ, f"exports that differ between PYTHONHASHSEED={SEEDS[0]} and {SEEDS[1]}: {differ}"


@pytest.mark.xfail(strict=True, reason="langgraph-supervisor builds the supervisor in the order of a set (see "
                                       "LIBRARY_ORDERED); an XPASS means it no longer does: drop the exception")
def test_a_supervisor_is_built_in_the_library_set_order(exports):
    first, second = exports
    assert all(json.dumps(first[k]) == json.dumps(second[k]) for k in LIBRARY_ORDERED)


if __name__ == "__main__":
    real, sys.stdout = sys.stdout, sys.stderr  # what the applications print is not the exports
    real.write(json.dumps(_exports(), indent=1, default=repr) + "\n")
