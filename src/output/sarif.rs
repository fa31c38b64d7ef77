//! SARIF 2.1.0 for GitHub code scanning (SPEC 8 `sarif`). All of the crate's use of `serde_sarif`
//! is in this module.
//!
//! One run. `tool.driver` lists every rule of `rules/` (not only those that fired, so that GitHub
//! can show any rule's help), in [`crate::rules::all`]'s order, which `ruleIndex` points into:
//!
//! - `id`; `name`, the title in PascalCase (`ConfusedDeputy`); `shortDescription` the title;
//!   `fullDescription` the description; `help.text` and `help.markdown`: the description, what a
//!   clean result proves and does not prove, and the fix.
//! - `defaultConfiguration.level`: `error` for a rule that fails the report's gate (`ci` or
//!   `start`), else `warning`, and `note` for a Security hotspot.
//! - `helpUri`: the MITRE page of the rule's first CWE, when its rule file names one (`cwe`).
//! - `properties.tags`: `security`, the rule's type (`vulnerability`, `bug`, `security-hotspot`),
//!   its OWASP entries and its CWEs as CodeQL tags them (`external/cwe/cwe-862`), at most 20,
//!   GitHub's limit; `properties.precision`: `very-high` for the graph reachability rules (an
//!   engine found a route, with its witness), `high` otherwise; `properties.security-severity` for
//!   a Vulnerability only (its default severity: Critical 9.5, High 8.0, Medium 5.5, Low 3.0, but
//!   at most 6.5 for a rule that does not fail the report's gate: GitHub's default check fails on
//!   `error` and on a `high` or `critical` security severity, and must fail exactly when the gate
//!   does), which makes GitHub treat its results as security alerts;
//!   `properties.problem.severity` for the others (`error` when the rule fails the gate,
//!   `warning` for a Bug, `recommendation` for a Security hotspot).
//!
//! Each finding is a result (at most 25,000, GitHub's limit): `ruleId`, `ruleIndex`, `level`
//! (`error` when the finding blocks in the report's gate mode, else `warning`, and `note` for a
//! Security hotspot; an accepted finding does not block), `message.text` (the finding's message
//! as a sentence, then `[text](id)` links to its related locations), one location (the line
//! that declared the node: a `physicalLocation` whose `uri` is the file's path relative to the
//! repository root, with forward slashes and no scheme, and a `region` over the declaring word),
//! `relatedLocations` (the finding's related places, `id` 1..; at most [`MAX_RELATED`]), the
//! witness as `codeFlows[0].threadFlows[0].locations` (each step at its node's location, else at
//! the finding's; a traced run's steps (QG016) at their lines of the traces file; at most 1,000
//! steps), `partialFingerprints` (`stalwartFingerprint/v1`, the finding's fingerprint, and
//! `primaryLocationLineHash`, `<fingerprint>:1`: code scanning tracks alerts by it, and
//! upload-sarif keeps a value the tool gives, so two findings on one line stay two alerts and an
//! edit of the line keeps each alert), `suppressions` for an accepted finding (kind `external`
//! for `stalwart.toml`, `inSource` for a comment on its line; status `accepted`, the reason as the
//! justification), `baselineState` when `--baseline` was given (`new`, or `unchanged` for a
//! finding the baseline already has: those are written too, so uploading the log does not close
//! their alerts as fixed), and `properties` (`severity`, `obligation`, `depth`, `subject`,
//! `node`).
//!
//! When Python tool modules were read, the three code checks (`rules/code_checks.toml`, CC001-CC003)
//! follow the rules in `tool.driver.rules` (precision `medium`, level `warning`, their
//! `security-severity`), and each code finding is a result with `ruleId` `CCnnn`, level `warning`
//! (code findings never fail the gate), its location at the call, literal or read, the tool's
//! entry as a related location, and a fingerprint of the check, message, file and tool.
//!
//! `automationDetails.id` is `stalwart-verify/<input>/`, the input's repository-relative path, so
//! two agents verified in one repository get two categories; `--sarif-category CAT` writes `CAT/`.
//! Nothing absolute and no time is written: the same report and root give the same bytes.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use serde_json::json;
use serde_sarif::sarif::{
    ArtifactLocation, CodeFlow, Invocation, Location, Message, MultiformatMessageString,
    PhysicalLocation, PropertyBag, Region, ReportingConfiguration, ReportingDescriptor,
    Result as SarifResult, ResultLevel, Run, RunAutomationDetails, Sarif, Suppression, ThreadFlow,
    ThreadFlowLocation, Tool, ToolComponent,
};

