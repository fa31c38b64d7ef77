"""export_agent: an OpenAI Agents SDK application as qls-graph/1 (SPEC 13.1).

The exporter reads the built `Agent` objects (never the source text, except to find the lines
that made them, SPEC 12.4): every agent reachable from the starting one through hand-offs and
agents-as-tools. Per agent A:

* a `model` node `A` (`agent: A`), at A's `Agent(...)` call, with A's hosted tools as `hosted`;
* a tool node `A:tools` (when A has function, local or MCP tools) binding A's function and local
  tools: `tools` when the SDK guard (`guard.py`) decides every call there (each function tool
  carries its mark, every piece in place), else `tools_plain` (local tools, MCP servers' tools and
  unguarded function tools are plain calls; a node mixing them is plain, with a warning);
* edges: `A` -> `A:tools`, `A` -> each hand-off target, `A` -> each agent-as-tool node, `A` ->
  `__end__` (one conditional edge); `A:tools` -> `A` (`run_llm_again`), -> `__end__`
  (`stop_on_first_tool`), both (`StopAtTools`, a function), and -> each hand-off target (the SDK
  runs a response's tool calls, then hands off);
* `needs_approval=True` (or a callable whose body is `return True`): a `call` interrupt on
  `A:tools` with `standing: true` (the exporter cannot tell whether the application grants
  `always_approve`), `standing: false` on a guarded tool (the guard accepts an approval only for
  the call it was given for); another callable: no interrupt, and a warning;
* an agent as tool B (`B.as_tool(tool_name=n)`): a `subgraph` node `n` running B's own graph,
  returning to A (or ending, or handing off, as A's tool node does); its `needs_approval`: a step
  `A:approve:n` with an `inside` interrupt whose answer flag guards the edge into `n`;
* hosted tools: `hosted` on `A` with catalogue entries (`_hosted.py`); a `HostedMCPTool`'s
  `require_approval` is a `call` interrupt on `A` and an edge `A` -> `A`;
* MCP servers (`mcp_servers`): listed at export time (`_mcp_list.py`), their tools on `A:tools`
  with MCP's default annotations; a server that cannot be listed is an `opaque` entry on
  `A:tools` (QG024);
* an `on_handoff` hook, a guardrail (of the agent or of a tool) or other code the SDK runs on the
  agent's turns (`_hooks.around`: instructions, `AgentHooks`, `tool_use_behavior`, a hand-off's
  `input_filter`, an agent tool's output extractor) whose code runs an agent, names a tool or calls
  a model (`_hooks.py`), a hand-off whose target or hook the exporter cannot read, a
  hosted MCP server without `allowed_tools`, a tool type it does not know: `opaque` entries, never
  silence (a hook or guardrail that only reads text is nothing).

The top graph starts at the starting agent; later turns may start at any agent reachable by
hand-off (the application passes the last agent or the first): `__start__` has a guarded edge to
each, guarded by the session flag `later_turn`, which the starting agent's model node sets (turn 1
always visits it first, so this is the same as setting it as the first turn ends).
`recursion_limit` is 2 x `max_turns` (a model call and a tool visit are a step each).
"""

from __future__ import annotations

import importlib.metadata
import sys
from typing import Any

from .. import _code, _words
from .._ids import escape_id
from ..catalogue import export_catalogue, init_words_of
from .._sources import SourceIndex, is_user_file, loc_of
from . import _handoffs, _hooks, _mcp_list, _tools
from ._agent import is_agent

EXPORTER = "stalwart_export.openai_agents"
#: The session flag set once the first turn has run (SPEC 13.1 "a new turn").
TURN_FLAG = "later_turn"


def _default_max_turns() -> int:
    from agents.run import DEFAULT_MAX_TURNS

    return int(DEFAULT_MAX_TURNS)


def _id(name: str) -> str:
    return escape_id(name)


def _flag(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in text)


