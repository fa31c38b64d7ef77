"""One batch of calls through the tool check: decide each call, ask the person where a call must
be confirmed, and record what happened (SPEC 12.1 "confirm", "refuse").

A batch is the calls one model message asked for. `Batch.settle` decides the calls it is given
over the history before the batch (`decide.py`), then asks the person about each call that needs
it, in the batch's order, through LangGraph's `interrupt()` (`review.py`), before anything runs.
An answer settles the call:

* approve: the call runs with exactly the arguments shown (a deep copy taken when it was shown);
* edit: the edited call is a new call, checked again from rule 1; if the rules refuse it, it does
  not run; if they would ask again, the edit is the person's approval of exactly that call (they
  wrote it), so it runs as edited. An edit naming another tool is refused when later calls of the
  batch follow it: they were decided with the call as the model named it, so a rename would escape
  their `at_most` and order rules;
* reject (or an answer the guard cannot read): nothing runs; the model is told the person
  declined.

`Outcome` says what to do with each call; `Batch.entry` makes its history entry once the call
ran (or was refused), so the entry records the call that really ran and the facts its answer
gave. Asking before running matters in LangGraph: a node that pauses is run again from its start
when the run resumes, so a tool that ran before the pause would run twice.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Callable

from .decide import ALLOW, CONFIRM, REFUSE, Call, Decision, Rules, decide, facts_of, refuse
from .concurrent import bears_limit
from .history import ENTRY_VERSION, Chain, Session
from .review import APPROVE, EDIT, question, read_answer


@dataclass
class Outcome:
    """What happens to one call: `run` it (as `call`, possibly edited) or not; the `decision`
    that settled it; the person's `answer` (approve, edit, reject, or None when not asked);
    `proposed`, the model's call when the person edited it; `message` for a refusal."""

    index: int
    call: Call
    run: bool
    decision: Decision
    answer: str | None = None
    proposed: Call | None = None
    message: str = ""
    reasons: list[str] = field(default_factory=list)
    #: A retry of a call already attempted (`attempts.py`): the attempt's own record, written again.
    stored: str | None = None