use crate::findings::{Evidence, Finding, Severity};
use crate::input::source::{Loc, SourceMap};
use crate::report::Report;
use crate::rules::{Rule, RuleType};

use super::{level, primary_loc, Level};

/// The `$schema` written: the URL GitHub's documentation gives.
pub(crate) const SCHEMA_URL: &str = "https://json.schemastore.org/sarif-2.1.0.json";
use crate::findings::FINGERPRINT_KEY;
/// GitHub's own fingerprint key, which code scanning tracks alerts by.
pub(crate) const LINE_HASH_KEY: &str = "primaryLocationLineHash";
/// Results written at most (GitHub rejects a run with more).
pub(crate) const MAX_RESULTS: usize = 25_000;
/// Witness steps written per code flow at most (GitHub keeps 1,000).
pub(crate) const MAX_FLOW_STEPS: usize = 1_000;
/// Related locations written per result at most (GitHub's supported-properties table: up to 10);
/// the rest are counted in the result's `properties.related_omitted`.
pub(crate) const MAX_RELATED: usize = 10;
/// Tags per rule at most (GitHub rejects more).
const MAX_TAGS: usize = 20;
/// Characters GitHub accepts in a short or full description.
const MAX_DESCRIPTION: usize = 1024;

/// Renders `report` as a SARIF 2.1.0 log (pretty JSON, ending with a newline).
///
/// File URIs are made relative to `repo_root` (default: the current directory), the way GitHub
/// resolves them against the checkout; a file outside it gets a `../` path.
pub fn render(report: &Report, repo_root: Option<&Path>) -> String {
    render_in_category(report, repo_root, None)
}

/// [`render`], with the code-scanning category given (`--sarif-category`): `automationDetails.id`
/// becomes `<category>/` instead of `stalwart-verify/<input>/`. upload-sarif keeps a run's own id
/// over its `category` input, so the category must be written here.
pub(crate) fn render_in_category(
    report: &Report,
    repo_root: Option<&Path>,
    category: Option<&str>,
) -> String {
    let root = match repo_root {
        Some(r) => r.to_path_buf(),
        None => PathBuf::from("."),
    };
    let log = build(report, &root, category);
    crate::input::visible::json_pretty(&log)
}

