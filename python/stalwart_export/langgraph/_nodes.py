"""One node of a graph's export (SPEC 2.2): its kind (`subgraph`, `tools`/`tools_plain`, `model`,
`step`), what it runs, and what its code does that a plain reading misses (`_unseen.py`, agents
built inside it, `_inner_export.py`, chains, `_chain_node.py`): opaque entries, never dropped."""

from __future__ import annotations

import ast
from typing import Any

from .. import _code, _hosted, _sources, _words
from ..catalogue import HANDOFF_KEY
from . import _chain_node, _chains, _fallbacks, _guarded, _inner_export, _unseen
from ._models import bound_tool_lists, is_middleware, one_call_a_message


class NodeReading:
    """The nodes of a `GraphExport` (a part of it: `self` is the walk)."""

    def node(self, name: str, spec: Any) -> dict:
        """Node `name` as the export writes it: what its runnable is (`node_of`), then what its
        `with_fallbacks` wrappers can run instead (`fallbacks`)."""
        node = self.node_of(name, spec)
        layers = _fallbacks.layers(spec.runnable)
        if layers:
            self.fallbacks(name, node, layers)
        return node

    def node_of(self, name: str, spec: Any) -> dict:
        from langgraph.pregel import Pregel

        qid = self.qid(name)
        runnable, wrappers, fallbacks = _code.unwrap_runnable(spec.runnable)
        self._inner[name] = runnable
        fn = _code.unwrap_callable(runnable)
        node: dict[str, Any] = {"id": qid}
        prov: dict[str, Any] = {"runnable": _code.qualname(runnable)}
        if wrappers:
            prov["wrappers"] = wrappers
        if fallbacks:
            prov["fallbacks"] = [_code.qualname(_code.unwrap_callable(f) or f) for f in fallbacks]
        if fn is not None:
            prov["func"] = _code.qualname(fn)

        # subgraph
        sub = None
        direct = isinstance(runnable, Pregel)
        if direct:
            sub = runnable
        else:
            pnode = getattr(self.compiled, "nodes", {}).get(name)
            subs = list(getattr(pnode, "subgraphs", None) or [])
            if subs:
                sub = subs[0]
                if len(subs) > 1:
                    self.ex.warn(self.label(f"node {name!r} runs {len(subs)} subgraphs; only the first is exported"))
            elif fn is not None:
                found = [o for _, o in _code.referenced_objects(fn, depth=2) if isinstance(o, Pregel)]
                # the teams tutorial's functools.partial(agent_node, agent=<compiled agent>, name=...)
                found += [o for o in _chains.partial_runnables(runnable).values() if isinstance(o, Pregel)]
                if found:
                    sub = found[0]
        if sub is not None:
            where = f"subgraph '{self.parent}'" if self.parent else "the top graph"
            passes_state = not direct and _passes_whole_state(fn)
            lost: tuple[str, str] | None
            if not direct and not passes_state:
                lost = (f"node {name!r} runs it inside its function, which passes on only what its code returns",
                        f"add the compiled subgraph itself as the node (add_node({name!r}, subgraph)), so that "
                        "LangGraph passes the history in and out")
            elif not _guarded.keeps_history(self.compiled):
                lost = (f"{where} has no `stalwart_guard: GuardHistory` in its state",
                        f"declare `stalwart_guard: GuardHistory` in the state of {where} (and of every graph "
                        "enclosing it)")
            else:
                lost = None
            self.sub_of[name] = sub
            gname = self.ex.subgraph_name(sub, hint=name, lost=lost)
            node.update(kind="subgraph", graph=gname)
            if passes_state:
                prov["subgraph_via"] = ("langgraph_supervisor's call_agent: the whole state in, the agent's whole "
                                        "output out")
            elif not direct:
                self.via_function.add(name)
                self.ex.warn(self.label(
                    f"node {name!r} runs subgraph {gname!r} inside a function: exported as a subgraph node "
                    "running it; what else its code does is read as a step's code is"))
                prov["subgraph_via"] = "function"
                tree = _code.parse_function(fn) if not _code.is_library(fn) else None
                if tree is not None:
                    # issue 28: the function's own calls are kept, what it cannot resolve is opaque
                    node["graph"] = _inner_export.besides(self, name, node, fn, tree, sub, gname,
                                                          _code.partial_args(runnable))
            self.kinds[name] = "subgraph"
            return self.lg(node, **prov)

        # tool node
        from langgraph.prebuilt import ToolNode

        if isinstance(runnable, ToolNode):
            tools = list(runnable.tools_by_name.values())
            self.toolnodes.add(name)
            for t in tools:
                self.ex.tools_seen.setdefault(t.name, t)
            self.agents_as_tools(name, tools)
            wrap = getattr(runnable, "_wrap_tool_call", None)
            prov["wrap_tool_call"] = _code.qualname(wrap) if wrap else None
            guard, why = _guarded.tool_node_guard(runnable)
            kind = self.guarded_kind(name, guard, why, "tools_plain", [t.name for t in tools])
            if kind == "tools_plain" and tools and all(HANDOFF_KEY in (getattr(t, "metadata", None) or {})
                                                       for t in tools):
                self.ex.plain_handoffs.append(self.label(f"node {name!r}"))
            if kind == "tools":
                prov["guard"] = "stalwart_export.Guard"
            node.update(kind=kind, tools=[t.name for t in tools])
            self.kinds[name] = kind
            return self.lg(node, **prov)

        # middleware node (langchain.agents create_agent): "<Middleware>.<hook>"
        mw = getattr(fn, "__self__", None)
        if mw is not None and type(mw).__name__ == "HumanInTheLoopMiddleware":
            self.hitl.append((name, mw))
        if mw is not None and is_middleware(mw):
            node["kind"] = "step"
            prov["middleware"] = _code.qualname(mw)
            self.kinds[name] = "step"
            return self.lg(node, **prov)

        # an agent built inside the node's function (issue 28 item 1, issue 29 item 3)
        if fn is not None and not _code.is_library(fn):
            tree = _code.parse_function(fn)
            if tree is not None and _inner_export.export(self, name, node, prov, fn, tree):
                return self.lg(node, **prov)

        # a chain: the node is one, or its function invokes one (`_chains.py`, issue 28)
        if _chain_node.needs_reading(self, runnable, fn):
            chain = _chain_node.read_node(self, name, runnable, fn)
            if chain.models and not chain.tools and one_call_a_message(runnable, fn):
                self.single_call.add(name)
                prov["parallel_tool_calls"] = False
            return _chain_node.export_node(self, name, node, prov, runnable, fn, chain,
                                           bound_tool_lists(runnable, fn))

        # model
        model, bound = self.find_model(runnable, fn)
        if model is not None:
            node["kind"] = "model"
            prov["model"] = model
            if one_call_a_message(runnable, fn):
                self.single_call.add(name)
                prov["parallel_tool_calls"] = False
            if bound is not None:
                prov["bound_tools"] = bound
            found = _hosted.collect(bound_tool_lists(runnable, fn), self.label(f"the model of node {name!r}"))
            if found:
                self.ex.add_hosted(self.label(f"node {name!r}"), node, found)
            self.model_own_calls(name, node, prov, fn)
            self.kinds[name] = "model"
            return self.lg(node, **prov)

        # step
        node["kind"] = "step"
        prov["opaque"] = True
        tree = _code.parse_function(fn) if fn is not None and not _code.is_library(fn) else None
        if tree is not None and self.runtime_model(name, node, prov, fn, tree):
            return self.lg(node, **prov)
        if fn is not None:
            direct_tools, handwritten = self.step_tools(name, fn)
            for t in _guarded.guarded_functions(fn):  # plain functions passed to guard.call/acall (issue 29)
                if t.name not in direct_tools:
                    direct_tools.append(t.name)
                    self.ex.tools_seen.setdefault(t.name, t)
            if not direct_tools and tree is not None:
                funcs, unread = _unseen.plain_dispatch(fn, tree)
                self.unread(name, node, fn, unread)
                if funcs:
                    # a hand-written tool node over plain functions (the memory-agent template)
                    node.update(kind="tools_plain", tools=[f.__name__ for f in funcs])
                    for f in funcs:  # the catalogue, the words and --init-words read them as tools
                        t = _code.function_tool(f)
                        if t is not None:
                            self.ex.tools_seen.setdefault(t.name, t)
                    prov.pop("opaque", None)
                    prov["tool_node"] = "runs each tool call of the model's message as a plain function (f(**args))"
                    self.kinds[name] = "tools_plain"
                    self.ex.warn(self.label(
                        f"node {name!r} runs the model's tool calls as plain functions "
                        f"({', '.join(f.__name__ for f in funcs)}): exported tools_plain; each is a tool of the "
                        "catalogue (give its words with @catalogue_words on the function or in the words)"))
                    return self.lg(node, **prov)
            if tree is not None and not handwritten:
                reached: list = []
                self.unread(name, node, fn, _unseen.unread_calls(fn, tree, reached=reached))
                more = [t for t in reached if t.name not in direct_tools]
                if more:
                    # tools the step runs through what referenced_objects does not see (a local import)
                    for t in more:
                        self.ex.tools_seen.setdefault(t.name, t)
                    direct_tools = direct_tools + [t.name for t in more]
                    node["tools"] = direct_tools
            if tree is None and not _code.is_library(fn):
                # SPEC 12.5: a function whose source cannot be read (made by exec, a REPL, a .pyc)
                self.unread(name, node, fn, [_unseen.Unread(
                    "code", f"the source of {getattr(_code.plain_function(fn), '__qualname__', '?')}() cannot be read",
                    None)])
            self.opaque_guard_calls(name, node, fn)
            if direct_tools:
                node["tools"] = direct_tools
                if handwritten:
                    # a hand-written tool node: it runs the calls the model made (issue 16, item 5)
                    prov.pop("opaque", None)
                    prov["tool_node"] = f"runs each tool call of the model's message through {handwritten!r}"
                    guard, why = _guarded.step_guard(fn, direct_tools)
                    kind = self.guarded_kind(name, guard, why, "tools_plain", direct_tools)
                    if kind == "tools":
                        prov["guard"] = _words.GUARDED_STEP
                    node["kind"] = kind
                    self.kinds[name] = kind
                    return self.lg(node, **prov)
                guard, why = _guarded.step_guard(fn, direct_tools)
                kind = self.guarded_kind(name, guard, why, "step", direct_tools)
                if kind == "tools":
                    node["kind"] = "tools"
                    prov.pop("opaque", None)
                    prov["guard"] = _words.GUARDED_STEP
                    self.kinds[name] = "tools"
                    return self.lg(node, **prov)
                self.ex.warn(self.label(
                    f"node {name!r} (step) calls tools {direct_tools} directly, outside any tool node: "
                    "those calls skip the tool check and any pause on a tool node"))
        else:
            # SPEC 12.5: code the exporter cannot read is an opaque entry (QG024), never a silent step
            node.setdefault("opaque", []).append(
                {"what": "code", "why": f"the exporter cannot read its code ({prov['runnable']})"})
            self.ex.warn(self.label(f"node {name!r}: cannot read its code ({prov['runnable']}); exported as a step "
                                    "with an opaque `code` entry (QG024 fails the gate until it is read or declared, "
                                    f'e.g. {{"nodes": {{"{name}": {{"pure": "why it has no effect"}}}}}})'))
        self.kinds[name] = "step"
        return self.lg(node, **prov)

    def runtime_model(self, name: str, node: dict, prov: dict, fn: Any, tree: ast.AST) -> bool:
        """Node `name` makes its chat model at run time (`_unseen.runtime_model`): a `model` node,
        the tools it binds read as offered, never as called; when it binds tools the exporter
        cannot name, an opaque `model` entry at the `bind_tools` call (SPEC 12.5)."""
        rt = _unseen.runtime_model(fn, tree)
        if rt is None:
            return False
        # What its code calls itself (not what it only binds): the tools it reaches, less the
        # bound ones, and every tool an `.invoke()` of it resolves to.
        reached: list = []
        unread = _unseen.unread_calls(fn, tree, reached=reached)
        direct, _mapping = self.step_tools(name, fn)
        called = [t for t in direct if rt.tools is None or t not in rt.tools]
        called += [t.name for t in reached if t.name not in called]
        if called:
            # a step that makes a model and runs tools itself: its calls skip the tool check
            for t in reached:
                self.ex.tools_seen.setdefault(t.name, t)
            node["tools"] = called
            self.kinds[name] = "step"
            self.unread(name, node, fn, unread + [_unseen.Unread(
                "model", f"makes a chat model at run time ({rt.via}) and runs tools itself ({', '.join(called)}): "
                         "what the model chooses is not read", rt.at)])
            self.ex.warn(self.label(f"node {name!r} (step) calls tools {called} directly, outside any tool node: "
                                    "those calls skip the tool check"))
            return True
        self.unread(name, node, fn, unread)
        node["kind"] = "model"
        prov.pop("opaque", None)
        prov["model"] = f"made at run time: {rt.via}"
        self.kinds[name] = "model"
        if rt.tools is not None:
            if rt.tools:
                prov["bound_tools"] = rt.tools
            return True
        self.unread(name, node, fn, [_unseen.Unread(
            "model", f"a chat model made at run time ({rt.via}) binds tools the exporter cannot name "
                     f"({_unseen._shown(rt.unnamed.args[0]) if rt.unnamed is not None and rt.unnamed.args else '?'})",
            rt.unnamed or rt.at)])
        return True

    def unread(self, name: str, node: dict, fn: Any, entries: list) -> None:
        """Each `_unseen.Unread` of node `name`'s code is an `opaque` entry (SPEC 12.5), at its line,
        with a warning: QG024 fails the gate until it is read or declared."""
        for u in entries:
            entry: dict[str, Any] = {"what": u.what, "why": u.why}
            file, line = _code.source_line(fn, u.at) if u.at is not None else (None, None)
            if file and line:
                entry["location"] = {"file": _code.rel_file(file, self.ex.base), "line": line,
                                     "column": getattr(u.at, "col_offset", 0) + 1}
            if entry not in node.get("opaque", []):
                node.setdefault("opaque", []).append(entry)
            word = '"model": true' if u.what == "model" else '"calls": {...}'
            if u.what == "subgraph":  # an unread agent: restructured, or its calls declared (SPEC 12.5)
                self.ex.warn(self.label(
                    f"node {name!r}: {u.why}: an opaque `subgraph` entry (QG024 fails the gate until it is read - "
                    "build the agent from a model and tools the exporter can resolve: module-level names, the "
                    "node's own literals; or add the compiled agent itself as the node - or declared in the words: "
                    f"{{\"nodes\": {{\"{name}\": {{\"calls\": {{...}}}}}}}}, what its agent may call)"))
                continue
            self.ex.warn(self.label(
                f"node {name!r}: {u.why}: an opaque `{u.what}` entry (QG024 fails the gate until it is read, or "
                f"declared in the words: {{\"nodes\": {{\"{name}\": {{{word}}}}}}})"))

    def model_own_calls(self, name: str, node: dict, prov: dict, fn: Any) -> None:
        """What a model node's own code runs besides its model (issue 28: a planner that searches
        before it answers, `web_search.invoke(...)` then `llm.invoke(...)`): each tool it runs is
        a plain call made during the node's visit, exported as the node's `hosted` (SPEC 2.2: any
        number of plain calls, one after another, before the model chooses), never dropped; a
        call it cannot resolve is an `opaque` entry (QG024). The tools it only binds are offered,
        not run."""
        if fn is None or _code.is_library(fn) or not _sources.is_user_file(_sources.source_file(fn)):
            return  # a prebuilt agent's model node is the framework's code, read as such
        tree = _code.parse_function(fn)
        if tree is None:
            return
        reached: list = []
        self.unread(name, node, fn, _unseen.unread_calls(fn, tree, reached=reached))
        runs = list(reached)  # each one `.invoke()`d (`_unseen.RUNS`), bound to the model or not
        if not runs:
            return
        hosted = node.setdefault("hosted", [])
        for t in runs:
            self.ex.tools_seen.setdefault(t.name, t)
            if t.name not in hosted:
                hosted.append(t.name)
        prov["runs_itself"] = [t.name for t in runs]
        self.ex.warn(self.label(
            f"node {name!r} calls a model and runs {', '.join(repr(t.name) for t in runs)} itself: exported as plain "
            "calls made during the model node's visit (`hosted`), outside any tool node and any guard; to have them "
            "checked, run them from a tool node (guard.tool_node) or through guard.call"))

    def opaque_guard_calls(self, name: str, node: dict, fn: Any) -> None:
        """Each `guard.call`/`acall` of step `name` whose tool the exporter cannot name (a registry
        with a `name=` computed at run time, `_guarded.unnamed_guard_calls`) is an `opaque` entry
        `{"what": "tools"}` on the node (SPEC 12.5, QG024) and a warning: never dropped."""
        for at in _guarded.unnamed_guard_calls(fn):
            why = ("a guard.call/acall whose tool and name= are known only at run time (a registry looked up by "
                   "the model's tool name): the exporter cannot list the tools it runs; pass each function with a "
                   "literal name= (or a tool object), or list them in a tool node")
            entry: dict[str, Any] = {"what": "tools", "why": why}
            file, line = _code.source_line(fn, at)
            if file and line:
                entry["location"] = {"file": _code.rel_file(file, self.ex.base), "line": line,
                                     "column": getattr(at, "col_offset", 0) + 1}
            node.setdefault("opaque", []).append(entry)
            self.ex.warn(self.label(f"node {name!r}: {why} (QG024 fails the gate until it is read or declared)"))


#: Functions that run a subgraph with the node's whole state and return the subgraph's whole
#: output (so the guard's history goes in and comes out): langgraph-supervisor 0.0.31's worker
#: node (`_make_call_agent`: `agent.invoke(state, config)`, then `{**output, "messages": ...}`).
_WHOLE_STATE_CALLERS = (
    ("langgraph_supervisor.supervisor", "_make_call_agent.<locals>.call_agent"),
    ("langgraph_supervisor.supervisor", "_make_call_agent.<locals>.acall_agent"),
)


def _passes_whole_state(fn: Any) -> bool:
    """Does node function `fn` run its subgraph with the whole state and return its whole output
    (`_WHOLE_STATE_CALLERS`)?"""
    plain = _code.plain_function(fn) if fn is not None else None
    return (getattr(plain, "__module__", None), getattr(plain, "__qualname__", None)) in _WHOLE_STATE_CALLERS
