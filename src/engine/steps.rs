//! The witness vocabulary both engines write (SPEC 4): the steps of entering a node with its
//! pauses answered, of leaving one, and each step's count of node steps in its turn. Sharing them
//! keeps the explicit and the Z3 engines' witnesses in one shape, which the plain interpreter
//! replays.

use crate::findings::{Step, StepKind};
use crate::input::ir::When;
use crate::model::{FlatModel, NodeIx, ToolIx};

/// Sets each step's `run_steps`: node steps taken in its turn so far.
pub(crate) fn number_run_steps(m: &FlatModel, steps: &mut [Step]) {
    let mut count = 0;
    let mut turn = 0;
    for s in steps.iter_mut() {
        if s.turn != turn {
            turn = s.turn;
            count = 0;
        }
        if s.kind == StepKind::Enter && m.node_ix(&s.node).is_some_and(|n| m.nodes[n].costs_step())
        {
            count += 1;
        }
        s.run_steps = count;
    }
}

/// The step of a call of `tool` at node `n` in `turn` (`refused`: it ran nothing). A call the
/// node reviews (a `call` interrupt, SPEC 12.2) carries the person's answer: `when` is `call` and
/// `yes` is whether it ran.
pub(crate) fn call_step(m: &FlatModel, n: NodeIx, tool: ToolIx, turn: u32, refused: bool) -> Step {
    call_step_as(m, n, tool, turn, refused, false)
}

/// [`call_step`], with `standing` set when the person's yes is for the rest of the run (SPEC
/// 3.1 "Standing approvals"; only on a call its node reviews with `standing`).
pub(crate) fn call_step_as(
    m: &FlatModel,
    n: NodeIx,
    tool: ToolIx,
    turn: u32,
    refused: bool,
    standing: bool,
) -> Step {
    let node = &m.nodes[n];
    let mut c = Step::new(StepKind::Call, &node.qid, turn);
    c.tool = Some(m.tools[tool].name.clone());
    c.guarded = Some(node.guarded());
    c.refused = refused;
    if node.reviews_calls_of(tool) {
        c.when = Some(When::Call.as_str());
        c.yes = Some(!refused);
        c.standing = standing && !refused && node.stands_for(tool);
    }
    c.loc = Some(node.loc);
    c
}

/// Appends the `after` confirmations of leaving node `n` in `turn`.
pub(crate) fn leave_steps(m: &FlatModel, n: NodeIx, turn: u32, steps: &mut Vec<Step>) {
    for p in &m.nodes[n].on_leave {
        let mut c = Step::new(StepKind::Confirm, &m.nodes[n].qid, turn);
        c.tool = p.tool.map(|t| m.tools[t].name.clone());
        c.yes = Some(true);
        c.when = Some(p.when.as_str());
        c.loc = Some(p.loc);
        steps.push(c);
    }
}

/// Appends entering node `n` in `turn` and its `before`/`inside` answers; bit j of `branch` is
/// the answer to the node's j-th `inside` pause (1 is yes).
pub(crate) fn enter_steps(m: &FlatModel, n: NodeIx, branch: u32, turn: u32, steps: &mut Vec<Step>) {
    let mut e = Step::new(StepKind::Enter, &m.nodes[n].qid, turn);
    e.loc = Some(m.nodes[n].loc);
    steps.push(e);
    let mut inside = 0;
    for p in &m.nodes[n].on_enter {
        let yes = if p.when == When::Inside {
            let bit = 1u32 << inside.min(31);
            inside += 1;
            branch & bit != 0
        } else {
            true
        };
        let mut c = Step::new(StepKind::Confirm, &m.nodes[n].qid, turn);
        c.tool = p.tool.map(|t| m.tools[t].name.clone());
        c.yes = Some(yes);
        c.when = Some(p.when.as_str());
        c.loc = Some(p.loc);
        steps.push(c);
    }
}