class _Export:
    """One export's walk over the agents (see the module's doc)."""

    def __init__(self, base: str | None, origin: tuple[str, str] | None) -> None:
        self.base = base
        self.origin = origin
        self.index = SourceIndex({"Agent": 0, "clone": None})  # Agent(...), base.clone(name=...)
        self.warnings: list[str] = []
        self.subgraphs: dict[str, dict] = {}
        self.tools: dict[str, Any] = {}
        self.hosted: dict[str, Any] = {}
        self.tool_locations: dict[str, dict] = {}
        self.by_name: dict[str, Any] = {}
        self.state: dict[str, dict] = {}
        self.building: list[str] = []
        self.listed: dict[int, tuple[Any, _mcp_list.Listed]] = {}
        #: the words' `"turns": "restart"`: every turn starts at the starting agent
        self.restart = False
        #: Function tools the guard decides on some `tools` node.
        self.guarded: set[str] = set()
        #: Function tools on some `tools_plain` node (plain calls there, until the agent is wrapped).
        self.plain: set[str] = set()
        #: Local and MCP servers' tools (always plain calls: wrapping guards function tools only).
        self.plain_other: set[str] = set()

    def warn(self, msg: str) -> None:
        if msg not in self.warnings:
            self.warnings.append(msg)

    # ------------------------------------------------------------------ reading the user's files
    def read_files(self, start: Any) -> None:
        """Index the user's files (the module the app was loaded from, and every file a tool,
        hook or instructions function of a reachable agent lives in) for the `Agent(...)` lines."""
        if self.origin is not None:
            self.index.add(self.origin[0])
        found = self.reachable(start, tools_too=True)
        for file in _modules_holding(found):
            self.index.add(file)
        for a in found:
            for t in getattr(a, "tools", None) or []:
                fn = _tools.wrapped(t)
                if fn is not None:
                    self.index.add_object(fn)
            if callable(getattr(a, "instructions", None)):
                self.index.add_object(a.instructions)
            for h in _handoffs.targets(a):
                if h.hook is not None and h.hook is not _handoffs.UNKNOWN_HOOK:
                    self.index.add_object(h.hook)

    def reachable(self, start: Any, tools_too: bool) -> list[Any]:
        """`start` and the agents its hand-offs reach (and, with `tools_too`, agents as tools),
        in the order met; two agents sharing a name are an error (`TypeError`)."""
        out = _handoffs.reached(start, tools_too)
        for a in out:
            other = self.by_name.setdefault(a.name, a)
            if other is not a:
                raise TypeError(f"two different agents are named {a.name!r}: the export names each agent's node by its "
                                "name, so give each agent its own name")
        return out

    def mcp(self, agent: Any) -> _mcp_list.Listed:
        """The tools of `agent`'s MCP servers, listed once for this export (`_mcp_list.py`); each
        is marked as an MCP tool, so the catalogue applies MCP's default annotations to it."""
        key = id(agent)
        if key not in self.listed:
            got = _mcp_list.list_tools(agent)
            for t in got.tools:
                _tools.mark_mcp(t)
            self.listed[key] = (agent, got)
        return self.listed[key][1]

    def agent_loc(self, agent: Any, top: bool) -> dict | None:
        top_assign = self.origin if top and self.origin else None
        return loc_of(self.index.constructor_call(agent.name, top_assign), self.base)

    # ------------------------------------------------------------------ graphs
    def graph(self, start: Any, top: bool) -> dict:
        """The graph of a run starting at `start`: `nodes`, `edges`, `interrupts` (and for the top
        graph `state`)."""
        self.building.append(start.name)
        agents = self.reachable(start, tools_too=False)
        g: dict = {"nodes": [{"id": "__start__", "kind": "start"}], "edges": [], "interrupts": []}
        for a in agents:
            self.agent(a, g, top and a is start)
        g["nodes"].append({"id": "__end__", "kind": "end"})
        g["edges"].insert(0, {"from": "__start__", "kind": "fixed", "destinations": [_id(start.name)]})
        later = [_id(a.name) for a in agents if a is not start]
        if top and later and not self.restart:
            g["edges"].insert(1, {"from": "__start__", "kind": "stalwart_edge", "destinations": later,
                                  "guard": TURN_FLAG})
            self.state[TURN_FLAG] = {"scope": "session"}
            g["nodes"][1]["sets"] = [TURN_FLAG]
        if not g["interrupts"]:
            del g["interrupts"]
        ids = [n["id"] for n in g["nodes"]]
        dup = next((i for k, i in enumerate(ids) if i in ids[:k]), None)
        if dup is not None:
            raise TypeError(f"the graph of agent {start.name!r} has two nodes {dup!r} (an agent, an agent's tool node "
                            "`NAME:tools`, or an agent as tool named alike): give the agent or the agent tool "
                            "(as_tool(tool_name=...)) its own name")
        self.building.pop()
        return g

    def agent(self, a: Any, g: dict, first: bool) -> None:
        """A's nodes, edges and interrupts into `g` (see the module's doc)."""
        aid = _id(a.name)
        where = f"agent {a.name!r}"
        sorted_tools = _tools.read(a, where)
        loc = self.agent_loc(a, first)
        model: dict = {"id": aid, "kind": "model", "agent": a.name}
        if loc:
            model["location"] = loc
        if sorted_tools.hosted:
            model["hosted"] = [h.name for h in sorted_tools.hosted]
            for h in sorted_tools.hosted:
                self.hosted.setdefault(h.name, h)
                for w in h.warnings:
                    self.warn(w)
            self.warn(f"{where} has provider-hosted tools ({', '.join(model['hosted'])}): the provider calls them "
                      "inside the model call, so no guard sees those calls or the outside text they bring; exported "
                      "as `hosted` on its model node (plain calls, reading outside text)")
        g["nodes"].append(model)
        opaque_model: list[dict] = []
        opaque_tools: list[dict] = []
        for kind in ("input_guardrails", "output_guardrails"):
            for gr in getattr(a, kind, None) or []:
                fn = getattr(gr, "guardrail_function", None)
                if fn is not None:
                    gname = getattr(gr, "name", None) or getattr(fn, "__qualname__", "guardrail")
                    opaque_model += self.code(fn, f"the {kind[:-1].replace('_', ' ')} {gname}")
        for fn, what_code in _hooks.around(a):
            opaque_model += self.code(fn, what_code)
        for _label, why in sorted_tools.hosted_unlisted:
            opaque_model.append({"what": "tools", "why": why})
        for _cls, why in sorted_tools.unknown:
            opaque_tools.append({"what": "tools", "why": why})
        listed = self.mcp(a)
        for w in listed.warnings:
            self.warn(w)
        for label, why in listed.unlisted:
            opaque_tools.append({"what": "tools", "why": f"the MCP server {label!r}: its tools are listed at run time, "
                                                         f"and the exporter could not list them at export time: {why}"})
        tool_names: list[str] = []
        for t in sorted_tools.function + sorted_tools.local + listed.tools:
            for gr in (getattr(t, "tool_input_guardrails", None) or []) + (getattr(t, "tool_output_guardrails", None)
                                                                           or []):
                fn = getattr(gr, "guardrail_function", None)
                if fn is not None:
                    opaque_tools += self.code(fn, f"the tool guardrail {getattr(gr, 'name', None) or fn.__qualname__} "
                                                  f"of {t.name!r}")
            if t.name in tool_names:
                continue
            tool_names.append(t.name)
            self.record_tool(t)
            fn = _tools.wrapped(t)
            tloc = _code.location(fn, self.base) if fn is not None else None
            if tloc and t.name not in self.tool_locations:
                self.tool_locations[t.name] = {"location": tloc}
            ask = _tools.approval(t)
            if ask == "always":
                # the guard answers its tools' reviews call by call (it refuses a standing approval)
                g["interrupts"].append({"node": f"{aid}:tools", "when": "call", "tool": t.name,
                                        "standing": _tools.guarded_tool(t) is None})
            elif ask == "code":
                self.warn(f"tool {t.name!r} of {where} asks for approval when its needs_approval function says so: the "
                          "exporter cannot tell when, so no review is credited for it")
        has_tools = bool(tool_names or opaque_tools)
        dests: list[str] = []
        tools_id = f"{aid}:tools"
        if has_tools:
            # the agent's tool node is in the agent's region (SPEC 3.1), as its model node is
            node: dict = {"id": tools_id, "kind": self.tool_node_kind(a, sorted_tools, listed.tools, where),
                          "agent": a.name, "tools": tool_names}
            if loc:
                node["location"] = loc
            if opaque_tools:
                node["opaque"] = [dict({"location": loc} if loc else {}, **o) for o in opaque_tools]
            g["nodes"].append(node)
            dests.append(tools_id)
        after_tools = self.after_tools(a)
        handoff_ids: list[str] = []
        for h in _handoffs.targets(a):
            if h.agent is None:
                opaque_model.append({"what": "subgraph", "why": f"the hand-off {h.name!r}: its target agent is what its "
                                                                "code returns, which the exporter cannot read"})
                continue
            if h.hook is _handoffs.UNKNOWN_HOOK:
                opaque_model.append({"what": "code", "why": f"the hand-off {h.name!r} to {h.agent.name!r}: the exporter "
                                                            "cannot read whether it runs an on_handoff hook"})
            elif h.hook is not None:
                hname = getattr(h.hook, "__qualname__", None) or "on_handoff"
                opaque_model += self.code(h.hook, f"the on_handoff hook {hname} of the hand-off to {h.agent.name!r}")
            if _id(h.agent.name) not in handoff_ids:
                handoff_ids.append(_id(h.agent.name))
        later: dict = {"nodes": [], "edges": [], "interrupts": g["interrupts"]}
        for t in sorted_tools.agents:
            dests.append(self.agent_tool(a, t, later, after_tools + handoff_ids))
        dests += handoff_ids
        if sorted_tools.hosted_reviews:
            for name in sorted_tools.hosted_reviews:
                g["interrupts"].append({"node": aid, "when": "call", "tool": name})
            dests.append(aid)
        dests.append("__end__")
        g["edges"].append({"from": aid, "kind": "conditional", "destinations": dests})
        if has_tools:
            g["edges"].append({"from": tools_id, "kind": "conditional", "destinations": after_tools + handoff_ids})
        g["nodes"] += later["nodes"]
        g["edges"] += later["edges"]
        if opaque_model:
            model["opaque"] = [dict({"location": loc} if loc else {}, **o) for o in opaque_model]

    def record_tool(self, t: Any) -> None:
        """Record tool `t` under its name (the catalogue's key); two different tools named alike
        (another function, or another description or arguments) are an error (`TypeError`)."""
        other = self.tools.setdefault(t.name, t)
        if other is t:
            return
        f, g = _tools.wrapped(other), _tools.wrapped(t)
        if f is not None or g is not None:
            same = f is g
        else:
            same = all(getattr(other, k, None) == getattr(t, k, None) for k in ("description", "params_json_schema"))
        if not same:
            raise TypeError(f"two different tools are named {t.name!r}: the catalogue names each tool by its name, so "
                            "its words and the guard would take one for the other; give each its own name "
                            "(function_tool(name_override=...))")

    def tool_node_kind(self, a: Any, sorted_tools: Any, mcp_tools: list, where: str) -> str:
        """`tools` when the SDK guard decides every call of A's tool node (every function tool
        carries the guard's mark with its pieces in place, `_tools.guarded_tool`), else
        `tools_plain` (SPEC 13.1): local tools, MCP servers' tools and tools the exporter cannot
        read are not guarded, and a node some of whose tools are not guarded is plain, saying so."""
        names = [t.name for t in sorted_tools.function]
        guarded = [t.name for t in sorted_tools.function if _tools.guarded_tool(t) is not None]
        plain = [t.name for t in sorted_tools.function if _tools.guarded_tool(t) is None]
        plain += [f"{t.name} ({type(t).__name__}: the SDK runs no tool guardrail for it)" for t in sorted_tools.local]
        plain += [f"the MCP server {getattr(s, 'name', None) or type(s).__name__!r}'s tools"
                  for s in getattr(a, "mcp_servers", None) or []]
        plain += [f"a {cls}" for cls, _ in sorted_tools.unknown]
        if guarded and not plain:
            self.guarded.update(names)
            return "tools"
        self.plain.update(names)
        self.plain_other.update(t.name for t in sorted_tools.local + list(mcp_tools))
        if guarded:
            self.warn(f"{where}'s tools {', '.join(guarded)} are guarded, but not {', '.join(plain)}: its tool node is "
                      "exported as tools_plain (every call plain); wrap every tool, or move the others to another "
                      "agent")
        return "tools_plain"

    def code(self, fn: Any, what_code: str) -> list[dict]:
        """`opaque` entries for the application's code `fn` around an agent (`_hooks.py`), at its
        `def` line."""
        got = _hooks.reaches(fn, what_code)
        where = _hooks.location(fn, self.base)
        return [dict(o, location=where) if where else o for o in got]

    def after_tools(self, a: Any) -> list[str]:
        """Where a tool visit of `a` goes by its `tool_use_behavior` (SPEC 13.1)."""
        b = getattr(a, "tool_use_behavior", "run_llm_again")
        if b == "run_llm_again":
            return [_id(a.name)]
        if b == "stop_on_first_tool":
            return ["__end__"]
        return [_id(a.name), "__end__"]  # StopAtTools, or a function

    def agent_tool(self, a: Any, t: Any, g: dict, after: list[str]) -> str:
        """The subgraph node of an agent as tool `t` of `a` (and its approval step) into `g`;
        returns the node `a`'s model goes to for it."""
        b = t._agent_instance
        nid = _id(t.name)
        sub = f"{b.name}"
        node: dict = {"id": nid, "kind": "subgraph", "graph": sub}
        bloc = self.agent_loc(b, False)
        if bloc:
            node["location"] = bloc
        if b.name in self.building:
            node = {"id": nid, "kind": "step", "opaque": [{"what": "subgraph", "why": f"the agent tool {t.name!r} runs "
                                                           f"agent {b.name!r}, which is already running around it (a "
                                                           "cycle of agents as tools): the exporter does not unroll it"}]}
        elif sub not in self.subgraphs:
            self.subgraphs[sub] = {}  # reserved while built
            self.subgraphs[sub] = self.graph(b, top=False)
        g["nodes"].append(node)
        g["edges"].append({"from": nid, "kind": "conditional", "destinations": list(after)})
        ask = _tools.approval(t)
        if ask == "code":
            self.warn(f"the agent tool {t.name!r} of agent {a.name!r} asks for approval when its needs_approval "
                      "function says so: the exporter cannot tell when, so no review is credited for it")
        if ask != "always":
            return nid
        step = f"{_id(a.name)}:approve:{nid}"
        flag = _flag(f"approved_{a.name}_{t.name}")
        self.state[flag] = {"scope": "turn"}
        g["nodes"].append({"id": step, "kind": "step"})
        g["edges"].append({"from": step, "kind": "stalwart_edge", "destinations": [nid], "guard": flag})
        g["edges"].append({"from": step, "kind": "stalwart_edge", "destinations": [_id(a.name)], "guard": f"!{flag}"})
        g["interrupts"].append({"node": step, "when": "inside", "tool": None, "answer": flag})
        return step