/// Builds the log.
fn build(report: &Report, root: &Path, category: Option<&str>) -> Sarif {
    let uris: Vec<String> = report
        .sources
        .files
        .iter()
        .map(|f| repo_relative(&f.path, root))
        .collect();
    let ctx = Ctx {
        sources: &report.sources,
        uris: &uris,
    };

    let rules: &[Rule] = crate::rules::all();
    let mut descriptors: Vec<ReportingDescriptor> =
        rules.iter().map(|r| descriptor(report, r)).collect();

    // Findings a baseline already has are results too, `baselineState: "unchanged"`: dropping
    // them would close their alerts as fixed when the log is uploaded.
    let known = report.known.iter().map(|f| (f, "unchanged"));
    let all: Vec<(&Finding, &str)> = report
        .findings
        .iter()
        .map(|f| (f, "new"))
        .chain(known)
        .collect();
    let baselined = report.baseline.is_some();
    let mut results: Vec<SarifResult> = all
        .iter()
        .take(MAX_RESULTS)
        .map(|&(f, state)| {
            // The descriptors are every rule in id order, `RuleId`'s order.
            let index = f.rule as usize;
            let mut r = result(report, &ctx, f, index as i64);
            if baselined {
                r.baseline_state = Some(json!(state));
            }
            r
        })
        .collect();

    // The code checks: their rules after the graph rules, when modules were read.
    let mut omitted = all.len().saturating_sub(MAX_RESULTS);
    if let Some(cc) = &report.code_checks {
        let checks = crate::rules::code::all();
        descriptors.extend(checks.iter().map(code_descriptor));
        for f in &cc.findings {
            if results.len() >= MAX_RESULTS {
                omitted += 1;
                continue;
            }
            // The code checks' descriptors follow the proof's: `RuleId`'s order too.
            results.push(code_result(&ctx, f, f.rule as i64));
        }
    }

    let version = env!("CARGO_PKG_VERSION");
    let driver = ToolComponent::builder()
        .name("stalwart-verify")
        .full_name(format!("stalwart-verify {version}"))
        .semantic_version(version)
        .version(version)
        .information_uri(information_uri())
        .rules(descriptors)
        .build();

    let mut run_props = BTreeMap::new();
    run_props.insert("gate".to_string(), json!(report.gate.as_str()));
    run_props.insert("passed".to_string(), json!(report.passed()));
    // SPEC 8.1: what weakens the proof, each with its kind, its words and where it is written.
    run_props.insert(
        "weakened".to_string(),
        json!(report
            .weakened
            .iter()
            .map(|w| {
                let at =
                    w.at.filter(|l| l.file < report.sources.files.len())
                        .map(|l| {
                            json!({
                                "uri": repo_relative(&report.sources.file(l.file).path, root),
                                "line": l.line,
                                "column": l.column,
                            })
                        });
                json!({"kind": w.kind.as_str(), "message": w.message, "location": at})
            })
            .collect::<Vec<_>>()),
    );
    if omitted > 0 {
        run_props.insert("resultsOmitted".to_string(), json!(omitted));
    }

    let input = repo_relative(Path::new(&report.input), root);
    let run = Run::builder()
        .tool(Tool::from(driver))
        .results(results)
        .invocations(vec![Invocation::builder()
            .execution_successful(true)
            .build()])
        .automation_details(
            RunAutomationDetails::builder()
                .id(match category.map(|c| c.trim_end_matches('/')) {
                    Some(c) if !c.is_empty() => format!("{c}/"),
                    _ => format!("stalwart-verify/{input}/"),
                })
                .build(),
        )
        .column_kind(json!("unicodeCodePoints"))
        .properties(
            PropertyBag::builder()
                .additional_properties(run_props)
                .build(),
        )
        .build();

    Sarif::builder()
        .schema(SCHEMA_URL)
        .version(json!("2.1.0"))
        .runs(vec![run])
        .build()
}

/// Where the tool is documented: the crate's repository or homepage, else its crates.io page.
fn information_uri() -> String {
    [env!("CARGO_PKG_REPOSITORY"), env!("CARGO_PKG_HOMEPAGE")]
        .into_iter()
        .find(|s| !s.is_empty())
        .map(str::to_string)
        .unwrap_or_else(|| format!("https://crates.io/crates/{}", env!("CARGO_PKG_NAME")))
}

/// What the locations need: the files and their URIs.
struct Ctx<'a> {
    sources: &'a SourceMap,
    uris: &'a [String],
}

impl Ctx<'_> {
    /// A `physicalLocation` for `loc`, its region over the word that starts there.
    fn physical(&self, loc: Loc) -> Option<PhysicalLocation> {
        let file = self.sources.files.get(loc.file)?;
        let line = loc.line.max(1) as i64;
        let column = loc.column.max(1) as i64;
        let span = file.word_span(loc);
        let (end_line, end_col) = file.line_col(span.end);
        let region = if span.end > span.start && end_line as i64 == line && end_col as i64 > column
        {
            Region::builder()
                .start_line(line)
                .start_column(column)
                .end_column(end_col as i64)
                .build()
        } else {
            Region::builder()
                .start_line(line)
                .start_column(column)
                .build()
        };
        Some(
            PhysicalLocation::builder()
                .artifact_location(
                    ArtifactLocation::builder()
                        .uri(self.uris[loc.file].clone())
                        .build(),
                )
                .region(region)
                .build(),
        )
    }

    /// A `location` at `loc`, with an optional id and message.
    fn location(&self, loc: Loc, id: Option<i64>, message: Option<String>) -> Option<Location> {
        let physical = self.physical(loc)?;
        Some(Location {
            id,
            message: message.map(|m| Message::builder().text(unlinked(&m)).build()),
            physical_location: Some(physical),
            ..Location::default()
        })
    }
}

