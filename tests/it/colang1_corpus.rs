//! Colang 1.0 (SPEC 2.4): the reader against NeMo Guardrails' own parser on the corpus
//! (`../shared/corpus/colang`, `expected/<stem>.json` written by `oracle.py`), syntax errors
//! with their exact line, column and message, the lowering of the shop's policy, and a fuzz
//! test that no input panics.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use serde_json::Value;
use stalwart::rulebook::colang1::{lower, parse, to_oracle_json};
use stalwart::rulebook::flows::StmtKind;

fn corpus() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/corpus/colang"
    ))
}

/// The fields the oracle writes for a 1.0 file that parsed.
const FIELDS: &[&str] = &[
    "user_messages",
    "bot_messages",
    "user_message_examples",
    "bot_message_texts",
    "imports",
    "flows",
];

/// v1 files that still differ from NeMo's reading, each with the reason. Empty: all match.
const KNOWN_DIFFERENCES: &[(&str, &str)] = &[];

/// The corpus files this crate's other parser owns (Colang 2.x) are counted in the overall rate
/// by the colang2 test; this test counts the 79 v1 files.
fn compare(stem: &str, src: &str, expected: &Value) -> Result<(), String> {
    let ok = expected["ok"].as_bool().unwrap_or(false);
    match (parse(src), ok) {
        (Ok(file), true) => {
            let got = to_oracle_json(&file);
            for f in FIELDS {
                if got[f] != expected[f] {
                    return Err(format!(
                        "{stem}: field {f} differs\n ours: {}\n nemo: {}",
                        got[f], expected[f]
                    ));
                }
            }
            Ok(())
        }
        (Err(e), false) => match expected["error_line"].as_u64() {
            Some(l) if l as usize != e.line => {
                Err(format!("{stem}: fails at line {} (NeMo: {l}): {e}", e.line))
            }
            _ => Ok(()),
        },
        (Err(e), true) => Err(format!("{stem}: we fail, NeMo reads it: {e}")),
        (Ok(_), false) => Err(format!(
            "{stem}: we read it, NeMo fails: {}",
            expected["error"]
        )),
    }
}

#[test]
fn v1_corpus_matches_nemo() {
    let root = corpus();
    let dir = root.join("v1");
    if !dir.is_dir() {
        println!(
            "skipped: the Colang corpus is not at {} (the shared folder is absent)",
            dir.display()
        );
        return;
    }
    let cases = common::oracle_cases(&root, "v1");
    let total_corpus = cases.len() + count_co(&root.join("v2"));
    let mut matched = 0usize;
    let mut failures = Vec::new();
    for (stem, src, exp) in &cases {
        let known = KNOWN_DIFFERENCES.iter().any(|(s, _)| s == stem);
        match compare(stem, src, exp) {
            Ok(()) if known => {
                failures.push(format!("{stem}: listed as a known difference but matches"))
            }
            Ok(()) => matched += 1,
            Err(_) if known => {}
            Err(e) => failures.push(e),
        }
    }
    println!("colang 1.0: {matched}/{} files match NeMo", cases.len());
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // At most 1% of the whole corpus (1.0 and 2.x) may differ: the 1.0 share of it.
    let differing = cases.len() - matched;
    assert!(
        differing * 100 <= total_corpus,
        "{differing} of {total_corpus} corpus files differ"
    );
}

fn count_co(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|r| {
            r.filter_map(Result::ok)
                .filter(|e| e.path().extension().is_some_and(|x| x == "co"))
                .count()
        })
        .unwrap_or(0)
}

const SHOP: &str = r#"define user ask refund
  "refund order 4411"
  "give the customer their money back"

define flow refunds
  user ask refund
  if $order_paid
    execute refund_card
  else
    bot refuse
"#;

#[test]
fn shop_policy_lowers() {
    let file = parse(SHOP).unwrap();
    let ff = lower(&file);
    assert_eq!(ff.user_messages.len(), 1);
    assert_eq!(ff.user_messages[0].name, "ask refund");
    assert_eq!(ff.user_messages[0].line, 1);
    assert_eq!(ff.flows.len(), 1);
    let f = &ff.flows[0];
    assert_eq!((f.name.as_str(), f.line, f.subflow), ("refunds", 5, false));
    assert_eq!(f.body.len(), 2);
    assert_eq!(
        f.body[0].kind,
        StmtKind::User {
            intent: "ask refund".into()
        }
    );
    assert_eq!((f.body[0].line, f.body[0].column), (6, 3));
    let StmtKind::If { cond, then, else_ } = &f.body[1].kind else {
        panic!("not an if: {:?}", f.body[1]);
    };
    assert_eq!(cond, "$order_paid");
    assert_eq!(
        then[0].kind,
        StmtKind::Execute {
            action: "refund_card".into(),
            args: vec![],
            result: None,
            via_bot: false
        }
    );
    assert_eq!(then[0].line, 8);
    assert_eq!(
        else_[0].kind,
        StmtKind::Bot {
            message: "refuse".into(),
            inline: false
        }
    );
    assert_eq!(else_[0].line, 10);
}

