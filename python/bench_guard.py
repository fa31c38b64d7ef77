"""How much the guard adds to a tool call (issue 15: under 1 ms per call). A benchmark that
prints figures, not a test:

    PYTHONPATH=python python python/bench_guard.py [--calls N]

1. The guard's own work per call, `Guard.wrap_tool_call` around a tool that returns at once:
   verifying the session's history (every entry's MAC), deciding the call, sealing its entry,
   for histories of 0, 10, 50 and 200 entries, with and without a key, for an allowed read and a
   write the order rules refuse. The median over N calls, in microseconds.
2. In a graph: a scripted create_agent session of reads, the guard's own CPU time per call
   (its thread's CPU time in `wrap_tool_call`, less the tool's), and the session's CPU time per
   call (all threads) with a pass-through middleware and with the guard (noisier: it includes
   LangGraph's own work on the history channel and varies with the machine's load).
3. What a checkpointer keeps: in the same session, how many times and how many bytes the
   `InMemorySaver` stores the history channel, beside the `messages` channel (issue 27: a
   checkpoint stores the history again only at a step that adds to it).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent / "tests"))
warnings.filterwarnings("ignore")

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage  # noqa: E402

from stalwart_export import HISTORY_KEY, Guard  # noqa: E402
from stalwart_export.guard.core import Batch  # noqa: E402
from stalwart_export.guard.decide import Call  # noqa: E402
from stalwart_export.guard.history import verify  # noqa: E402
from stalwart_export.langgraph.guard.trace import NO_THREAD  # noqa: E402

CATALOGUE = {"format": "qls-catalogue/1", "tools": {
    "get_order": {"kind": "read", "args": {"order_id": {"type": "string"}}},
    "refund_order": {"kind": "write", "args": {"order_id": {"type": "string"}, "amount": {"type": "number"}},
                     "order": {"after": ["get_order"], "not_after": ["close_account"], "at_most": 3}},
    "close_account": {"kind": "write"},
}}


def history(guard: Guard, n: int) -> list:
    """A verified history of `n` reads, of the thread a request without a config is on (a keyed
    history is bound to its thread)."""
    entries: list = []
    for k in range(n):
        session = verify(entries, guard.chain, NO_THREAD)
        b = Batch(guard.rules, guard.chain, [Call("get_order", {"order_id": str(k)}, f"h{k}")], session, 1, "tools",
                  None, {})
        o = b.settle([0], lambda q: None)[0]
        entries.append(b.entry(o, '{"status": "paid"}'))
    return entries


def request(tool: str, args: dict, hist: list) -> SimpleNamespace:
    tc = {"name": tool, "args": args, "id": "c1", "type": "tool_call"}
    state = {"messages": [HumanMessage(content="go"), AIMessage(content="", tool_calls=[tc])], HISTORY_KEY: hist}
    req = SimpleNamespace(tool_call=tc, state=state, runtime=SimpleNamespace(config={}, tools=None))
    req.override = lambda **kw: SimpleNamespace(**{**vars(req), **kw})
    return req


def handler(req: SimpleNamespace) -> ToolMessage:
    return ToolMessage(content="ok", tool_call_id=req.tool_call["id"], name=req.tool_call["name"])


def per_call(guard: Guard, tool: str, args: dict, hist: list, calls: int) -> float:
    req = request(tool, args, hist)
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        guard.wrap_tool_call(req, handler)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def _session(calls: int, middleware: list) -> float:
    """The CPU time (all threads) of a create_agent session of `calls` reads."""
    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver

    from graphs import call, model, tool

    @tool
    def get_order(order_id: str) -> str:
        """Look up an order."""
        return "paid"

    turns = [[call("get_order", {"order_id": str(k)}, i=k)] for k in range(calls)] + ["done"]
    app = create_agent(model(*turns), [get_order], middleware=middleware, checkpointer=InMemorySaver())
    t0 = time.process_time()
    app.invoke({"messages": [HumanMessage(content="go")]}, {"configurable": {"thread_id": "b"}, "recursion_limit": 10_000})
    return time.process_time() - t0


def in_graph(calls: int) -> tuple[float, float, float]:
    """(the guard's own CPU time per call inside a create_agent session, the session's CPU time
    per call with a pass-through middleware, and with the guard), in microseconds."""
    from langchain.agents.middleware import AgentMiddleware

    own = {"t": 0.0, "n": 0}

    class TimedGuard(Guard):
        def wrap_tool_call(self, request, handler):
            spent = {"t": 0.0}

            def timed_handler(r):
                t = time.thread_time()
                out = handler(r)
                spent["t"] += time.thread_time() - t
                return out

            t0 = time.thread_time()
            out = super().wrap_tool_call(request, timed_handler)
            own["t"] += time.thread_time() - t0 - spent["t"]
            own["n"] += 1
            return out

    class PassThrough(AgentMiddleware):
        def wrap_tool_call(self, request, handler):
            return handler(request)

    plain = min(_session(calls, [PassThrough()]) for _ in range(3))
    guarded = min(_session(calls, [Guard(CATALOGUE)]) for _ in range(3))
    _session(calls, [TimedGuard(CATALOGUE)])
    return own["t"] / own["n"] * 1e6, plain / calls * 1e6, guarded / calls * 1e6


def checkpoint_bytes(calls: int) -> tuple[int, int, int, int]:
    """(history versions stored, their bytes, messages versions stored, their bytes) after a
    create_agent session of `calls` reads with the guard, as `InMemorySaver` keeps them."""
    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver

    from graphs import call, model, tool

    @tool
    def get_order(order_id: str) -> str:
        """Look up an order."""
        return "paid"

    saver = InMemorySaver()
    turns = [[call("get_order", {"order_id": str(k)}, i=k)] for k in range(calls)] + ["done"]
    app = create_agent(model(*turns), [get_order], middleware=[Guard(CATALOGUE)], checkpointer=saver)
    app.invoke({"messages": [HumanMessage(content="go")]}, {"configurable": {"thread_id": "b"}, "recursion_limit": 10_000})

    def stored(channel: str) -> tuple[int, int]:
        keys = [k for k in saver.blobs if k[2] == channel]
        return len(keys), sum(len(saver.blobs[k][1]) for k in keys)

    return (*stored(HISTORY_KEY), *stored("messages"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=2000)
    n = ap.parse_args().calls
    print(f"The guard's own work per call (median of {n} calls of Guard.wrap_tool_call), in microseconds:")
    print(f"{'history entries':>16} {'read allowed':>14} {'write refused':>14} {'read, keyed':>12}")
    worst = 0.0
    for size in (0, 10, 50, 200):
        g, gk = Guard(CATALOGUE), Guard(CATALOGUE, key=b"bench-key")
        h, hk = history(g, size), history(gk, size)
        read = per_call(g, "get_order", {"order_id": "42"}, h, n)
        refused = per_call(g, "refund_order", {"order_id": "42", "amount": 1.0}, h[:0], n)
        keyed = per_call(gk, "get_order", {"order_id": "42"}, hk, n)
        worst = max(worst, read, refused, keyed) if size <= 50 else worst
        print(f"{size:>16} {read:>14.1f} {refused:>14.1f} {keyed:>12.1f}")
    print(f"Worst up to 50 entries: {worst:.1f} us per call ({'under' if worst < 1000 else 'OVER'} 1 ms).")
    calls = max(20, min(100, n // 10))
    own, plain, guarded = in_graph(calls)
    print(f"In a create_agent session of {calls} calls (the history grows to {calls} entries): the guard's own CPU "
          f"time is {own:.0f} us per call ({'under' if own < 1000 else 'OVER'} 1 ms); the whole session takes "
          f"{plain:.0f} us of CPU per call with a pass-through middleware and {guarded:.0f} us with the guard "
          f"(best of 3; this difference also counts LangGraph's work on the history channel, and varies with the "
          f"machine's load)")
    hv, hb, mv, mb = checkpoint_bytes(calls)
    print(f"What the checkpointer keeps after that session: the history {hv} times ({hb} bytes in all), the "
          f"messages {mv} times ({mb} bytes in all); a version of the history is stored only at a step that "
          f"adds to it, as LangGraph stores every channel that changed")

if __name__ == "__main__":
    main()