/// One result.
fn result(report: &Report, ctx: &Ctx<'_>, f: &Finding, rule_index: i64) -> SarifResult {
    let level = match level(report, f) {
        Level::Error => ResultLevel::Error,
        Level::Warning => ResultLevel::Warning,
        Level::Note => ResultLevel::Note,
    };
    let primary = primary_loc(report, f);

    let mut props = BTreeMap::new();
    props.insert("severity".to_string(), json!(f.severity.as_str()));
    if let Some(o) = f.obligation {
        props.insert("obligation".to_string(), json!(o.as_str()));
    }
    if let Some(d) = f.depth {
        props.insert("depth".to_string(), json!(d));
    }
    props.insert("subject".to_string(), json!(f.subject));
    props.insert("fix".to_string(), json!(f.fix));
    if let Some(n) = &f.node {
        props.insert("node".to_string(), json!(n));
    }

    let mut r = SarifResult::builder()
        .rule_id(f.rule.as_str())
        .rule_index(rule_index)
        .level(level)
        .message(
            Message::builder()
                .text(message_text(f, report.sources.files.len()))
                .build(),
        )
        .partial_fingerprints(fingerprints(&f.fingerprint))
        .properties(PropertyBag::builder().additional_properties(props).build())
        .build();
    if let Some(loc) = primary.and_then(|l| ctx.location(l, None, None)) {
        r.locations = Some(vec![loc]);
    }
    let mut related: Vec<Location> = f
        .related
        .iter()
        .enumerate()
        .filter_map(|(i, (loc, msg))| ctx.location(*loc, Some(i as i64 + 1), Some(sentence(msg))))
        .collect();
    if related.len() > MAX_RELATED {
        let omitted = related.len() - MAX_RELATED;
        related.truncate(MAX_RELATED);
        if let Some(p) = r.properties.as_mut() {
            p.additional_properties
                .insert("related_omitted".to_string(), json!(omitted));
        }
    }
    if !related.is_empty() {
        r.related_locations = Some(related);
    }
    if let Some(a) = &f.accepted {
        r.suppressions = Some(vec![Suppression {
            kind: json!(a.kind.sarif()),
            status: Some(json!("accepted")),
            justification: Some(a.reason.clone()),
            location: ctx.location(a.at, None, None),
            guid: None,
            properties: None,
        }]);
    }
    if !f.witness.is_empty() {
        let mut flows = vec![code_flow(ctx, f, &f.witness, None, primary)];
        if let Some((engine, w)) = &f.other_witness {
            flows.push(code_flow(ctx, f, w, Some(*engine), primary));
        }
        r.code_flows = Some(flows);
    }
    r
}

/// A result's `partialFingerprints`: our own key, and GitHub's `primaryLocationLineHash` from the
/// same stable fingerprint (`<16 hex digits>:1`). upload-sarif keeps a value the tool gives; left
/// out, it would hash the line's text, so two findings on one line would merge into one alert
/// and an edit of that line would re-key it.
fn fingerprints(fingerprint: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        (FINGERPRINT_KEY.to_string(), fingerprint.to_string()),
        (LINE_HASH_KEY.to_string(), format!("{fingerprint}:1")),
    ])
}

