"""The guard's ground: what the tool check at run time (SPEC 12.1) decides, shared by every
framework's adapter (LangGraph's `stalwart_export.langgraph.guard`, the OpenAI Agents SDK's
`stalwart_export.openai_agents.guard`). It imports no framework.

Modules, each one job: `doc` (reading JSON/YAML with positions, as the verifier), `catalogue`,
`facts`, `rulebook` (the compiled record and its routes), `history` (the hash chain kept with the
session), `args` (argument schema and destinations), `decide` (the rules, in order),
`review` (what the person is asked and their answer), `core` (a batch through the check),
`concurrent` (calls of concurrent branches serialised), `sealed` (the records this process
sealed per thread), `state` (a state as a mapping, dataclass or pydantic model), `lazy` (the catalogue read
at the first call when it is not written yet).
"""

from .decide import REASON_TEXT
from .doc import GuardConfigError
from .history import HISTORY_KEY, merge_history, read_history

__all__ = ["GuardConfigError", "HISTORY_KEY", "REASON_TEXT", "merge_history", "read_history"]
