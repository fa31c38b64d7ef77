//! Shared searches (issue 19, `engine::share`): an instance answered by its group's one search
//! gets exactly the result its own search gives: the same violations with the same witnesses,
//! the same depth, `states`, `generated` and note. Checked group by group on the benchmark's
//! families (a few seeds each), with the default limits and with a state budget small enough
//! that searches run out of it.

use crate::common;

use stalwart::engine::{explicit, instances, share, Depth, InstanceResult, Limits};
use stalwart::gen;
use stalwart::model::FlatModel;

/// How the compared members' searches ended, so the test shows each way was compared.
#[derive(Default, Debug)]
struct Tally {
    groups: usize,
    members: usize,
    /// Stopped within a turn with every violation it could have (concluded apart from the rest).
    filled: usize,
    /// Held at every depth, or up to the bound, with the rest of its group.
    held: usize,
    /// Ran out of the state budget.
    undecided: usize,
    /// Needed a refined slice after the shared search.
    refined: usize,
}

/// Everything a result says, as text (the results carry witnesses, which have no equality).
fn text(r: &InstanceResult) -> String {
    format!("{r:?}")
}

/// Compares each group's shared search with each member's own, under `limits`.
fn compare(m: &FlatModel, limits: Limits, what: &str, tally: &mut Tally) {
    let insts = instances(m);
    let groups = share::groups(m, &insts);
    let checks = m.tool_checks();
    for members in &groups.members {
        assert!(members.len() >= 2, "{what}: a group of one");
        let group: Vec<_> = members.iter().map(|&i| insts[i]).collect();
        let shared = explicit::search_shared(m, &checks, &group, limits);
        assert_eq!(shared.len(), group.len(), "{what}: one result a member");
        tally.groups += 1;
        for (inst, first) in group.iter().zip(shared) {
            assert_eq!(first.instance, *inst, "{what}: results in member order");
            let first_states = first.states;
            let depth = first.depth;
            let filled = depth == Depth::Every && !first.violations.is_empty();
            let together = explicit::refine(m, &checks, first, limits);
            let alone = explicit::check(m, &checks, *inst, limits);
            assert_eq!(
                text(&together),
                text(&alone),
                "{what}: {inst:?} answered in its group differs from its own search"
            );
            tally.members += 1;
            if together.states != first_states {
                tally.refined += 1;
            } else if depth == Depth::Undecided {
                tally.undecided += 1;
            } else if filled {
                tally.filled += 1;
            } else {
                tally.held += 1;
            }
        }
    }
}

fn model_of(g: &gen::Generated) -> (tempfile::TempDir, FlatModel) {
    let (dir, inputs) = common::load_generated(g);
    let m = common::flat_gated(&inputs, g);
    (dir, m)
}

#[test]
fn a_shared_search_gives_each_instance_its_own_result() {
    let mut tally = Tally::default();
    let small = Limits {
        max_states: 400,
        ..Limits::default()
    };
    let mut families: Vec<(String, gen::Generated)> = Vec::new();
    for seed in 0..3 {
        let graphs = [
            ("subgraphs 150", gen::families::subgraphs(7 + seed, 150, 3)),
            ("subgraphs 300", gen::families::subgraphs(11 + seed, 300, 2)),
            ("mesh 120", gen::mesh(3 + seed, 120, 12, 6, 3)),
            ("react 120", gen::families::react(5 + seed, 120, 3)),
            ("chain 120", gen::families::chain(9 + seed, 120, 3)),
        ];
        families.extend(graphs.map(|(name, g)| (format!("{name} #{seed}"), g)));
    }
    for (name, g) in &families {
        let (_d, m) = model_of(g);
        compare(&m, Limits::default(), name, &mut tally);
        compare(&m, small, &format!("{name}, 400 states"), &mut tally);
    }
    eprintln!("compared: {tally:?}");
    // Every way a member's search can end was compared, many times.
    assert!(tally.groups >= 20, "{tally:?}");
    assert!(tally.filled >= 10, "{tally:?}");
    assert!(tally.held >= 10, "{tally:?}");
    assert!(tally.undecided >= 5, "{tally:?}");
    assert!(tally.refined >= 3, "{tally:?}");
}

/// The groups: the saga (O7) asks one slice of every compensable tool, so on the subgraph
/// family its instances share one search; O8 names its own tool in its slice and never shares.
#[test]
fn the_saga_shares_one_search_and_recovery_none() {
    use stalwart::Obligation;
    let g = gen::families::subgraphs(7, 300, 3);
    let (_d, m) = model_of(&g);
    let insts = instances(&m);
    let groups = share::groups(&m, &insts);
    let o7: Vec<usize> = (0..insts.len())
        .filter(|&i| insts[i].obligation == Obligation::O7)
        .collect();
    assert!(o7.len() >= 3, "{} saga instances", o7.len());
    let (g7, _) = groups.of[o7[0]].expect("the saga's instances share a search");
    assert_eq!(
        groups.members[g7], o7,
        "every saga instance in one group, in order"
    );
    for (i, inst) in insts.iter().enumerate() {
        if matches!(inst.obligation, Obligation::O1 | Obligation::O8) {
            assert_eq!(groups.of[i], None, "{inst:?} is searched alone");
        }
        if let Some((g, place)) = groups.of[i] {
            assert_eq!(groups.members[g][place], i);
        }
    }
}