/// The result's message: the finding's message as a sentence, then a link to each related
/// location (`[text](id)`, SARIF's embedded links, which GitHub shows).
fn message_text(f: &Finding, files: usize) -> String {
    let mut text = unlinked(&sentence(&f.message));
    if f.related.iter().any(|(loc, _)| loc.file < files) {
        let links: Vec<String> = f
            .related
            .iter()
            .enumerate()
            .filter(|(_, (loc, _))| loc.file < files)
            .take(MAX_RELATED)
            .map(|(i, (_, msg))| format!("[{}]({})", unlinked(msg), i + 1))
            .collect();
        text.push_str(&format!(" See {}.", links.join(", ")));
    }
    text
}

/// A witness as one code flow of one thread flow: each step at its node's location, else at the
/// finding's, with the step in words, in order. `engine` names the engine of a QG312 finding's
/// second witness.
fn code_flow(
    ctx: &Ctx<'_>,
    f: &Finding,
    witness: &[crate::findings::Step],
    engine: Option<crate::findings::Engine>,
    primary: Option<Loc>,
) -> CodeFlow {
    let violated = f.obligation.map(|o| o.as_str()).unwrap_or(f.rule.as_str());
    let n = witness.len();
    let locations: Vec<ThreadFlowLocation> = witness
        .iter()
        .take(MAX_FLOW_STEPS)
        .enumerate()
        .map(|(i, step)| {
            let text = sentence(&format!(
                "{}. {}",
                i + 1,
                super::describe_step(step, violated)
            ));
            let at = step
                .loc
                .filter(|l| l.file < ctx.sources.files.len())
                .or(primary);
            let location = match at.and_then(|l| ctx.location(l, None, Some(text.clone()))) {
                Some(l) => l,
                None => Location {
                    message: Some(Message::builder().text(text).build()),
                    ..Location::default()
                },
            };
            let mut t = ThreadFlowLocation::builder()
                .location(location)
                .execution_order(i as i64 + 1)
                .nesting_level(0)
                .build();
            if step.violation {
                t.importance = Some(json!("essential"));
            }
            t
        })
        .collect();
    let shown = if n > MAX_FLOW_STEPS {
        format!(" (the first {MAX_FLOW_STEPS} shown)")
    } else {
        String::new()
    };
    let by = engine
        .map(|e| format!(" (the {e} engine's witness)"))
        .unwrap_or_default();
    let message = match f.depth {
        _ if f.evidence == Evidence::TracedRun => {
            format!("The traced run's {n} steps up to the call{shown}.")
        }
        Some(d) => format!("A route of {n} steps that reaches the call in turn {d}{shown}{by}."),
        None => format!("A route of {n} steps that reaches the call{shown}{by}."),
    };
    CodeFlow::builder()
        .message(Message::builder().text(message).build())
        .thread_flows(vec![ThreadFlow::builder().locations(locations).build()])
        .build()
}

/// The result of a code finding (CC001-CC003): level `warning` (code findings never fail the
/// gate), at the call, literal or read, with the tool's entry as a related location.
fn code_result(ctx: &Ctx<'_>, f: &Finding, rule_index: i64) -> SarifResult {
    let mut props = BTreeMap::new();
    props.insert("severity".to_string(), json!(f.severity.as_str()));
    if let Some(t) = f.code_tool() {
        props.insert("tool".to_string(), json!(t));
    }
    props.insert("fix".to_string(), json!(f.fix));
    // From the module's repository-relative URI, known only here.
    let uri = f
        .location
        .line()
        .and_then(|l| ctx.uris.get(l.file))
        .map_or("", |u| u.as_str());
    let fingerprint = crate::findings::fingerprint(
        f.rule.as_str(),
        None,
        &f.message,
        Some(&format!("{uri}#{}", f.code_tool().unwrap_or(""))),
    );
    let mut text = unlinked(&sentence(&f.message));
    let related: Vec<Location> = f
        .related
        .iter()
        .take(MAX_RELATED)
        .enumerate()
        .filter_map(|(i, (loc, msg))| ctx.location(*loc, Some(i as i64 + 1), Some(sentence(msg))))
        .collect();
    if !related.is_empty() {
        let links: Vec<String> = f
            .related
            .iter()
            .take(related.len())
            .enumerate()
            .map(|(i, (_, msg))| format!("[{}]({})", unlinked(msg), i + 1))
            .collect();
        text.push_str(&format!(" See {}.", links.join(", ")));
    }
    let mut b = SarifResult::builder()
        .rule_id(f.rule.as_str())
        .level(ResultLevel::Warning)
        .message(Message::builder().text(text).build())
        .partial_fingerprints(BTreeMap::from([(FINGERPRINT_KEY.to_string(), fingerprint)]))
        .properties(PropertyBag::builder().additional_properties(props).build())
        .build();
    b.rule_index = Some(rule_index);
    if let Some(loc) = f.location.line().and_then(|l| ctx.location(l, None, None)) {
        b.locations = Some(vec![loc]);
    }
    if !related.is_empty() {
        b.related_locations = Some(related);
    }
    b
}

