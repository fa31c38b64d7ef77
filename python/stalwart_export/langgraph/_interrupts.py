"""The pauses of one graph's export (SPEC 2.2, 12.2, 12.5): compile-time `interrupt_before`/
`interrupt_after`, `interrupt()` in a node's or a tool's code (`_pauses.py`), approval nodes, per-call
reviews (`_review.py`, `HumanInTheLoopMiddleware`), and the pauses the exporter cannot place or a
`with_fallbacks` swallows (opaque entries and warnings, never dropped)."""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from .. import _code
from . import _fallbacks, _pauses, _review
from ._models import is_middleware


#: The most tools an approval node's tool node may bind for its yes to be credited: each is an
#: answer flag, and the verifier searches every combination of answers.
MAX_APPROVED_TOOLS = 8


class PauseReading:
    """The interrupts of a `GraphExport` (a part of it: `self` is the walk)."""

    def compile_interrupts(self) -> None:
        from langgraph.types import interrupt

        for when, attr in (("before", "interrupt_before_nodes"), ("after", "interrupt_after_nodes")):
            listed = getattr(self.compiled, attr, None) or []
            names = list(self.builder.nodes) if listed == "*" else list(listed)
            for name in names:
                if name not in self.builder.nodes:
                    continue
                src = f"compile(interrupt_{when}=" + ('"*"' if listed == "*" else "list") + ")"
                spec = self.builder.nodes[name]
                if when == "before" and name in self.toolnodes:
                    for t in self.node_tools(name):
                        self.interrupts.append(self.lg({"node": self.qid(name), "when": "before", "tool": t},
                                                       source=src, guaranteed=True))
                else:
                    self.interrupts.append(self.lg({"node": self.qid(name), "when": when, "tool": None},
                                                   source=src, guaranteed=True))
        # interrupt() in node code, and at the top of a tool's code
        for name, spec in self.builder.nodes.items():
            kind = self.kinds.get(name)
            if name in self.swallows:
                self.swallowed_pauses(name)
                continue
            if name in self.toolnodes:
                for tname, tool in self.runnable(name).tools_by_name.items():
                    tfn = getattr(tool, "func", None) or getattr(tool, "coroutine", None)
                    if tfn is None:
                        continue
                    tree = _code.parse_function(tfn)
                    if tree is None:
                        continue
                    pauses, unplaced = _pauses.find(tfn, tree)
                    self.opaque_pauses(name, tfn, unplaced, f"tool {tname!r}: ")
                    calls = [(p.call, p.resolved) for p in pauses]
                    if not calls:
                        continue
                    if self.asks_after_effect(name, tname, tfn, tree, calls):
                        continue
                    top = [c for c, resolved in calls if resolved and _code.top_level_call(tree, c)]
                    if any(_pauses.guards_effects(tfn, tree, c) for c in top):
                        self.interrupts.append(self.lg({"node": self.qid(name), "when": "before", "tool": tname},
                                                       source="interrupt() at the top of the tool's code, "
                                                              "its answer keeping the tool from acting on a no",
                                                       guaranteed=True))
                    elif top:
                        # SPEC 12.5: an answer never read (or read and then ignored) confirms nothing.
                        self.interrupts.append(self.lg({"node": self.qid(name), "when": "inside", "tool": None},
                                                       source="interrupt() in the tool's code, whose answer does not "
                                                              "keep it from acting"))
                        self.ex.warn(self.label(
                            f"tool {tname!r} (node {name!r}) asks with interrupt() but acts whatever the answer: "
                            "a no does not stop it, so the pause confirms nothing (written `inside`, no tool); fix: "
                            "read the answer and return before acting unless it is a yes "
                            "(`if answer != \"yes\": return \"cancelled\"`)"))
                    else:
                        self.ex.warn(self.label(
                            f"tool {tname!r} calls interrupt() under a condition; not written as a confirmation"))
                continue
            if kind not in ("step", "model", "tools", "tools_plain"):
                continue
            for tname in self.node_tools(name):  # tools a step runs itself: rerun with the step on resume
                tool = self.ex.tools_seen.get(tname)
                tfn = (getattr(tool, "func", None) or getattr(tool, "coroutine", None)) if tool is not None else None
                tree = _code.parse_function(tfn) if tfn is not None else None
                if tree is not None:
                    tcalls = _code.calls_to(tfn, tree, interrupt, "interrupt")
                    if tcalls:
                        self.asks_after_effect(name, tname, tfn, tree, tcalls)
            fn = _code.unwrap_callable(self.runnable(name))
            if fn is None or is_middleware(getattr(fn, "__self__", None)) or _code.is_library(fn):
                continue
            tree = _code.parse_function(fn)
            if tree is None:
                continue
            pauses, unplaced = _pauses.find(fn, tree)
            if kind == "step":
                extra = _pauses.unfollowed(fn, bool(pauses or unplaced))
                unplaced += [extra] if extra is not None else []
            self.opaque_pauses(name, fn, unplaced)
            calls = [(p.call, p.resolved) for p in pauses]
            if not calls:
                continue
            tools = next((n.get("tools") or [] for n in self.nodes if n["id"] == self.qid(name)), [])
            if tools and kind != "model":
                reviewed, why = _review.review_shape(fn, tools)
                if reviewed is not None:
                    for t in reviewed:
                        self.interrupts.append(self.lg({"node": self.qid(name), "when": "call", "tool": t},
                                                       source="interrupt() for each tool call, the tool run only "
                                                              "when the answer accepts or edits it"))
                    if not self.one_call_reaches(name):
                        self.ex.warn(self.label(
                            f"node {name!r} runs a tool before a later interrupt() in the same run: when the run "
                            "resumes LangGraph runs the node again from its start, so with several tool calls in one "
                            "message every call it ran before the later pause (an accepted call, or one it runs "
                            "unreviewed) runs again, unasked, each time a later call is answered; the review is "
                            "credited (each call runs only with the arguments the person accepted, and the verifier "
                            "counts a call run again as any plain call: at_most QG014, recovery QG105); fix: ask "
                            "about every call first (collect every answer), then run the tools, or bind the model "
                            "with parallel_tool_calls=False"))
                    continue
                self.ex.warn(self.label(
                    f"node {name!r} calls interrupt() and the tools {tools}, but the review is not recognised "
                    f"({why}): written as an `inside` pause, which confirms nothing; if the node puts each call to "
                    f"a person and runs it only when accepted, declare it in the words: "
                    f'{{"nodes": {{"{name}": {{"reviews": {json.dumps(tools)}}}}}}}'))
            if kind == "step" and not tools and self.approval(name, fn, tree, pauses):
                continue
            self.interrupts.append(self.lg({"node": self.qid(name), "when": "inside", "tool": None},
                                           source="interrupt() call in the node's code",
                                           unconditional=any(_code.top_level_call(tree, c) for c, _ in calls)))

    def opaque_pauses(self, name: str, fn: Any, unplaced: list, prefix: str = "") -> None:
        """Each pause of node `name`'s code (or its tool's, `prefix`) the exporter cannot place is an
        `opaque` entry on the node (SPEC 12.5), at its line when known, and a warning: never dropped."""
        if not unplaced:
            return
        node = next(n for n in self.nodes if n["id"] == self.qid(name))
        for u in unplaced:
            entry: dict[str, Any] = {"what": "pause", "why": prefix + u.why}
            file, line = _code.source_line(fn, u.at) if u.at is not None else (None, None)
            if file and line:
                entry["location"] = {"file": _code.rel_file(file, self.ex.base), "line": line,
                                     "column": getattr(u.at, "col_offset", 0) + 1}
            node.setdefault("opaque", []).append(entry)
            self.ex.warn(self.label(f"node {name!r}: {prefix}{u.why}: an opaque pause (QG024 fails the gate until "
                                    "it is read or declared)"))

    def approval(self, name: str, fn: Any, tree: ast.AST, pauses: list) -> bool:
        """Node `name` is an approval node (`_pauses.approval_routes`): `answer = interrupt(...)`
        at its own level, and every `Command(goto=<tool node>)` under a yes. Then the pause is an
        `inside` interrupt for each tool of each such tool node, each with its own answer flag
        (turn-scoped, declared in `state`), and the edge into the tool node is guarded by all of
        them: a no never reaches it, and a yes confirms the calls it runs (SPEC 12.5). False, and
        nothing written, for any other shape."""
        top = [p for p in pauses if p.resolved and _code.top_level_call(tree, p.call)]
        if len(top) != 1 or len(pauses) != 1:
            return False
        targets, why = _pauses.approval_routes(fn, tree, top[0].call, self.toolnodes)
        if not targets:
            return False
        me = self.qid(name)
        guards: dict[str, str] = {}
        for t in sorted(targets):
            q = self.qid(t)
            mine = [e for e in self.edges if e["from"] == me and (e["destinations"] is None or q in e["destinations"])]
            if not mine or any(e["kind"] != "command" or e["destinations"] is None or e.get("guard") for e in mine):
                return False  # a route into the tool node the answer does not decide
            tools = self.node_tools(t)
            if not tools:
                return False
            if len(tools) > MAX_APPROVED_TOOLS:
                self.ex.warn(self.label(
                    f"node {name!r} is an approval node for {t!r}, but {t!r} binds {len(tools)} tools: one answer "
                    f"flag a tool makes 2^{len(tools)} answers for the verifier to search, so the approval is not "
                    f"credited (written `inside`, confirming nothing); fix: give the approval node a tool node of at "
                    f"most {MAX_APPROVED_TOOLS} tools (the writes it confirms), or review each call "
                    "(HumanInTheLoopMiddleware, or the words' reviews)"))
                return False
            flags = []
            for tool in tools:
                flag = _flag(self.parent, name, tool)
                flags.append(flag)
                self.state[flag] = {"scope": "turn"}
                self.interrupts.append(self.lg({"node": me, "when": "inside", "tool": tool, "answer": flag},
                                               source="answer = interrupt(...) in an approval node, the answer "
                                                      f"guarding its Command(goto={t!r})"))
            guards[q] = " && ".join(flags)
        if not self.one_call_reaches(name):
            self.ex.warn(self.label(
                f"node {name!r} asks once and, on a yes, sends every call of the model's message to "
                f"{', '.join(sorted(targets))}: the yes is credited as confirming each of them, so the question "
                "must show every call (state['messages'][-1].tool_calls), not only one; or bind the model with "
                "parallel_tool_calls=False"))
        for q, guard in guards.items():
            for e in [e for e in self.edges if e["from"] == me and e["destinations"] and q in e["destinations"]]:
                e["destinations"] = [d for d in e["destinations"] if d != q]
                if not e["destinations"]:
                    self.edges.remove(e)
            self.edges.append(self.lg({"from": me, "kind": "command", "destinations": [q], "guard": guard},
                                      source="Command(goto=...) taken only on the person's yes", enforced=False))
        return True

    def asks_after_effect(self, name: str, tname: str, tfn: Any, tree: ast.AST, calls: list) -> bool:
        """Does tool `tname` (of tool node `name`) call `interrupt()` after a call that may act
        (`_code.effects_before`)? LangGraph runs an interrupted tool again from its start when the
        run resumes, so that effect runs again (once more for each answer), and the question does
        not confirm it: a warning names the tool, the lines and the fix, and no pause is credited."""
        skip = {id(c) for c, _ in calls}
        for c, _ in calls:
            effects = [e for e in _code.effects_before(tfn, tree, c) if id(e) not in skip]
            if not effects:
                continue
            file, line = _code.source_line(tfn, c)
            _f, eline = _code.source_line(tfn, effects[0])
            at = f"{_code.rel_file(file, self.ex.base)}:{line}" if file else "its code"
            what = ast.unparse(effects[0].func) if hasattr(ast, "unparse") else "a call"
            self.ex.warn(self.label(
                f"tool {tname!r} (node {name!r}) calls interrupt() at {at} after {what}(...)"
                + (f" (line {eline})" if eline else "")
                + ", which may act: when the run resumes LangGraph runs the tool again from its start, so that "
                "effect runs again (once more for each answer), and the question confirms nothing of it (no pause is "
                f"written for {tname!r}); fix: ask before the effect (call interrupt() first and act only on a yes), "
                "or make the effect idempotent (an idempotency key, or a check that it was already done)"))
            return True
        return False

    def one_call_reaches(self, name: str) -> bool:
        """Does every node with an edge to node `name` make one tool call a message (a model
        bound with `parallel_tool_calls=False`)? False when any other node, or an edge whose
        destinations are unknown, leads there."""
        q = self.qid(name)
        sources = {e["from"] for e in self.edges if e["destinations"] is None or q in e["destinations"]}
        sources |= {e["from"] for e in self.sends if e.get("destinations") is None or q in e["destinations"]}
        singles = {self.qid(n) for n in self.single_call}
        return bool(sources) and sources <= singles

    def node_tools(self, name: str) -> list[str]:
        """The tools exported on node `name` (a tool node's, and its fallbacks')."""
        return next((n.get("tools") or [] for n in self.nodes if n["id"] == self.qid(name)), [])

    def swallowed_pauses(self, name: str) -> None:
        """Warn about each `interrupt()` inside node `name` (its code, its tools' code) that its
        `with_fallbacks` catches: no pause, so no confirmation or review, is written for it."""
        from langgraph.types import interrupt

        where: list[str] = []
        fns = [(f"tool {t!r}", getattr(tool, "func", None) or getattr(tool, "coroutine", None))
               for t, tool in (getattr(self.runnable(name), "tools_by_name", None) or {}).items()]
        fn = _code.unwrap_callable(self.runnable(name))
        if fn is not None and not _code.is_library(fn) and not is_middleware(getattr(fn, "__self__", None)):
            fns.append(("its code", fn))
        for what, f in fns:
            tree = _code.parse_function(f) if f is not None else None
            if tree is not None and _code.calls_to(f, tree, interrupt, "interrupt"):
                where.append(what)
        if where:
            self.ex.warn(self.label(
                f"node {name!r}: interrupt() in {', '.join(where)} never pauses the run: its {self.swallows[name]} "
                "catches GraphInterrupt (an Exception, via GraphBubbleUp), runs the fallback instead and the model "
                "receives what it returns; no confirmation or review is written for it: " + _fallbacks.FIX))

    def hitl_interrupts(self) -> None:
        """HumanInTheLoopMiddleware reviews each call of the tools its `interrupt_on` gates: a
        `call` interrupt (SPEC 12.2) on each tool node binding the tool. In `batched` mode the
        person answers in `after_model` for every call of the model's message, and a rejected
        call never reaches the tool node; in `per_call` mode the tool node's wrapper asks about
        each call. Either way each call runs only on a yes (or as edited)."""
        for name, mw in self.hitl:
            mode = getattr(mw, "interrupt_mode", "batched")
            configs = getattr(mw, "interrupt_on", {}) or {}
            if name in self.hitl_seen:
                continue
            self.hitl_seen.add(name)
            targets = sorted(self.toolnodes)
            src = (f"HumanInTheLoopMiddleware(interrupt_mode={mode!r})"
                   + (" in ToolNode.wrap_tool_call" if mode == "per_call" else ".after_model"))
            for tool, cfg in configs.items():
                if not cfg:
                    continue
                if isinstance(cfg, dict) and cfg.get("when") is not None:
                    self.ex.warn(self.label(
                        f"HumanInTheLoopMiddleware asks about {tool!r} only when its `when` predicate holds: "
                        "not written as a confirmation"))
                    continue
                decisions = list(cfg.get("allowed_decisions", [])) if isinstance(cfg, dict) else []
                for t in targets:
                    if t in self.swallows:
                        self.ex.warn(self.label(
                            f"HumanInTheLoopMiddleware's question about {tool!r} on node {t!r} never reaches the "
                            f"person: its {self.swallows[t]} catches GraphInterrupt; not written as a confirmation"))
                        continue
                    tn = self.runnable(t)
                    if tool not in getattr(tn, "tools_by_name", {}):
                        continue
                    where = {"asked_in": self.qid(name)} if mode != "per_call" else {}
                    self.interrupts.append(self.lg({"node": self.qid(t), "when": "call", "tool": tool},
                                                   source=src, guaranteed=True, decisions=decisions, **where))


def _flag(graph: str | None, node: str, tool: str) -> str:
    """The state flag holding an approval node's yes for `tool` (`approved.<graph>.<node>.<tool>`,
    each part cut to the characters a guard reads)."""
    parts = ["approved"] + ([graph] if graph else []) + [node, tool]
    return ".".join(re.sub(r"[^A-Za-z0-9_-]", "_", p) or "_" for p in parts)