@dataclass
class Batch:
    """The calls of one batch as the guard sees them: `calls` in the model's order, the verified
    `session` before the batch, the `turn`, the `node` (qualified id) they are made at, and the
    tools it binds (`bound`, None for any); `records`, the history before it, and `written`, the
    records of its calls (`history_after()` is both, what a hand-off carries)."""

    rules: Rules
    chain: Chain
    calls: list[Call]
    session: Session
    turn: int
    node: str | None
    bound: set[str] | None
    context: dict
    #: The history's records before the batch, as the state held them.
    records: tuple = ()
    #: The records of the batch's calls made so far (`entry`), in the order they were made.
    written: list = field(default_factory=list)
    #: Why the model message's call ids cannot place its calls (`id_problem`): every call is refused.
    call_problem: str | None = None
    #: The mark of the batch's turn (the person's message that started it; `run.turn_of`).
    human: str | None = None
    #: Why the batch's task runs alongside others the guard cannot serialise it with
    #: (`concurrent.py`): every call that bears a limit is refused `concurrent`.
    concurrent: str | None = None

    def decisions(self) -> list[Decision]:
        """Rules 1-8 for every call of the batch, in order (each sees the ones before it); every
        call refused `call_id` when the message's ids cannot place its calls."""
        if self.call_problem is not None:
            return [refuse("call_id", f"'{c.tool}' did not run: {self.call_problem}") for c in self.calls]
        out: list[Decision] = []
        earlier: list[tuple[Call, Decision]] = []
        for c in self.calls:
            d = decide(self.rules, c, self.session, turn=self.turn, earlier=earlier, bound=self.bound,
                       context=self.context)
            if self.concurrent is not None and d.outcome != REFUSE and bears_limit(self.rules.catalogue.get(c.tool)):
                d = refuse("concurrent", self.concurrent.format(tool=c.tool))
            out.append(d)
            earlier.append((c, d))
        return out

    def settle(self, indexes: list[int], ask: Callable[[dict], Any],
               deny_asking: str | None = None) -> list[Outcome]:
        """The outcomes of the calls at `indexes`: decided, then the person asked (with `ask`,
        LangGraph's `interrupt`) about each that needs it, in order. With `deny_asking`, a call
        that needs a person is refused with that message instead (no one can be asked safely)."""
        decisions = self.decisions()
        out: list[Outcome] = []
        for i in indexes:
            call, d = self.calls[i], decisions[i]
            if d.outcome == REFUSE:
                out.append(Outcome(i, call, False, d, message=d.message, reasons=list(d.reasons)))
            elif d.outcome == ALLOW:
                out.append(Outcome(i, call, True, d, reasons=list(d.reasons)))
            elif deny_asking is not None:
                out.append(Outcome(i, call, False, d, message=deny_asking, reasons=["guard_error"]))
            else:
                out.append(self._confirm(i, call, d, decisions[:i], ask))
        return out

    def _confirm(self, i: int, call: Call, d: Decision, before: list[Decision], ask: Callable[[dict], Any]) -> Outcome:
        shown = Call(call.tool, copy.deepcopy(call.args), call.call_id)
        q = question(shown, d, self.session.head)
        answer = read_answer(ask(q), shown, q["digest"])
        if answer.kind == APPROVE:
            return Outcome(i, shown, True, d, answer=APPROVE, reasons=list(d.reasons))
        if answer.kind == EDIT and answer.call is not None:
            edited = answer.call
            if edited.tool != call.tool and i < len(self.calls) - 1:
                # the batch's later calls were decided with this call as the model named it (at_most,
                # after, not_after count it by its tool): a rename would escape them
                return Outcome(i, edited, False, refuse("order_rule", "an edit may not name another tool here"),
                               answer=EDIT, proposed=shown, reasons=["order_rule"],
                               message=(f"the person's edit of the call is refused: it names '{edited.tool}' in place of "
                                        f"'{call.tool}', and the calls after it in the same model message were decided "
                                        f"without it; ask for '{edited.tool}' in a message of its own"))
            earlier = list(zip(self.calls[:i], before))
            d2 = decide(self.rules, edited, self.session, turn=self.turn, earlier=earlier, bound=self.bound,
                        context=self.context)
            if d2.outcome == REFUSE:
                return Outcome(i, edited, False, d2, answer=EDIT, proposed=shown,
                               message=f"the person's edit of the call is refused: {d2.message}",
                               reasons=list(d2.reasons))
            return Outcome(i, edited, True, d2, answer=EDIT, proposed=shown, reasons=list(d2.reasons))
        why = answer.unreadable or (f"the person declined it: {answer.message}" if answer.message
                                    else "the person declined it")
        return Outcome(i, shown, False, d, answer="reject", message=f"'{call.tool}' did not run: {why}",
                       reasons=list(d.reasons) + ["declined"])

    def entry(self, o: Outcome, result: Any = None, *, keep: bool = True) -> str:
        """The sealed history record of outcome `o` (`history.py`); `result` is the tool's answer
        when it ran. With `keep=False` the record is only made (an attempt's, `attempts.py`), not
        counted among the batch's `written`."""
        tool = self.rules.catalogue.get(o.call.tool)
        ran = o.run
        e = {
            "v": ENTRY_VERSION,
            "batch": len(self.session.entries),
            "i": o.index,
            "turn": self.turn,
            "human": self.human,
            "node": self.node,
            "tool": o.call.tool,
            "args": o.call.args,
            "call_id": o.call.call_id,
            # The check's decision on the call recorded: an approved or edited call that ran was
            # confirmed; an edit the rules refused is a refusal.
            "decision": CONFIRM if (ran and o.answer is not None) else o.decision.outcome,
            "reasons": o.reasons,
            "answer": o.answer,
            "ran": ran,
            "outside": bool(ran and tool is not None and tool.reads_outside),
            "facts": facts_of(self.rules, o.call.tool, result) if ran else {},
            "proposed": None if o.proposed is None else {"tool": o.proposed.tool, "args": o.proposed.args},
            "prev": self.session.head,
        }
        record = self.chain.seal(e)
        if keep:
            self.written.append(record)
        return record

    def history_after(self) -> list:
        """The history's records with the batch's calls made so far: what a hand-off carries."""
        return list(self.records) + list(self.written)


def id_problem(tool_calls: list) -> str | None:
    """Why the calls of one model message cannot each be placed and recorded once (SPEC 12.1 "One
    call, one decision, one record"): a call whose id is missing or empty, or an id two calls share.
    None when every call has an id of its own."""
    seen: set = set()
    for c in tool_calls:
        cid = c.get("id") if isinstance(c, dict) else None
        if not isinstance(cid, str) or not cid:
            return ("the model's message has a tool call without an id, so its calls cannot each be decided and "
                    "recorded once: the whole message is refused; ask again with an id for each call")
        if cid in seen:
            return (f"the model's message has several tool calls with the id {cid!r}, so they cannot each be decided "
                    "and recorded once: the whole message is refused; ask again with an id for each call")
        seen.add(cid)
    return None


def refusal_text(o: Outcome) -> str:
    """What the model is told about a call that did not run: the reasons and the rule."""
    codes = ", ".join(o.reasons) or "refused"
    return f"Refused by the tool check ({codes}): {o.message}"