#[test]
fn lowering_of_statements() {
    let src = "define subflow check\n  $ok = execute verify(order=$id, 2)\n  bot execute_refund_card\n  do other flow\n  when user a\n    stop\n  else when user b\n    abort\n  user x or user y\n  bot \"hi\"\n";
    let ff = lower(&parse(src).unwrap());
    let f = &ff.flows[0];
    assert!(f.subflow);
    assert_eq!(
        f.body[0].kind,
        StmtKind::Execute {
            action: "verify".into(),
            args: vec![("order".into(), "$id".into()), ("$1".into(), "2".into())],
            result: Some("ok".into()),
            via_bot: false
        }
    );
    assert!(
        matches!(&f.body[1].kind, StmtKind::Execute { action, via_bot: true, .. } if action == "refund_card")
    );
    assert!(
        matches!(&f.body[2].kind, StmtKind::Call { flow, how, .. } if flow == "other flow" && how == "do")
    );
    let StmtKind::When { branches, else_ } = &f.body[3].kind else {
        panic!("{:?}", f.body[3]);
    };
    assert!(else_.is_none());
    assert_eq!(branches.len(), 2);
    assert_eq!(branches[0].1[0].kind, StmtKind::Stop);
    assert_eq!(branches[1].1[0].kind, StmtKind::Abort);
    let StmtKind::Any { alternatives } = &f.body[4].kind else {
        panic!("{:?}", f.body[4]);
    };
    assert_eq!(alternatives.len(), 2);
    assert_eq!(
        f.body[5].kind,
        StmtKind::Bot {
            message: "hi".into(),
            inline: true
        }
    );
}

fn err(src: &str) -> (usize, usize, String) {
    let e = match parse(src) {
        Ok(f) => panic!("parsed: {src:?}\n{f:?}"),
        Err(e) => e,
    };
    assert!(e.help.is_some(), "no help for {e}");
    (e.line, e.column, e.message)
}

#[test]
fn syntax_errors_say_where_and_what() {
    assert_eq!(
        err("define flow a\n  if $x\n  bot b\n"),
        (2, 3, "expected an indented block after 'if'".into())
    );
    assert_eq!(
        err("define flow a\n  bot b\n  else\n    bot c\n"),
        (3, 3, "'else' has no 'if' to belong to".into())
    );
    assert_eq!(
        err("define flow a\n  user x\n  frobnicate y\n"),
        (3, 3, "Unknown main token 'frobnicate'".into())
    );
    assert_eq!(
        err("define flow a\nbot b\n"),
        (
            1,
            1,
            "Expected indented block after define statement.".into()
        )
    );
    assert_eq!(
        err("define magic flow a\n  bot b\n"),
        (1, 1, "Unknown token: \"magic\"".into())
    );
    // A quote never closed opens a string that runs to the end of the file, which NeMo 0.24.1
    // drops (tests/data/nemo_probes: multiline_unclosed_user).
    assert!(parse("define user greet\n  \"hello\n").is_ok());
    assert_eq!(
        err("define flow a\n  $r = execute x(a=foo)\n"),
        (
            2,
            3,
            "'foo' is not a value (a string, a number, True, False, None or a $variable)".into()
        )
    );
    assert_eq!(
        err("define flow a\n  user x\n\nbot y\n"),
        (
            4,
            1,
            "'bot y' is outside any flow (or flow 'a' is defined twice)".into()
        )
    );
    assert_eq!(
        err("define flow a\n  user x or"),
        (
            2,
            10,
            "the line ends in 'or', which continues it on the next line, but the file ends here"
                .into()
        )
    );
    let mut deep = String::from("define flow a\n");
    for i in 0..80 {
        deep.push_str(&" ".repeat(2 + 2 * i));
        deep.push_str("if $x\n");
    }
    deep.push_str(&" ".repeat(2 + 2 * 80));
    deep.push_str("bot b\n");
    let (line, col, msg) = err(&deep);
    assert_eq!((line, col), (65, 129));
    assert_eq!(msg, "blocks nest more than 64 deep here");
}

// ---------------------------------------------------------------- fuzz

#[derive(Debug, Clone)]
enum Mutation {
    Truncate(usize),
    Flip(usize, char),
    Insert(usize, char),
    DeleteLine(usize),
    DoubleLine(usize),
    Indent(usize, usize),
}

