//! The rulebook's budgets (SPEC 5; issue 14, "Compiles that explode"): what one compile of a
//! rulebook may build before it stops, as the graph has its state budget and its size limits.
//!
//! A rulebook is hostile input: a 3 KB file of `if`/`else` branches that each run the next flow
//! twice writes hundreds of megabytes of routes, and one `if` of 50,000 `and`s took gigabytes.
//! Each budget bounds one way the compile grows, and past its budget the rulebook does not
//! compile: QG005 (exit 2 in `stalwart rules compile`) at the line that crossed it, naming the
//! budget and the flag that raises it. Nothing is dropped silently: a compile that stays within
//! its budgets is the whole compile.
//!
//! | budget | counts | default | flag |
//! |---|---|---|---|
//! | condition | atoms and operators of one condition, as written (`if`, `while`, a sheet's `when`) or as a route's path condition | 256 | `--rulebook-max-condition` |
//! | nesting | how deep one condition nests: fixed, what a record's JSON can hold | 48 | none |
//! | depth | flows running flows, nested (`do`, `await`, ...) | 12 | `--rulebook-max-depth` |
//! | steps | statements walked, each once for every path through it: a called flow's body is walked again for every call and every path into it (the inlining fan-out) | 2,000,000 | `--rulebook-max-steps` |
//! | routes | routes to executes | 20,000 | `--rulebook-max-routes` |
//! | sources | bytes of the rulebook's files, in total (what the parsers read) | 4 MiB | `--rulebook-max-source-bytes` |
//! | record | bytes of the compiled record (`record.json`, which keeps every source whole), at most what `verify` reads back | 64 MiB | `--rulebook-max-record-bytes` |
//!
//! And one budget of the rulebook rules, which read the compiled routes: QG002 compares the routes
//! of each tool pairwise, and past `implications` questions put to Z3 (`--rulebook-max-implications`,
//! default 10,000) the routes it has not compared are reported undecided (QG006), never clean.
//!
//! With the defaults, memory stays under 1 GB for any rulebook under the input size limit
//! (64 MiB a file): the source budget bounds what the parsers hold, the steps budget the states
//! walked, and the route, condition and record budgets what is kept (`BENCHMARKS.md` has the
//! figures for the crafted inputs of issue 14).

use std::io::Write;

use crate::input::error::InputError;
use crate::input::source::{FileId, Loc, SourceMap};

use super::cond::Cond;
use super::flows::Place;

/// One budget (see the module docs for what each counts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Budget {
    /// Atoms and operators of one condition.
    Condition,
    /// How deep one condition nests: fixed ([`NESTING`]), what a record can hold.
    Nesting,
    /// Flows running flows, nested.
    Depth,
    /// Statements walked, once for every path through them.
    Steps,
    /// Routes to executes.
    Routes,
    /// Bytes of the rulebook's files.
    Sources,
    /// Bytes of the compiled record.
    Record,
    /// Implications QG002 asks Z3.
    Implications,
}

impl Budget {
    /// The budget's name as messages say it (`condition-size`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Budget::Condition => "condition-size",
            Budget::Nesting => "condition-nesting",
            Budget::Depth => "inlining-depth",
            Budget::Steps => "compile-steps",
            Budget::Routes => "route",
            Budget::Sources => "source-size",
            Budget::Record => "record-size",
            Budget::Implications => "implication",
        }
    }

    /// The flag of `verify` and `rules compile` that raises it (none for the nesting of a
    /// condition, which is what a record can hold).
    pub(crate) fn flag(self) -> Option<&'static str> {
        Some(match self {
            Budget::Nesting => return None,
            Budget::Condition => "--rulebook-max-condition",
            Budget::Depth => "--rulebook-max-depth",
            Budget::Steps => "--rulebook-max-steps",
            Budget::Routes => "--rulebook-max-routes",
            Budget::Sources => "--rulebook-max-source-bytes",
            Budget::Record => "--rulebook-max-record-bytes",
            Budget::Implications => "--rulebook-max-implications",
        })
    }
}

/// The budgets of one compile (see the module docs); [`Budgets::default`] gives the defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budgets {
    /// Atoms and operators in one condition, as written or as a route's path condition.
    pub condition: usize,
    /// Flows on the call stack at once, the route's own flow included.
    pub depth: usize,
    /// Statements walked, each counted once for every path that reaches it.
    pub steps: usize,
    /// Routes the compile keeps.
    pub routes: usize,
    /// Bytes of the rulebook's files, in total.
    pub(crate) source_bytes: usize,
    /// Bytes of the record, as `stalwart rules compile` writes it.
    pub record_bytes: usize,
    /// Implication questions QG002 may ask Z3 (the rest is undecided, QG006).
    pub(crate) implications: usize,
}

