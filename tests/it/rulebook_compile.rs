//! The rulebook compiler on small Colang texts (SPEC 5): routes with their path conditions, the
//! narrowing an `if` that stops gives what follows, calls run in place, dead statements,
//! variables read before written, and `else` branches that execute what the `if` guarded.

use stalwart::rulebook::budget::Budgets;
use stalwart::rulebook::compile::{compile, Compiled, Input};
use stalwart::rulebook::flows::Version;
use stalwart::rulebook::{colang1, colang2};

fn v1(text: &str) -> Compiled {
    let file = colang1::parse(text).expect("parses");
    let flows = colang1::lower(&file);
    compile(
        &[Input {
            path: "policy.co".into(),
            version: Version::V1,
            flows: &flows,
        }],
        &Budgets::default(),
    )
    .expect("within its budgets")
}

/// `(action, line, condition as the compiler shows it, flow)` for every route.
fn routes(c: &Compiled) -> Vec<(String, usize, String, String)> {
    c.routes
        .iter()
        .map(|r| {
            (
                r.action.clone(),
                r.at.line,
                c.atoms.show(&r.cond),
                r.flow.clone(),
            )
        })
        .collect()
}

fn r(a: &str, line: usize, cond: &str, flow: &str) -> (String, usize, String, String) {
    (a.into(), line, cond.into(), flow.into())
}

#[test]
fn an_if_that_stops_narrows_what_follows() {
    let c = v1("define flow refunds\n  user ask refund\n  if not $order_paid\n    bot refuse\n    stop\n  execute refund_card\n");
    assert_eq!(
        routes(&c),
        vec![r("refund_card", 6, "$order_paid", "refunds")]
    );
    let via: Vec<&str> = c.routes[0].via.iter().map(|h| h.what.as_str()).collect();
    assert_eq!(
        via,
        [
            "flow refunds",
            "user ask refund",
            "else of if not $order_paid",
            "execute refund_card"
        ]
    );
    assert!(c.dead.is_empty());
}

#[test]
fn else_if_chains_and_else() {
    let c = v1("define flow f\n  if $a\n    execute x\n  else if $b\n    execute y\n  else\n    execute z\n");
    assert_eq!(
        routes(&c),
        vec![
            r("x", 3, "$a", "f"),
            r("y", 5, "not $a and $b", "f"),
            r("z", 7, "not $a and not $b", "f"),
        ]
    );
}

#[test]
fn a_subflow_runs_in_place_under_its_callers_condition() {
    let c = v1("define subflow pay\n  execute charge_card\n\ndefine flow f\n  if $card_on_file\n    do pay\n\ndefine flow g\n  do pay\n");
    // The subflow is called, so it starts no route of its own; each caller's route reaches it.
    assert_eq!(
        routes(&c),
        vec![
            r("charge_card", 2, "$card_on_file", "f"),
            r("charge_card", 2, "True", "g")
        ]
    );
    // `stop` in a called subflow ends the caller's route too.
    let c = v1("define subflow check\n  if not $ok\n    stop\n\ndefine flow f\n  do check\n  execute refund_card\n");
    assert_eq!(routes(&c), vec![r("refund_card", 7, "$ok", "f")]);
}

#[test]
fn recursion_ends() {
    let c = v1("define flow a\n  do b\n  execute x\n\ndefine flow b\n  do a\n  execute y\n");
    let mut got: Vec<String> = c.routes.iter().map(|r| r.action.clone()).collect();
    got.sort();
    got.dedup();
    assert_eq!(got, ["x", "y"]);
}

#[test]
fn statements_after_stop_are_dead_and_located() {
    let c = v1("define flow f\n  if $a\n    bot refuse\n    stop\n    execute refund_card\n  execute other\n");
    assert_eq!(c.dead.len(), 1);
    let d = &c.dead[0];
    assert_eq!(
        (d.at.line, d.what.as_str(), d.after.line, d.ender.as_str()),
        (5, "execute refund_card", 4, "stop")
    );
    assert_eq!(routes(&c), vec![r("other", 6, "not $a", "f")]);
}