fn ch() -> impl Strategy<Value = char> {
    prop_oneof![
        4 => prop::sample::select(" \n\t\r\"'$:#()=,.\\-[]{}`aeiouxyz0123456789".chars().collect::<Vec<_>>()),
        1 => any::<char>(),
    ]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), ch()).prop_map(|(i, c)| Mutation::Flip(i, c)),
        (any::<usize>(), ch()).prop_map(|(i, c)| Mutation::Insert(i, c)),
        any::<usize>().prop_map(Mutation::DeleteLine),
        any::<usize>().prop_map(Mutation::DoubleLine),
        (any::<usize>(), 0usize..12).prop_map(|(i, n)| Mutation::Indent(i, n)),
    ]
}

fn apply(text: &str, muts: &[Mutation]) -> String {
    let mut t: Vec<char> = text.chars().collect();
    for m in muts {
        let len = t.len().max(1);
        match *m {
            Mutation::Truncate(n) => t.truncate(n % len),
            Mutation::Flip(i, c) => {
                if let Some(x) = t.get_mut(i % len) {
                    *x = c;
                }
            }
            Mutation::Insert(i, c) => t.insert((i % len).min(t.len()), c),
            Mutation::DeleteLine(i) | Mutation::DoubleLine(i) | Mutation::Indent(i, _) => {
                let s: String = t.iter().collect();
                let mut lines: Vec<String> = s.split('\n').map(str::to_string).collect();
                let k = i % lines.len().max(1);
                match *m {
                    Mutation::DeleteLine(_) if k < lines.len() => {
                        lines.remove(k);
                    }
                    Mutation::DoubleLine(_) => {
                        if let Some(l) = lines.get(k).cloned() {
                            lines.insert(k, l);
                        }
                    }
                    Mutation::Indent(_, n) => {
                        if let Some(l) = lines.get_mut(k) {
                            *l = format!("{}{}", " ".repeat(n), l.trim_start());
                        }
                    }
                    _ => {}
                }
                t = lines.join("\n").chars().collect();
            }
        }
    }
    t.into_iter().collect()
}

fn seeds() -> Vec<String> {
    let mut out = vec![SHOP.to_string()];
    if let Ok(rd) = std::fs::read_dir(corpus().join("v1")) {
        let mut ps: Vec<PathBuf> = rd.filter_map(Result::ok).map(|e| e.path()).collect();
        ps.sort();
        out.extend(ps.iter().filter_map(|p| std::fs::read_to_string(p).ok()));
    }
    out
}

fn check(src: &str) {
    match parse(src) {
        Ok(f) => {
            let _ = to_oracle_json(&f);
            let _ = lower(&f);
        }
        Err(e) => {
            let lines = src.split('\n').count().max(1);
            assert!(
                e.line >= 1 && e.line <= lines,
                "line {} of {lines}: {e}",
                e.line
            );
            assert!(e.column >= 1, "column 0: {e}");
        }
    }
}

fn cases() -> u32 {
    std::env::var("STALWART_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_text_never_panics(text in "[ \\n\\t\"'$:#()=,.a-z0-9]{0,300}") {
        check(&text);
    }

    #[test]
    fn random_colang_lines_never_panic(lines in prop::collection::vec((0usize..10, prop::sample::select(vec![
        "define flow x", "define user u", "define bot b", "define subflow s", "define parallel flow p",
        "user u", "bot b", "bot \"hi $x\"", "if $a", "else if $b", "else", "when user u", "else when bot b",
        "while $i < 3", "execute act(a=$b, 1)", "$r = execute act", "do s", "stop", "abort", "return $x",
        "break", "continue", "create event E(a=1)", "event E", "$x = 1", "priority 2", "meta {\"a\": 1}",
        "\"an example $p\"", "user a or user b", "label l", "goto l", "import core", "\"\"\"", "# c", "any",
    ])), 0..40)) {
        let src: String = lines.iter().map(|(i, l)| format!("{}{l}\n", " ".repeat(*i))).collect();
        check(&src);
    }

    #[test]
    fn mutated_corpus_never_panics(seed in any::<prop::sample::Index>(), muts in prop::collection::vec(mutation(), 1..8)) {
        let s = seeds();
        let text = apply(&s[seed.index(s.len())], &muts);
        check(&text);
    }
}

/// Probes of where NeMo's parser and ours once differed (issue 20), each with what NeMo 0.24.1's
/// own parser read (`tests/data/nemo_probes/expected/`, written by the corpus's `oracle.py
/// --corpus tests/data/nemo_probes`): a quoted utterance that spans lines keeps its first line
/// in `define user`/`define bot`, and is a syntax error inside a flow.
#[test]
fn v1_probes_match_nemo() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/nemo_probes");
    let cases = common::oracle_cases(&root, "v1");
    assert!(cases.len() >= 4, "the v1 probes are there");
    let mut failures = Vec::new();
    for (stem, src, exp) in &cases {
        if let Err(e) = compare(stem, src, exp) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    let file = parse("define user ask refund\n  \"refund my\n  order\"\n").expect("NeMo reads it");
    assert_eq!(file.user_messages[0].texts, vec!["refund my".to_string()]);
}