/// Default of [`Budgets::condition`]: the graph's limit on a guard's operators.
pub(crate) const CONDITION: usize = 256;
/// How deep a condition may nest (`not`, `and`, `or` inside each other, a route's path condition
/// included): a record holds each level as two levels of JSON, and `verify` reads JSON at most
/// 128 levels deep, so a deeper condition would make a record `verify` cannot read back.
pub(crate) const NESTING: usize = 48;
/// The most [`Budgets::depth`] may be raised to: the compile walks called flows recursively,
/// and a thread's stack holds this many flows of the deepest nesting the parsers read.
pub(crate) const MAX_DEPTH: usize = 32;
/// Default of [`Budgets::depth`].
pub(crate) const DEPTH: usize = 12;
/// Default of [`Budgets::steps`].
pub(crate) const STEPS: usize = 2_000_000;
/// Default of [`Budgets::routes`].
pub(crate) const ROUTES: usize = 20_000;
/// Default of [`Budgets::source_bytes`]: 4 MiB (NeMo Guardrails' whole library and examples,
/// 219 files, are 300 KB; the largest is 14 KB). The parsers hold up to about a hundred bytes
/// for each byte of the densest files, so this keeps them within a few hundred megabytes.
pub(crate) const SOURCE_BYTES: usize = 4 << 20;
/// Default of [`Budgets::record_bytes`]: 64 MiB, the largest file `verify` reads, so a record
/// within it can be read back.
pub(crate) const RECORD_BYTES: usize = 64 << 20;
/// Default of [`Budgets::implications`].
pub(crate) const IMPLICATIONS: usize = 10_000;

impl Default for Budgets {
    fn default() -> Budgets {
        Budgets {
            condition: CONDITION,
            depth: DEPTH,
            steps: STEPS,
            routes: ROUTES,
            source_bytes: SOURCE_BYTES,
            record_bytes: RECORD_BYTES,
            implications: IMPLICATIONS,
        }
    }
}

/// A compile past one of its budgets: which, where, and what crossed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overrun {
    /// The budget.
    pub(crate) budget: Budget,
    /// Its limit.
    pub(crate) limit: usize,
    /// The statement (or file start) that crossed it.
    pub(crate) at: Place,
    /// What crossed it, in the rulebook's words (`the condition of this if has 50,001 atoms and
    /// operators`).
    pub(crate) what: String,
}

impl Overrun {
    /// An overrun of `budget` (limit `limit`) at `at`.
    pub(crate) fn new(budget: Budget, limit: usize, at: Place, what: impl Into<String>) -> Overrun {
        Overrun {
            budget,
            limit,
            at,
            what: what.into(),
        }
    }

    /// The message: what crossed which budget.
    pub fn message(&self) -> String {
        format!(
            "the rulebook is past its {} budget ({}): {}",
            self.budget.name(),
            thousands(self.limit),
            self.what
        )
    }

    /// The fix: the flag that raises the budget.
    pub(crate) fn help(&self) -> String {
        match self.budget.flag() {
            Some(flag) => format!(
                "raise the budget with `{flag} N` (on `stalwart verify` and `stalwart rules compile`), or simplify the rulebook here"
            ),
            None => "simplify the rulebook here: split the flow, or its nested `if`s, into flows of their own".to_string(),
        }
    }

    /// The overrun as a located error in the rulebook; `files` maps [`Place::file`] to the
    /// source map's files.
    pub(crate) fn into_error(self, sources: &SourceMap, files: &[FileId]) -> InputError {
        let file = files.get(self.at.file).copied().unwrap_or(0);
        let loc = Loc::new(
            file,
            self.at.line.clamp(1, u32::MAX as usize) as u32,
            self.at.column.clamp(1, u32::MAX as usize) as u32,
        );
        InputError::at(sources, loc, self.message(), self.help())
    }
}

/// The source budget crossed by a file of `text` read after `read` bytes of others: at the
/// line of the file where the bytes read pass the budget.
pub(crate) fn sources_overrun(text: &str, read: usize, budgets: &Budgets) -> Overrun {
    let within = budgets.source_bytes.saturating_sub(read).min(text.len());
    let line = 1 + text.as_bytes()[..within]
        .iter()
        .filter(|&&b| b == b'\n')
        .count();
    Overrun::new(
        Budget::Sources,
        budgets.source_bytes,
        Place {
            file: 0,
            line,
            column: 1,
        },
        format!(
            "the rulebook's files pass {} bytes at this line",
            thousands(budgets.source_bytes)
        ),
    )
}

