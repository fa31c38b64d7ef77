"""The tool check's decision on one call (SPEC 12.1), the first rule that applies deciding:

| order | checks | answer |
|---|---|---|
| 1 | the tool is in the catalogue and bound where it is called | refuse `unknown_tool` |
| 2 | the session's history verifies (`history.py`) | refuse `history_invalid` |
| 3 | the arguments against the tool's `args` (`args.py`) | refuse `argument_schema` |
| 4 | a destination in an argument of a tool not `sends_out` | refuse `undeclared_destination` |
| 5 | `order.after`, `order.not_after` (`untrusted`: content from outside in the session), `at_most` | refuse `order_rule` |
| 6 | the compiled rulebook's routes for the tool (`rulebook.py`) | refuse `rulebook` (naming the flows) |
| 7 | a write (or a privileged tool) after content from outside | `taint_policy`: confirm, or refuse `tainted_call` |
| 8 | every write | confirm: `tainted_call`, `irreversible_pivot`, `write` |
| 9 | otherwise | allow |

What the rules read is the session of SPEC 3 as the history gives it: a tool has *run* when an
entry of it ran (a refused or declined call did not); content from outside entered when a
`reads_outside` tool ran (or the guard was told every turn's input comes from outside); counts
are of calls that ran, per session, or per turn for `at_most: {count, per: turn|run}`. Within one
batch (the calls one model message asked for) the calls are decided over the history before the
batch, as SPEC 3's batches read it; only `at_most` also counts the calls before this one in the
batch, every one that rules 1-7 did not refuse (the person's answer is not known yet), so a
batch can never pass a limit.

A call the rules cannot decide (an internal error, a fact that cannot be read) is refused with
the reason `guard_error` or `fact_unreadable`, never allowed. Reasons decided outside this table:
`call_id` (a model message whose calls cannot each be placed, `core.id_problem`), `retry` (a call
already attempted, `attempts.py`) and `concurrent` (a call bearing a limit in a task that runs
alongside others the guard cannot serialise it with, `concurrent.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import args as argcheck
from .catalogue import Catalogue
from .facts import Fact, answer_object, read_fact, truthy
from .history import Session
from .rulebook import Rulebook, atom_reader, evaluate

ALLOW, CONFIRM, REFUSE = "allow", "confirm", "refuse"

#: What each reason means, for the person asked and the model refused.
REASON_TEXT = {
    "call_id": "the model's message does not give each call an id of its own",
    "unknown_tool": "the tool is not in the catalogue, or not bound where it was called",
    "history_invalid": "the session's history does not verify",
    "argument_schema": "an argument does not fit the tool's declared arguments",
    "undeclared_destination": "an argument names a destination the tool may not send to",
    "order_rule": "the tool's order rule does not allow it at this point of the session",
    "rulebook": "the rulebook's routes do not allow it",
    "fact_unreadable": "a fact the rulebook needs could not be read",
    "tainted_call": "content from outside entered the session before this call",
    "irreversible_pivot": "the call cannot be undone",
    "write": "the call changes something",
    "declined": "the person declined it",
    "guard_error": "the tool check could not decide it",
    "retry": "the call was already attempted (a retry): an attempt is a call, and its effect may have happened",
    "concurrent": "the call runs alongside other branches (a Send fan-out) the guard cannot serialise it with",
}


@dataclass
class Call:
    """A tool call: the tool's name, its arguments, and the model's call id."""

    tool: str
    args: dict
    call_id: str | None = None


@dataclass
class Decision:
    """`outcome` (`allow`, `confirm`, `refuse`), its `reasons` (codes of `REASON_TEXT`), and a
    `message` naming the rule (for a refusal, what the model is told)."""

    outcome: str
    reasons: list[str] = field(default_factory=list)
    message: str = ""
    detail: dict = field(default_factory=dict)


@dataclass
class Rules:
    """What the guard decides from: the catalogue, the rulebook record (or None), the facts, the
    taint policy, and whether every turn's input comes from outside."""

    catalogue: Catalogue
    rulebook: Rulebook | None = None
    facts: list[Fact] = field(default_factory=list)
    taint_policy: str = "confirm"
    input_reads_outside: bool = False


def refuse(reason: str, message: str, **detail: Any) -> Decision:
    return Decision(REFUSE, [reason], message, detail)


def decide(rules: Rules, call: Call, session: Session, *, turn: int, earlier: list[tuple[Call, Decision]] = (),
           bound: set[str] | None = None, context: dict | None = None) -> Decision:
    """The decision on `call` (SPEC 12.1's table) over the verified `session`. `earlier`: the
    calls before this one in its batch with their decisions from rules 1-7; `bound`: the tools
    the calling node binds (None: any catalogue tool); `context`: the values the application
    gives for `from: caller` facts and rulebook comparisons. Never raises: an internal error is a
    refusal with the reason `guard_error`."""
    try:
        return _decide(rules, call, session, turn, list(earlier), bound, context or {})
    except Exception as e:  # noqa: BLE001 - fail closed: an error refuses the call
        return refuse("guard_error", f"the tool check could not decide the call ({type(e).__name__}: {e})")