/// The `reportingDescriptor` of a code check (`rules/code_checks.toml`): level `warning`,
/// precision `medium` (a pattern over the code, not a proof), its security severity.
fn code_descriptor(c: &crate::rules::code::CodeCheck) -> ReportingDescriptor {
    let placeholders = [
        ("tool", "<tool>"),
        ("callee", "<call>"),
        ("key", "<KEY>"),
        ("name", "<name>"),
    ];
    let fix = crate::rules::fill(c.fix.trim(), &placeholders);
    let finds = c.finds.trim();
    let why = c.why.trim();
    let text = format!(
        "{finds}\n\nWhy: {why}\n\nFix: {fix}\n\nA code check over the Python tool modules: its findings do not change the gate."
    );
    let markdown = format!(
        "**{}: {}** (code check)\n\n{}\n\n**Why.** {}\n\n**Fix.** {}\n\nIts findings do not change the gate: they are evidence about the tools' code, not a proof about the graph.\n",
        c.id,
        md(&c.title),
        md(finds),
        md(why),
        md(&fix),
    );
    let mut props = BTreeMap::new();
    props.insert("precision".to_string(), json!("medium"));
    // Code findings never fail the gate: their security severity stays below `high`.
    props.insert(
        "security-severity".to_string(),
        json!(security_severity(c.default_severity(), false)),
    );
    let mut tags = vec!["security".to_string(), "code-check".to_string()];
    tags.extend(c.cwe.iter().map(|x| crate::rules::cwe_tag(x)));
    assemble(Described {
        id: c.id.clone(),
        title: &c.title,
        description: finds,
        text,
        markdown,
        level: "warning",
        tags,
        props,
        help_uri: c.cwe.first().map(|x| crate::rules::cwe_uri(x)),
    })
}

