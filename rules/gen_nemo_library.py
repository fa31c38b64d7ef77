#!/usr/bin/env python3
"""Writes rules/nemo_library.toml: what NeMo Guardrails itself provides that a rulebook may name.

Usage, in a virtual environment with `pip install nemoguardrails==0.24.1` (not a shared venv):

    python rules/gen_nemo_library.py --corpus ../shared/corpus/colang > rules/nemo_library.toml

- actions: every action NeMo's runtime registers for a configuration that defines none of its
  own (`LLMRails(config).runtime.action_dispatcher.registered_actions`, for a Colang 1.0 and a
  2.x configuration with no models): the library's `actions.py` files, `nemoguardrails/actions`
  and the LLM generation actions.
- umim_actions: the UMIM actions NeMo's own Python and Colang name (`...BotAction`,
  `...UserAction`, `...SceneAction`, `...CameraAction`); a 2.x `await` of one is sent to the
  interaction system, not to Python.
- flows_1 / flows_2: the flows NeMo's own Colang files define (the corpus's
  `pkg__library__*`, `pkg__rails__llm__*` and `pkg__colang__v2_x__library__*` files, as NeMo's
  parsers read them in `expected/`).
"""
import argparse, glob, json, os, re, sys, tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--corpus", required=True)
a = ap.parse_args()

import nemoguardrails
from nemoguardrails import LLMRails, RailsConfig

actions = set()
with tempfile.TemporaryDirectory() as tmp:
    for v, header, body in [
        ("1", "", "define flow x\n  user hi\n  bot hi\n"),
        ("2", 'colang_version: "2.x"\n', 'import core\nflow main\n  await user said "hi"\n'),
    ]:
        d = os.path.join(tmp, v)
        os.makedirs(d)
        open(os.path.join(d, "config.yml"), "w").write(header + "models: []\n")
        open(os.path.join(d, "rails.co"), "w").write(body)
        rails = LLMRails(RailsConfig.from_path(d))
        actions |= set(rails.runtime.action_dispatcher.registered_actions)

umim = set()
root = os.path.dirname(nemoguardrails.__file__)
pat = re.compile(r"\b(?:Start|Stop|Change)?([A-Z][A-Za-z]+(?:Bot|User|Scene|Camera)Action)\b")
for path in glob.glob(os.path.join(root, "**", "*.*"), recursive=True):
    if not path.endswith((".py", ".co")):
        continue
    for m in pat.finditer(open(path, encoding="utf-8", errors="replace").read()):
        umim.add(m.group(1))
umim -= {n for n in umim if n in actions}
umim = {n for n in umim if not n.startswith(("Generate", "CallFiddler"))}

flows = {"1.0": set(), "2.x": set()}
for f in glob.glob(os.path.join(a.corpus, "expected", "*.json")):
    stem = os.path.basename(f)
    if not stem.startswith(("pkg__library__", "pkg__rails__llm", "pkg__colang__v2_x__library")):
        continue
    d = json.load(open(f))
    if d.get("ok"):
        flows[d["colang_version"]] |= {fl["name"] for fl in d.get("flows", [])}


def arr(name, items):
    body = "".join(f"  {json.dumps(x)},\n" for x in sorted(items))
    return f"{name} = [\n{body}]\n"


v = nemoguardrails.__version__
print(f"""# What NeMo Guardrails {v} itself provides that a rulebook may name (QG010, rules/QG010.toml):
# an `execute` (2.x `await XAction`) of a name that is no catalogue tool, none of `actions` or
# `umim_actions` and no `@action` of the configuration's own actions.py is a dead action; a flow
# called or listed as a rail that no rulebook file defines and that is none of `flows_1` (Colang
# 1.0) or `flows_2` (2.x) is an undefined flow. Written by rules/gen_nemo_library.py (see its
# docstring for where each list comes from); regenerate it, do not edit it by hand.
version = {json.dumps(v)}
""")
print(arr("actions", actions))
print(arr("umim_actions", umim))
print(arr("flows_1", flows["1.0"]))
print(arr("flows_2", flows["2.x"]), end="")