/// `cond` within the condition budget and the nesting limit; `what` names it in the message
/// (`the condition of this \`if\``). Returns its size.
pub(crate) fn check_condition(
    cond: &Cond,
    budgets: &Budgets,
    at: Place,
    what: &str,
) -> Result<usize, Overrun> {
    let size = cond.size();
    if size > budgets.condition {
        return Err(Overrun::new(
            Budget::Condition,
            budgets.condition,
            at,
            format!("{what} has {} atoms and operators", thousands(size)),
        ));
    }
    let depth = cond.depth();
    if depth > NESTING {
        return Err(Overrun::new(
            Budget::Nesting,
            NESTING,
            at,
            format!("{what} nests {depth} deep, and a compiled record holds conditions nested at most {NESTING} deep"),
        ));
    }
    Ok(size)
}

/// `12345678` as `12,345,678`.
pub(crate) fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (k, ch) in s.chars().enumerate() {
        if k > 0 && (s.len() - k) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// Bytes `item` takes as compact JSON: what it adds to the record at the least (the record is
/// written indented, so larger).
pub(crate) fn json_bytes<T: serde::Serialize + ?Sized>(item: &T) -> usize {
    let mut n = Count(0, 1);
    let _ = serde_json::to_writer(&mut n, item);
    n.0
}

/// Bytes `item` takes as indented JSON, as [`super::record::Record::to_json`] writes it.
pub(crate) fn pretty_json_bytes<T: serde::Serialize + ?Sized>(item: &T) -> usize {
    pretty(item).0
}

/// Bytes `item` takes in a record as an element of one of the compiled rulebook's lists
/// (`compiled.routes[k]`, three levels deep, so each of its lines indented six more spaces),
/// its separator left out: a lower bound of what it adds to the record.
pub(crate) fn record_item_bytes<T: serde::Serialize + ?Sized>(item: &T) -> usize {
    let (bytes, lines) = pretty(item);
    bytes + 6 * lines
}

/// `item`'s indented JSON: bytes and lines.
fn pretty<T: serde::Serialize + ?Sized>(item: &T) -> (usize, usize) {
    let mut n = Count(0, 1);
    let _ = serde_json::to_writer_pretty(&mut n, item);
    (n.0, n.1)
}

/// A writer that only counts: bytes, and lines (line breaks and one).
struct Count(usize, usize);

impl Write for Count {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        self.1 += buf.iter().filter(|&&b| b == b'\n').count();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The record budget as the compile spends it: every item it keeps adds at least its indented
/// JSON to the record ([`record_item_bytes`]), so past the budget here the record is past it
/// too.
#[derive(Debug, Clone)]
pub(crate) struct Meter {
    /// Bytes spent so far.
    pub(crate) bytes: usize,
    /// The budget.
    pub(crate) limit: usize,
}

impl Meter {
    /// A meter of `limit` bytes with `spent` already spent (the sources).
    pub(crate) fn new(limit: usize, spent: usize) -> Meter {
        Meter {
            bytes: spent,
            limit,
        }
    }

    /// Spends `item`'s JSON in the record, kept because of the statement at `at`.
    pub(crate) fn spend<T: serde::Serialize + ?Sized>(
        &mut self,
        item: &T,
        at: Place,
        what: &str,
    ) -> Result<(), Overrun> {
        self.bytes = self.bytes.saturating_add(record_item_bytes(item));
        if self.bytes > self.limit {
            return Err(Overrun::new(
                Budget::Record,
                self.limit,
                at,
                format!(
                    "the compiled record passes {} bytes at this {what}",
                    thousands(self.limit)
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_budget_and_its_flag() {
        let o = Overrun::new(
            Budget::Condition,
            256,
            Place {
                file: 0,
                line: 3,
                column: 3,
            },
            "this condition has 50,001 atoms and operators",
        );
        assert_eq!(
            o.message(),
            "the rulebook is past its condition-size budget (256): this condition has 50,001 atoms and operators"
        );
        assert!(o
            .help()
            .starts_with("raise the budget with `--rulebook-max-condition N`"));
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(thousands(999), "999");
    }

    #[test]
    fn the_meter_counts_json_and_stops_past_its_budget() {
        let at = Place {
            file: 0,
            line: 1,
            column: 1,
        };
        let mut m = Meter::new(13, 0);
        assert_eq!(json_bytes("abc"), 5);
        // `"abc"` on one line, indented six spaces in the record.
        assert_eq!(record_item_bytes("abc"), 11);
        assert!(m.spend("abc", at, "x").is_ok());
        let e = m.spend("abcdef", at, "execute").expect_err("past 13 bytes");
        assert_eq!(e.budget, Budget::Record);
        assert_eq!(m.bytes, 25);
    }
}