def _modules_holding(objs: list[Any]) -> list[str]:
    """The files of the user's loaded modules that hold one of `objs` as a module-level name (where
    an agent with no function tool of the user's was most likely made)."""
    ids = {id(o) for o in objs}
    out = []
    for mod in list(sys.modules.values()):
        file = getattr(mod, "__file__", None)
        if not is_user_file(file):
            continue
        try:
            values = list(vars(mod).values())
        except TypeError:
            continue
        if any(id(v) in ids for v in values):
            out.append(file)
    return out


def versions() -> dict[str, str]:
    """The installed versions the export depends on."""
    out = {}
    for pkg in ("openai-agents", "stalwart-export"):
        try:
            out[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            pass
    return out


def export_agent(agent: Any, *, name: str | None = None, words: Any = None, base: str | None = None,
                 origin: tuple[str, str] | None = None, max_turns: int | None = None) -> dict:
    """The qls-graph/1 export of the OpenAI Agents SDK application whose starting agent is
    `agent` (SPEC 13.1; see the module's doc). `words` as for LangGraph (`_words.py`: `input`,
    `nodes.<node>.reviews`); `base` the folder the export is written to (locations are relative
    to it); `origin` the (file, attribute) the agent was loaded from; `max_turns` the `max_turns`
    the application passes to `Runner.run` (default the SDK's). Raises `TypeError` for what is not
    an `Agent`, or two agents sharing a name; `WordsError` for words naming what the export lacks."""
    if not is_agent(agent):
        raise TypeError(f"export_agent expects an OpenAI Agents SDK Agent, got {type(agent).__name__}")
    w = _words.split(words)
    ex = _Export(base, origin)
    ex.restart = w.turns == "restart"
    ex.read_files(agent)
    ex.by_name.clear()
    top = ex.graph(agent, top=True)
    turns = max_turns if max_turns is not None else _default_max_turns()
    out: dict = {"format": "qls-graph/1", "name": name or agent.name, "entry": "__start__",
                 "recursion_limit": 2 * turns}
    if ex.state:
        out["state"] = dict(sorted(ex.state.items()))
    out.update(top)
    out["subgraphs"] = ex.subgraphs
    if ex.tool_locations:
        out["tool_locations"] = ex.tool_locations
    if w.standing is False:
        per_call = [i for g in [out, *out["subgraphs"].values()] for i in g.get("interrupts", [])
                    if i.pop("standing", False)]
        if per_call:
            ex.warn(f"the words say the application never approves with always_approve: the reviews of "
                    f"{', '.join(sorted({i['tool'] for i in per_call}))} are per call, not standing")
    _words.apply(out, w, warn=ex.warn, sdk=True)
    plain = sorted(ex.plain)
    if plain:
        ex.warn(f"the function tools ({', '.join(plain)}) run without a guard (wrap the starting agent with "
                "stalwart_export.openai_agents.AgentGuard(catalogue).wrap(agent)): every call is a plain call")
    other = sorted(ex.plain_other - ex.plain)
    if other:
        ex.warn(f"the local and MCP servers' tools ({', '.join(other)}) run without a guard: every call is a plain "
                "call (AgentGuard(catalogue).wrap(agent) guards function tools only; it leaves these plain)")
    out["producer"] = {"exporter": EXPORTER, "versions": versions()}
    out["warnings"] = ex.warnings
    return out


def agent_contents(agent: Any) -> tuple[list[Any], list[Any]]:
    """(the function and local tools as the catalogue reads them (`_tools.ToolView`), the hosted
    tools) of every agent the application reaches, each once by name."""
    ex = _Export(None, None)
    ex.graph(agent, top=True)
    return [_tools.view(t) for t in ex.tools.values()], list(ex.hosted.values())


def export_agent_catalogue(agent: Any, words: Any = None, *, with_warnings: bool = False):
    """The qls-catalogue/1 of the application's tools (SPEC 2.3): each function tool with its
    description and argument schema (`params_json_schema`), `kind` null until the words (or
    `catalogue_words` on its function, or MCP annotations) say; hosted tools as `_hosted.py`
    writes them. Same words and warnings as `catalogue.export_catalogue`."""
    tools, hosted = agent_contents(agent)
    return export_catalogue(tools, words, with_warnings=with_warnings, hosted=hosted)


def init_agent_words(agent: Any) -> dict:
    """`--init-words` for an SDK application (`catalogue.init_words_of`)."""
    tools, hosted = agent_contents(agent)
    return init_words_of(tools, hosted)