/// The `reportingDescriptor` of a rule of `rules/`, for the report's gate mode and framework: a
/// rule that does not fail the gate in that mode has level `warning` (`note` for a hotspot) and a
/// security severity below 7.0, so its alerts cannot turn GitHub's default check red (it fails on
/// `error` and on a `high` or `critical` security severity); its help gives the fix in the terms
/// of the framework the export was made with (SPEC 12).
fn descriptor(report: &Report, r: &Rule) -> ReportingDescriptor {
    let blocks = report.rule_blocks(r);
    let framework = report.framework;
    let placeholders = [
        ("tool", "<tool>"),
        ("node", "<node>"),
        ("name", "<node>"),
        ("subject", "<subject>"),
    ];
    let fix = crate::rules::fill(r.fix_template(framework), &placeholders);
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    let owasp = if r.owasp.is_empty() {
        String::new()
    } else {
        format!(" OWASP: {}.", r.owasp.join(", "))
    };
    let text = format!(
        "{}\n\nWhat a clean result proves: {}\n\nWhat it does not prove: {}\n\nFix: {}\n\n{}. Fails the ci gate: {}. Stops Agent(...): {}.{}",
        r.description,
        r.proves,
        r.does_not_prove,
        fix,
        r.rule_type.as_str(),
        yes_no(r.gate),
        yes_no(r.stops),
        owasp
    );
    let markdown = format!(
        "**{}: {}** ({})\n\n{}\n\n**What a clean result proves.** {}\n\n**What it does not prove.** {}\n\n**Fix.** {}\n\n\
         | Type | Fails the `ci` gate | Stops `Agent(...)` | OWASP |\n|---|---|---|---|\n| {} | {} | {} | {} |\n",
        r.id,
        md(&r.title),
        r.rule_type.as_str(),
        md(&r.description),
        md(&r.proves),
        md(&r.does_not_prove),
        md(&fix),
        r.rule_type.as_str(),
        yes_no(r.gate),
        yes_no(r.stops),
        if r.owasp.is_empty() { "-".to_string() } else { r.owasp.join(", ") },
    );

    let mut tags = vec!["security".to_string(), type_tag(r.rule_type).to_string()];
    for o in r
        .owasp
        .iter()
        .cloned()
        .chain(r.cwe.iter().map(|c| crate::rules::cwe_tag(c)))
    {
        if !tags.contains(&o) {
            tags.push(o);
        }
    }
    tags.truncate(MAX_TAGS);

    let mut props = BTreeMap::new();
    // Graph reachability results (an engine found a route, and the witness replays) are
    // `very-high`; every other rule's are `high`.
    let reachability = crate::rules::obligation::reachability_rules();
    let precision = if reachability.iter().any(|id| id.as_str() == r.id) {
        "very-high"
    } else {
        "high"
    };
    props.insert("precision".to_string(), json!(precision));
    if r.rule_type == RuleType::Vulnerability {
        props.insert(
            "security-severity".to_string(),
            json!(security_severity(r.severity, blocks)),
        );
    } else {
        let problem = if blocks {
            "error"
        } else if r.rule_type == RuleType::Bug {
            "warning"
        } else {
            "recommendation"
        };
        props.insert("problem.severity".to_string(), json!(problem));
    }

    assemble(Described {
        id: r.id.clone(),
        title: &r.title,
        description: &r.description,
        text,
        markdown,
        level: default_level(r, blocks),
        tags,
        props,
        help_uri: r.cwe.first().map(|c| crate::rules::cwe_uri(c)),
    })
}

/// What differs between the `reportingDescriptor`s of the rules of `rules/` and of the code
/// checks.
struct Described<'a> {
    id: String,
    title: &'a str,
    /// The full description (its first sentence is written).
    description: &'a str,
    /// The help, as text and as Markdown.
    text: String,
    markdown: String,
    /// The default level.
    level: &'static str,
    tags: Vec<String>,
    props: BTreeMap<String, serde_json::Value>,
    /// Where to read more: the MITRE page of the rule's first CWE, when it has one.
    help_uri: Option<String>,
}

/// A `reportingDescriptor`: name in PascalCase, short and full descriptions clipped, the help,
/// the default level, the tags and properties.
fn assemble(d: Described<'_>) -> ReportingDescriptor {
    let help_uri = d.help_uri.clone();
    let mut desc = ReportingDescriptor::builder()
        .id(d.id)
        .name(pascal_case(d.title))
        .short_description(
            MultiformatMessageString::builder()
                .text(clip(d.title))
                .build(),
        )
        .full_description(
            MultiformatMessageString::builder()
                .text(clip(&sentence(d.description)))
                .build(),
        )
        .help(
            MultiformatMessageString::builder()
                .text(d.text)
                .markdown(d.markdown)
                .build(),
        )
        .default_configuration(
            ReportingConfiguration::builder()
                .level(json!(d.level))
                .build(),
        )
        .properties(
            PropertyBag::builder()
                .tags(d.tags)
                .additional_properties(d.props)
                .build(),
        )
        .build();
    desc.help_uri = help_uri;
    desc
}

/// `error` for a rule that fails the report's gate, `note` for a hotspot, else `warning`.
fn default_level(r: &Rule, blocks: bool) -> &'static str {
    if blocks {
        "error"
    } else if r.rule_type == RuleType::SecurityHotspot {
        "note"
    } else {
        "warning"
    }
}

