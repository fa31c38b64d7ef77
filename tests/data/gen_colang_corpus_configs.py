#!/usr/bin/env python3
"""Writes tests/data/colang_corpus_configs.tsv: for each file of the Colang corpus
(../shared/corpus/colang), the NeMo Guardrails configuration it came from and the actions that
configuration defines in Python, which the corpus does not carry.

Usage: python tests/data/gen_colang_corpus_configs.py CORPUS WHEEL_ROOT SDIST_ROOT > tests/data/colang_corpus_configs.tsv
  CORPUS      ../shared/corpus/colang
  WHEEL_ROOT  site-packages of a venv with nemoguardrails==0.24.1 (holds nemoguardrails/)
  SDIST_ROOT  the unpacked nemoguardrails-0.17.0 source distribution

A file's configuration is the nearest folder above it holding a .yml/.yaml file (a config.yml,
or another YAML file RailsConfig.from_path reads; NeMo reads every .co file under it together),
else the file's own folder. Its actions: functions and
classes decorated @action (their name=, else their own name) in actions.py and actions/**.py of
that folder, and names given to register_action(..., name="x") / register_action(f, "x") or
register_action(f) (the function's name) in its config.py.
"""
import ast, csv, os, sys

corpus, wheel, sdist = sys.argv[1:4]


def root_of(base, rel):
    d = os.path.dirname(os.path.join(base, rel))
    while True:
        if d != base.rstrip("/") and os.path.isdir(d) and any(n.endswith((".yml", ".yaml")) for n in os.listdir(d)):
            return d
        parent = os.path.dirname(d)
        if len(parent) < len(base) or parent == d:
            return os.path.dirname(os.path.join(base, rel))
        d = parent


def actions_in(path):
    names = []
    try:
        tree = ast.parse(open(path, encoding="utf-8").read())
    except (SyntaxError, UnicodeDecodeError):
        return names
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for d in node.decorator_list:
                f = d.func if isinstance(d, ast.Call) else d
                n = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
                if n != "action":
                    continue
                name = node.name
                if isinstance(d, ast.Call):
                    for k in d.keywords:
                        if k.arg == "name" and isinstance(k.value, ast.Constant):
                            name = k.value.value
                names.append(name)
    return names


def registered(path):
    names = []
    try:
        tree = ast.parse(open(path, encoding="utf-8").read())
    except (SyntaxError, UnicodeDecodeError):
        return names
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "register_action":
            name = None
            for k in node.keywords:
                if k.arg == "name" and isinstance(k.value, ast.Constant):
                    name = k.value.value
            if name is None and len(node.args) > 1 and isinstance(node.args[1], ast.Constant):
                name = node.args[1].value
            if name is None and node.args:
                a = node.args[0]
                name = getattr(a, "id", None) or getattr(a, "attr", None)
            if name:
                names.append(name)
    return names


def config_actions(root):
    names = []
    p = os.path.join(root, "actions.py")
    if os.path.isfile(p):
        names += actions_in(p)
    for d, _, files in sorted(os.walk(os.path.join(root, "actions"))):
        for f in sorted(files):
            if f.endswith(".py"):
                names += actions_in(os.path.join(d, f))
    p = os.path.join(root, "config.py")
    if os.path.isfile(p):
        names += registered(p)
    return sorted(set(names))


w = csv.writer(sys.stdout, delimiter="\t", lineterminator="\n")
w.writerow(["file", "config", "python_actions"])
rows = list(csv.DictReader(open(os.path.join(corpus, "MANIFEST.tsv")), delimiter="\t"))
for r in sorted(rows, key=lambda r: r["file"]):
    origin = r["origin"].split(",")[0]
    kind, _, rel = origin.split(":", 2)
    base = sdist if kind == "pypi-sdist" else wheel
    root = root_of(base, rel)
    config = ("sdist:" if kind == "pypi-sdist" else "wheel:") + os.path.relpath(root, base)
    w.writerow([r["file"], config, ",".join(config_actions(root))])