def _decide(rules: Rules, call: Call, session: Session, turn: int, earlier: list[tuple[Call, Decision]],
            bound: set[str] | None, context: dict) -> Decision:
    tool = rules.catalogue.get(call.tool)
    # 1
    if tool is None:
        return refuse("unknown_tool", f"'{call.tool}' is not in the catalogue ({rules.catalogue.source})")
    if bound is not None and call.tool not in bound:
        return refuse("unknown_tool", f"'{call.tool}' is not bound where it was called (bound: {', '.join(sorted(bound))})")
    # 2
    if session.problem is not None:
        if session.problem_reason != "history_invalid":
            return refuse(session.problem_reason, f"the tool check could not decide the call: {session.problem}")
        return refuse("history_invalid", f"the session's history does not verify: {session.problem}")
    # 3
    problem = argcheck.schema_problem(tool, call.args) or argcheck.text_problem(call.args)
    if problem is not None:
        return refuse("argument_schema", f"the arguments of '{tool.name}' do not fit its schema: {problem}")
    # 4
    problem = argcheck.destination_problem(tool, call.args)
    if problem is not None:
        return refuse("undeclared_destination", problem)
    # 5
    tainted = session.tainted or rules.input_reads_outside
    for a in tool.after:
        if a not in session.ran:
            return refuse("order_rule", f"'{tool.name}' must come after '{a}', which has not run in this session",
                          rule=f"after {a}")
    for b in tool.not_after:
        if b == "untrusted":
            if tainted:
                return refuse("order_rule", f"'{tool.name}' may not run after content from outside entered the "
                                            "session (not_after: untrusted)", rule="not_after untrusted")
        elif b in session.ran:
            return refuse("order_rule", f"'{tool.name}' may not run after '{b}', which ran in this session",
                          rule=f"not_after {b}")
    if tool.at_most is not None:
        per_turn = tool.at_most.per_turn
        used = session.count(tool.name, turn if per_turn else None)
        used += sum(1 for c, d in earlier if c.tool == tool.name and d.outcome != REFUSE)
        if used >= tool.at_most.count:
            span = "this turn" if per_turn else "this session"
            return refuse("order_rule", f"'{tool.name}' may run at most {tool.at_most.count} time(s) in {span}, "
                                        f"and {used} ran or are asked for", rule=f"at_most {tool.at_most.count}")
    # 6
    if rules.rulebook is not None:
        d = _rulebook(rules, call, session, context)
        if d is not None:
            return d
    # 7, 8
    reasons: list[str] = []
    if tainted and (tool.is_write or tool.privileged):
        if rules.taint_policy == "refuse":
            return refuse("tainted_call", f"'{tool.name}' is a {'write' if tool.is_write else 'privileged call'} "
                                          "after content from outside entered the session (taint_policy: refuse)")
        reasons.append("tainted_call")
    if tool.is_write:
        if tool.irreversible:
            reasons.append("irreversible_pivot")
        reasons.append("write")
    if reasons:
        return Decision(CONFIRM, reasons, f"'{tool.name}' needs a person's confirmation: "
                                          + "; ".join(REASON_TEXT[r] for r in reasons))
    # 9
    return Decision(ALLOW, [], f"'{tool.name}' is allowed")


def _rulebook(rules: Rules, call: Call, session: Session, context: dict) -> Decision | None:
    rb = rules.rulebook
    assert rb is not None
    routes = rb.routes_of(call.tool, list(rules.catalogue.tools))
    if not routes:
        return None
    facts = {f.name: f for f in rules.facts}

    def fact_value(name: str) -> bool | None:
        f = facts.get(name)
        if f is not None and not f.from_caller:
            e = session.latest_answer(f.tool or "", f.same, call.args)
            if e is None:
                return False
            v = (e.get("facts") or {}).get(name, None)
            return v if isinstance(v, bool) or v is None else bool(v)
        if name in context:
            return truthy(context[name])
        return False

    atom, unread = atom_reader(rb, fact_value, context)
    verdict = evaluate({"or": [r.cond for r in routes]}, atom)
    flows = sorted({f"'{r.flow}' ({r.where})" for r in routes})
    if verdict is True:
        return None
    if verdict is None:
        return refuse("fact_unreadable", f"the rulebook's flow {', '.join(flows)} depends on what could not be read: "
                                         f"{', '.join(dict.fromkeys(unread))}", flows=[r.flow for r in routes])
    return refuse("rulebook", f"the rulebook's flow {', '.join(flows)} does not allow '{call.tool}' here",
                  flows=[r.flow for r in routes])


def facts_of(rules: Rules, tool: str, result: Any) -> dict:
    """The values of the facts `tool`'s answer gives (recorded in its history entry)."""
    mine = [f for f in rules.facts if f.tool == tool]
    if not mine:
        return {}
    ans = answer_object(result)
    return {f.name: read_fact(f, ans) for f in mine}