/// GitHub's security severity score for a Vulnerability's default severity; for a rule that
/// does not fail the gate at most 6.5 (GitHub's `medium`), since GitHub fails its default check
/// on `high` (7.0 and over).
fn security_severity(s: Severity, blocks: bool) -> &'static str {
    match s {
        Severity::Critical if blocks => "9.5",
        Severity::High if blocks => "8.0",
        Severity::Critical | Severity::High => "6.5",
        Severity::Medium | Severity::Review => "5.5",
        Severity::Low => "3.0",
    }
}

/// The rule type as a tag.
fn type_tag(t: RuleType) -> &'static str {
    match t {
        RuleType::Vulnerability => "vulnerability",
        RuleType::Bug => "bug",
        RuleType::SecurityHotspot => "security-hotspot",
    }
}

/// `Confused deputy` -> `ConfusedDeputy`.
fn pascal_case(title: &str) -> String {
    title
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut cs = w.chars();
            cs.next()
                .map(|c| c.to_uppercase().chain(cs).collect::<String>())
                .unwrap_or_default()
        })
        .collect()
}

/// The text as a sentence: a final period added when it has no final punctuation (SARIF's
/// messages are sentences).
fn sentence(s: &str) -> String {
    let t = s.trim_end();
    if t.ends_with(['.', '!', '?']) {
        t.to_string()
    } else {
        format!("{t}.")
    }
}

/// At most [`MAX_DESCRIPTION`] characters.
fn clip(s: &str) -> String {
    if s.chars().count() <= MAX_DESCRIPTION {
        return s.to_string();
    }
    let mut t: String = s.chars().take(MAX_DESCRIPTION - 3).collect();
    t.push_str("...");
    t
}

/// A SARIF plain-text message with its `[` and `]` escaped (SARIF 3.11.6), so a name holding
/// `[text](https://...)` is not read as an embedded link (issue 26).
fn unlinked(s: &str) -> String {
    s.replace('[', "\\[").replace(']', "\\]")
}

/// Escapes the characters Markdown would read as HTML.
fn md(s: &str) -> String {
    s.replace('<', "&lt;").replace('>', "&gt;")
}

/// `path` relative to `root`, with forward slashes and percent-encoding, as a SARIF `uri`:
/// both are resolved against the current directory and symlinks are resolved where the files
/// exist (GitHub resolves them). A path outside `root` climbs out with `../`.
pub(crate) fn repo_relative(path: &Path, root: &Path) -> String {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let file = resolve(&cwd.join(path));
    let root = resolve(&cwd.join(root));
    let f: Vec<Component<'_>> = file.components().collect();
    let r: Vec<Component<'_>> = root.components().collect();
    let common = f.iter().zip(&r).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = Vec::new();
    if common == 0 {
        // Nothing shared (another drive): the file name is all that is stable.
        parts.push(
            path.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        );
    } else {
        parts.extend(std::iter::repeat_n("..".to_string(), r.len() - common));
        parts.extend(
            f[common..]
                .iter()
                .map(|c| c.as_os_str().to_string_lossy().into_owned()),
        );
    }
    parts
        .iter()
        .map(|p| encode(p))
        .collect::<Vec<_>>()
        .join("/")
}

/// The path made absolute-normal: `.` and `..` folded, symlinks resolved for the longest prefix
/// that exists.
fn resolve(p: &Path) -> PathBuf {
    let mut lexical = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                lexical.pop();
            }
            other => lexical.push(other.as_os_str()),
        }
    }
    let mut existing = lexical.clone();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    loop {
        if let Ok(c) = existing.canonicalize() {
            let mut out = c;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match existing.file_name() {
            Some(name) => {
                rest.push(name.to_os_string());
                if !existing.pop() {
                    return lexical;
                }
            }
            None => return lexical,
        }
    }
}

/// Percent-encodes one path segment for a URI reference (RFC 3986 `pchar` without `:`, so that a
/// first segment is never read as a scheme).
fn encode(segment: &str) -> String {
    let mut out = String::new();
    for b in segment.bytes() {
        let keep = b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=@".contains(&b);
        if keep {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