#[test]
fn reads_before_writes() {
    let c = v1("define flow f\n  if not $blocked\n    execute x\n  $ok = execute check\n  if $ok\n    execute y\n  if $maybe\n    bot hi\n  else\n    execute z\n");
    let reads: Vec<(&str, usize, bool, Option<&str>)> = c
        .reads
        .iter()
        .map(|r| {
            (
                r.var.as_str(),
                r.at.line,
                r.negated,
                r.else_executes.as_deref(),
            )
        })
        .collect();
    // `$ok` was written by the execute before it is read; `$blocked` and `$maybe` were not.
    assert_eq!(
        reads,
        vec![("blocked", 2, true, None), ("maybe", 7, false, Some("z"))]
    );
}

#[test]
fn an_else_that_executes_what_the_if_guarded() {
    let c = v1("define flow f\n  if $paid\n    execute refund_card\n  else\n    bot sorry\n    execute refund_card\n");
    assert_eq!(c.else_execs.len(), 1);
    let e = &c.else_execs[0];
    assert_eq!(
        (
            e.action.as_str(),
            e.if_at.line,
            e.then_at.line,
            e.else_at.line
        ),
        ("refund_card", 2, 3, 6)
    );
}

#[test]
fn while_loops_guard_their_body() {
    let c = v1("define flow f\n  while $more\n    execute fetch\n  execute done\n");
    assert_eq!(
        routes(&c),
        vec![r("fetch", 3, "$more", "f"), r("done", 4, "not $more", "f")]
    );
}

#[test]
fn colang_2_actions_and_flows() {
    let text = "flow main\n  activate refunds\n\nflow refunds\n  match user asked refund\n  $paid = await CheckOrderAction(id=$id)\n  if $paid\n    await RefundCardAction(id=$id)\n  else\n    bot say \"no\"\n";
    let file = colang2::parse(text).expect("parses");
    let flows = colang2::lower(&file);
    let c = compile(
        &[Input {
            path: "policy.co".into(),
            version: Version::V2,
            flows: &flows,
        }],
        &Budgets::default(),
    )
    .expect("within its budgets");
    // `refunds` is activated by `main`, so only `main` starts routes.
    assert_eq!(
        routes(&c),
        vec![
            r("CheckOrderAction", 6, "True", "main"),
            r("RefundCardAction", 8, "$paid", "main"),
        ]
    );
    assert!(c.reads.is_empty(), "{:?}", c.reads);
}

#[test]
fn an_assignment_forgets_what_was_known_of_the_old_value() {
    let c = v1("define flow f\n  if $ok\n    $ok = execute recheck\n    if not $ok\n      execute escalate\n");
    // Without forgetting, the route would need `$ok and not $ok`, which no run satisfies.
    assert_eq!(
        routes(&c),
        vec![
            r("recheck", 3, "$ok", "f"),
            r("escalate", 5, "not $ok", "f")
        ]
    );
}

/// Branches that all go on meet again as one route: its condition is what held before the `if`
/// (the OR of the branches, proved valid by Z3, is dropped), and its witness keeps only the lines
/// every branch took, never a branch line whose condition the route does not imply.
#[test]
fn branches_that_go_on_are_joined() {
    let c = v1("define flow f\n  user ask refund\n  if $paid\n    execute tool1\n  if $a\n    bot yes\n  else if $b\n    bot maybe\n  else\n    bot no\n  execute tool2\n");
    assert_eq!(
        routes(&c),
        vec![r("tool1", 4, "$paid", "f"), r("tool2", 11, "True", "f")]
    );
    let via: Vec<&str> = c.routes[1].via.iter().map(|h| h.what.as_str()).collect();
    assert_eq!(via, ["flow f", "user ask refund", "execute tool2"]);
}
