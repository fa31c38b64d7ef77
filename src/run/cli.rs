//! The command line (SPEC 1): `stalwart verify`, `stalwart rules list|explain`.
//!
//! This module wires the stages in the one direction they flow - inputs, model, engine, checks,
//! report, outputs - and owns the exit status: 0 the gate passed, 1 it failed, 2 the proof could
//! not run (bad input, an unknown option value, an internal error). A proof that could not run
//! never prints a clean result.

use crate::findings::GateMode;
use crate::input;
use crate::output;
use crate::project::config;
use crate::project::options::Options;
use crate::report::picture::Picture;
use crate::rulebook::budget;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::io::IsTerminal;
use std::path::PathBuf;

/// stalwart-verify: proves that no route through an agent's graph reaches a tool without its
/// check, its confirmation, its order rule or its taint rule, and that its writes can be undone.
#[derive(Parser, Debug)]
#[command(name = "stalwart", version, about, long_about = None)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Verify an agent.yaml, or a qls-graph/1 export with its catalogue.
    Verify(Box<VerifyArgs>),
    /// The rules: list them, or explain one.
    Rules {
        #[command(subcommand)]
        command: RulesCommand,
    },
    /// Catalogues from elsewhere: `from-mcp TOOLS.json` reads an MCP server's tools/list result.
    Catalogue {
        #[command(subcommand)]
        command: CatalogueCommand,
    },
    /// The shell's completion script on standard output: `stalwart completions bash >
    /// ~/.local/share/bash-completion/completions/stalwart` (also zsh, fish, elvish, powershell).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

#[derive(Subcommand, Debug)]
enum CatalogueCommand {
    /// An MCP `tools/list` result (or its JSON-RPC response) as a qls-catalogue/1: kinds and words
    /// from the tools' annotations (readOnlyHint, destructiveHint, idempotentHint, openWorldHint),
    /// MCP's defaults for a hint the server did not give.
    FromMcp {
        /// The tools/list result (JSON).
        tools: PathBuf,
        /// Where to write the catalogue (default: standard output).
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
}

#[derive(Subcommand, Debug)]
enum RulesCommand {
    /// Every rule with its type, gate and default severity, and the code checks.
    List {
        /// `text` (a table) or `json`.
        #[arg(long, value_enum, default_value = "text")]
        format: ListFormat,
    },
    /// One rule in full: what it finds, proves and does not prove, and the fix.
    Explain {
        /// The rule id, e.g. QG011.
        id: String,
    },
    /// Compile a rulebook (a .co file, a folder of them, or a rule sheet) into a record folder
    /// that `verify --rulebook DIR` reads as it is.
    Compile {
        /// The rulebook.
        policy: PathBuf,
        /// The folder to write (`DIR/record.json`).
        #[arg(long)]
        out: PathBuf,
        /// The Colang version (`1.0` or `2.x`); else a config.yml beside the rulebook, else 1.0.
        #[arg(long)]
        colang_version: Option<String>,
        #[command(flatten)]
        budgets: BudgetArgs,
    },
}

/// The rulebook's budgets (src/rulebook/budget.rs): past one, the rulebook does not compile
/// (QG005 in `verify`, exit 2 in `rules compile`) at the line that crossed it.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Rulebook budgets")]
struct BudgetArgs {
    /// Atoms and operators one rulebook condition may have, as written or as a route's path
    /// condition.
    #[arg(long, default_value_t = budget::CONDITION, value_name = "N")]
    rulebook_max_condition: usize,
    /// Flows the rulebook may run from flows, nested (`do`, `await`), the first included
    /// (at most 32: the compile walks them recursively).
    #[arg(long, default_value_t = budget::DEPTH, value_name = "N",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=budget::MAX_DEPTH as u64))]
    rulebook_max_depth: usize,
    /// Statements the rulebook's compile may walk, each once for every path through it (a
    /// called flow's statements again for each call).
    #[arg(long, default_value_t = budget::STEPS, value_name = "N")]
    rulebook_max_steps: usize,
    /// Routes to executes the compiled rulebook may hold.
    #[arg(long, default_value_t = budget::ROUTES, value_name = "N")]
    rulebook_max_routes: usize,
    /// Bytes the rulebook's files may hold, in total.
    #[arg(long, default_value_t = budget::SOURCE_BYTES, value_name = "BYTES")]
    rulebook_max_source_bytes: usize,
    /// Bytes the compiled record (record.json, which keeps the sources) may take.
    #[arg(long, default_value_t = budget::RECORD_BYTES, value_name = "BYTES")]
    rulebook_max_record_bytes: usize,
    /// Implications QG002 may ask Z3 when it compares a tool's routes; the routes it could not
    /// compare are undecided (QG006).
    #[arg(long, default_value_t = budget::IMPLICATIONS, value_name = "N")]
    rulebook_max_implications: usize,
}

impl BudgetArgs {
    fn budgets(&self) -> budget::Budgets {
        budget::Budgets {
            condition: self.rulebook_max_condition,
            depth: self.rulebook_max_depth,
            steps: self.rulebook_max_steps,
            routes: self.rulebook_max_routes,
            source_bytes: self.rulebook_max_source_bytes,
            record_bytes: self.rulebook_max_record_bytes,
            implications: self.rulebook_max_implications,
        }
    }
}

/// Output formats (SPEC 8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// The human report.
    Text,
    /// The documented JSON schema.
    Json,
    /// SARIF 2.1.0 for GitHub code scanning.
    Sarif,
    /// GitHub Actions workflow commands (`::error file=…,line=…::…`), one per finding, for the job log.
    Github,
    /// One line a finding: `file:line:column: RULE Severity subject: message`.
    Concise,
    /// The graph as a Mermaid flowchart, one finding's witness highlighted (`--witness`).
    Mermaid,
    /// The graph as Graphviz DOT, one finding's witness highlighted (`--witness`).
    Dot,
}

/// Formats of `stalwart rules list`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ListFormat {
    /// A table.
    Text,
    /// `{"rules": [...], "code_checks": [...]}`.
    Json,
}

/// Engines (SPEC 9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum EngineChoice {
    Explicit,
    Z3,
    Both,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Args, Debug)]
struct VerifyArgs {
    /// The Bot Builder agent.yaml to verify (with --catalogue: a qls-graph/1 export, as --graph).
    agent_yaml: Option<PathBuf>,
    /// A qls-graph/1 export (JSON) to verify instead of an agent.yaml.
    #[arg(long, help_heading = "Input")]
    graph: Option<PathBuf>,
    /// The catalogue (JSON or YAML) the export's tools are classified by.
    #[arg(long, help_heading = "Input")]
    catalogue: Option<PathBuf>,
    /// A rulebook (Colang, a rule sheet or a compiled folder).
    #[arg(long, help_heading = "Input")]
    rulebook: Option<PathBuf>,
    /// A team's own list of rails with advisories (the format of rules/advisories.toml), added to
    /// the built-in one for QG022.
    #[arg(long, help_heading = "Input")]
    advisories: Option<PathBuf>,
    /// Conversation turns to search, 1..=16 (default: the input's, else 1).
    #[arg(long, help_heading = "Search")]
    session_steps: Option<u32>,
    /// Output format (`--output-format` is the same flag, as ruff spells it).
    #[arg(
        long,
        value_enum,
        default_value = "text",
        alias = "output-format",
        help_heading = "Output"
    )]
    format: Format,
    /// Also write SARIF to this file.
    #[arg(long, help_heading = "Output")]
    sarif: Option<PathBuf>,
    /// Write the output to this file instead of standard output.
    #[arg(long, short = 'o', help_heading = "Output")]
    output: Option<PathBuf>,
    /// Engine(s) to run: the explicit-state search, the Z3 bounded model checker, or both,
    /// compared (a disagreement is QG312 and fails the gate) [default: both]
    #[arg(long, value_enum, help_heading = "Search")]
    engine: Option<EngineChoice>,
    /// Z3's resource units (its deterministic `rlimit`) one query may spend; a query past it
    /// leaves its obligation undecided (QG006), never clean. The same on every machine.
    /// [default: 100000000]
    #[arg(long, value_name = "N", value_parser = in_range::<u32>(config::SOLVER_RLIMIT), help_heading = "Z3 limits")]
    solver_rlimit: Option<u32>,
    /// Z3's resource units one obligation's queries may spend together (then QG006).
    /// [default: 300000000]
    #[arg(long, value_name = "N", value_parser = in_range::<u64>(config::SOLVER_OBLIGATION_RLIMIT),
        help_heading = "Z3 limits")]
    solver_obligation_rlimit: Option<u64>,
    /// Z3's resource units all obligations' queries may spend together; once the obligations
    /// asked have spent this many, the rest are undecided (QG006) without a query.
    /// [default: 1000000000]
    #[arg(long, value_name = "N", value_parser = in_range::<u64>(config::SOLVER_RUN_RLIMIT),
        help_heading = "Z3 limits")]
    solver_run_rlimit: Option<u64>,
    /// A wall-clock safety net: milliseconds Z3 may spend on one query (then QG006). Off unless
    /// given, since an answer it cuts short depends on the machine's load; the resource limits
    /// above are what bound Z3.
    #[arg(long, value_name = "MS", value_parser = in_range::<u32>(config::SOLVER_TIMEOUT_MS),
        help_heading = "Z3 limits")]
    solver_timeout_ms: Option<u32>,
    /// The largest unrolling (frames x (nodes + edges)) the Z3 engine builds for one obligation;
    /// a larger one is left undecided (QG006) at once.
    /// [default: 150000]
    #[arg(long, value_name = "N", value_parser = in_range::<usize>(config::SOLVER_MAX_UNROLLING),
        help_heading = "Z3 limits")]
    solver_max_unrolling: Option<usize>,
    /// The gate: `ci` fails on rules that fail the gate, `start` on rules that stop Agent(...)
    /// [default: ci]
    #[arg(long, value_enum, help_heading = "The gate in CI")]
    gate: Option<GateMode>,
    /// Write the compiled qls-graph/1 (and OUT.catalogue.json) and exit.
    #[arg(long, help_heading = "Output")]
    export_only: Option<PathBuf>,
    /// Replay one finding's witness on the concrete interpreter, step by step: FINDING is its
    /// number in the report without --baseline (from 1) or its fingerprint (or a unique prefix
    /// of 4 or more hex digits). With `--format json`, the script a harness around the real
    /// graph replays. Exit 0 when it reproduces, 1 when it does not (QG312).
    #[arg(long, value_name = "FINDING", help_heading = "Output")]
    replay: Option<String>,
    /// Traces of real runs, JSON Lines (one `{"run": id, "steps": [{"node": id, "tool": name}]}` a
    /// line): a run that takes a transition the export does not have and then makes a privileged
    /// call is QG016.
    #[arg(long, value_name = "RUNS.jsonl", help_heading = "Input")]
    traces: Option<PathBuf>,
    /// Colour in the text report.
    #[arg(long, value_enum, default_value = "auto", help_heading = "Output")]
    color: ColorChoice,
    /// The human report is not printed when the gate passes (the exit status says it); the
    /// machine formats (`--format json|sarif|github`) are always written whole.
    #[arg(long, short = 'q', help_heading = "Output")]
    quiet: bool,
    /// The project configuration (default: the first stalwart.toml, or pyproject.toml with
    /// [tool.stalwart], from the input's folder up to the repository root).
    #[arg(long, value_name = "FILE", help_heading = "Input")]
    config: Option<PathBuf>,
    /// Read no project configuration.
    #[arg(long, conflicts_with = "config", help_heading = "Input")]
    no_config: bool,
    /// An accept that matches nothing, or whose `until` has passed, fails the gate.
    #[arg(long, help_heading = "The gate in CI")]
    strict_accepts: bool,
    /// A count of findings per rule, instead of the report (with the text or concise format).
    #[arg(long, help_heading = "Output")]
    statistics: bool,
    /// Also append a Markdown job summary to FILE (the gate, a table per rule, the picture of
    /// the first blocking finding's route): the Action gives `$GITHUB_STEP_SUMMARY`.
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    summary: Option<PathBuf>,
    /// With `--format mermaid|dot`: the finding whose witness is highlighted, by its number in
    /// the report or its fingerprint (default: the first blocking finding).
    #[arg(long, value_name = "FINDING", help_heading = "Output")]
    witness: Option<String>,
    /// States one obligation's search may keep (about 200 bytes each) before it is reported
    /// undecided (QG006) rather than searched further [default: 4000000]
    #[arg(long, value_parser = in_range::<usize>(config::MAX_STATES), help_heading = "Search")]
    max_states: Option<usize>,
    /// States all obligations' searches together may generate (a state reached again counts
    /// again); once the obligations searched have generated this many, the rest are reported
    /// undecided (QG006) without a search [default: 20000000]
    #[arg(long, value_parser = in_range::<u64>(config::MAX_RUN_STATES), help_heading = "Search")]
    max_run_states: Option<u64>,
    /// The repository root SARIF URIs are made relative to (default: the current directory).
    #[arg(long, help_heading = "Output")]
    repo_root: Option<PathBuf>,
    /// The code-scanning category written in the SARIF (`automationDetails.id`; default
    /// `stalwart-verify/<input>`)
    #[arg(long, help_heading = "Output")]
    sarif_category: Option<String>,
    /// An earlier run's SARIF or JSON: report only the findings whose fingerprints are new
    #[arg(long, help_heading = "The gate in CI")]
    baseline: Option<PathBuf>,
    /// A pull request's base (a git revision of the input's repository): the project
    /// configuration and the baseline are read as they are there, and every change the checkout
    /// makes to them, and every accept comment it adds, is named as a weakening and not applied
    /// (docs/how-it-decides.md). The Action gives the pull request's base commit.
    #[arg(long, value_name = "REV", help_heading = "The gate in CI")]
    base_ref: Option<String>,
    #[command(flatten)]
    budgets: BudgetArgs,
}

/// An error that stops the run: printed, exit 2.
/// Rendered as a miette diagnostic, like the input errors, so every error looks alike.
/// Text from an input inside `msg` or `help` is escaped ([`crate::input::visible`]).
fn fail(msg: impl std::fmt::Display, help: &str) -> i32 {
    let msg = crate::input::visible::visible_lines(&msg.to_string()).into_owned();
    let help = crate::input::visible::visible_lines(help);
    let report = if help.is_empty() {
        miette::miette!("{msg}")
    } else {
        miette::miette!(help = help.to_string(), "{msg}")
    };
    eprintln!("{report:?}");
    2
}

/// Runs the command line; returns the exit status.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    match cli.command {
        Command::Rules { command } => rules(command),
        Command::Verify(args) => verify(*args),
        Command::Catalogue {
            command: CatalogueCommand::FromMcp { tools, output },
        } => input::mcp::run(&tools, output.as_deref()),
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(
                shell,
                &mut <Cli as clap::CommandFactory>::command(),
                "stalwart",
                &mut script,
            );
            emit(&String::from_utf8_lossy(&script), 0)
        }
    }
}

fn rules(cmd: RulesCommand) -> i32 {
    match cmd {
        RulesCommand::List { format } => match format {
            ListFormat::Text => emit(&output::rules_cmd::list(), 0),
            ListFormat::Json => emit(&output::rules_cmd::list_json(), 0),
        },
        RulesCommand::Explain { id } => match output::rules_cmd::explain(&id.to_uppercase()) {
            Some(text) => emit(&text, 0),
            None => fail(
                format!("no rule '{id}'"),
                "`stalwart rules list` shows every rule id",
            ),
        },
        RulesCommand::Compile {
            policy,
            out,
            colang_version,
            budgets,
        } => compile_rulebook(&policy, &out, colang_version.as_deref(), &budgets.budgets()),
    }
}

/// Test-only: in a debug build, `STALWART_TEST_BROKEN_ENGINE=z3` makes the Z3 engine claim every
/// obligation holds, so the tests can show that a disagreement is caught (QG312). Release builds
/// ignore it.
fn broken_engine_switch() -> bool {
    cfg!(debug_assertions) && std::env::var("STALWART_TEST_BROKEN_ENGINE").is_ok_and(|v| v == "z3")
}

/// `stalwart rules compile POLICY --out DIR` (SPEC 1, 2.4): writes `DIR/record.json`.
fn compile_rulebook(
    policy: &std::path::Path,
    out: &std::path::Path,
    version: Option<&str>,
    budgets: &budget::Budgets,
) -> i32 {
    use crate::rulebook::{load, record};
    let declared = match version {
        None => None,
        Some(v) => match load::parse_version(v) {
            Some(version) => Some(load::VersionChoice {
                version,
                from: "--colang-version".into(),
            }),
            None => return fail(format!("unknown --colang-version '{v}'"), "give 1.0 or 2.x"),
        },
    };
    let mut sources = crate::input::source::SourceMap::default();
    let display = policy.display().to_string();
    let origin = load::Origin::command_line(policy);
    let loaded = match load::load(&mut sources, policy, &display, declared, &origin, budgets) {
        Ok(l) => l,
        Err(e) => return print_input_error(e.into_error()),
    };
    let rec = load::to_record(&loaded, &sources);
    let target = out.join(record::FILE_NAME);
    let inputs: Vec<PathBuf> = sources.files.iter().map(|f| f.path.clone()).collect();
    if let Err(e) = crate::input::files::write::create_folder(out)
        .and_then(|_| crate::input::files::write::target(&target, &inputs))
    {
        return fail(
            format!("cannot write {} (--out): {e}", target.display()),
            e.help(),
        );
    }
    if std::fs::symlink_metadata(&target).is_ok() {
        let existing = match crate::input::files::read_text(&target) {
            Ok(t) => t,
            Err(e) => {
                return fail(
                    format!(
                        "{} exists and cannot be read ({e}): it is left as it is",
                        target.display()
                    ),
                    "name another --out folder",
                )
            }
        };
        if record::Record::from_json(&existing).is_err() && !existing.contains(record::FORMAT) {
            return fail(
                format!(
                    "{} exists and is not a rulebook record: it is left as it is",
                    target.display()
                ),
                "name another --out folder",
            );
        }
    }
    let written = crate::input::files::write::write_text(
        &target,
        &rec.to_json(),
        crate::input::files::write::Mode::Replace,
        &inputs,
    );
    if let Err(e) = written {
        return fail(
            format!("cannot write {} (--out): {e}", target.display()),
            e.help(),
        );
    }
    let version = match &loaded.version {
        Some(v) => format!("Colang {} ({})", v.version.as_str(), v.from),
        None => "a rule sheet".into(),
    };
    let actions: std::collections::BTreeSet<&str> = rec
        .compiled
        .routes
        .iter()
        .map(|r| r.action.as_str())
        .collect();
    emit(
        &format!(
            "Compiled the rulebook {display}, read as {version}, into {}: {} route(s) to {} action(s), content hash {}.\n",
            target.display(),
            rec.compiled.routes.len(),
            actions.len(),
            rec.content_hash
        ),
        0,
    )
}

fn print_input_error(e: crate::input::error::InputError) -> i32 {
    eprintln!("{:?}", miette::Report::new(e));
    2
}

fn verify(a: VerifyArgs) -> i32 {
    errors_follow(a.color);
    let format = a.format;
    let output = a.output.clone();
    let inputs = named_inputs(&a);
    match verify_run(a) {
        Ok(code) => code,
        Err(stop) => stopped(stop, format, output.as_deref(), &inputs),
    }
}

/// The error reports (miette's) coloured as `--color` says: always, never, or (auto) when
/// standard error is a terminal and `NO_COLOR` is not set (issue 31 item 4).
fn errors_follow(color: ColorChoice) {
    let on = match color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
        }
    };
    // Set once per process; a second call (tests calling `main` twice) keeps the first.
    let _ = miette::set_hook(Box::new(move |_| {
        Box::new(miette::MietteHandlerOpts::new().color(on).build())
    }));
}

/// `stalwart verify`: the exit status, or why the run stopped before a report.
fn verify_run(a: VerifyArgs) -> Result<i32, Stop> {
    if a.replay.is_some() && !matches!(a.format, Format::Text | Format::Json) {
        return Err(Stop::plain(
            "--replay writes text or JSON",
            "give `--format text` (the walkthrough) or `--format json` (the script)",
        ));
    }
    if a.replay.is_some() && a.sarif.is_some() {
        return Err(Stop::plain(
            "--replay writes one finding's walkthrough, not a SARIF log",
            "run `stalwart verify ... --sarif FILE` without --replay for the SARIF",
        ));
    }
    if let (Some(s), Some(o)) = (&a.sarif, &a.output) {
        if s == o {
            return Err(Stop::plain(
                format!("--sarif and --output both name {}", s.display()),
                "give the SARIF file and the report different paths",
            ));
        }
    }
    let loaded = match (&a.agent_yaml, &a.graph, &a.catalogue) {
        (Some(p), None, None) => input::load_agent_yaml(p),
        // `stalwart verify graph.json --catalogue c.json`, as users type it: an agent.yaml names
        // its own catalogue, so a file given with --catalogue is the export.
        (None, Some(g), Some(c)) | (Some(g), None, Some(c)) => input::load_export(g, c),
        (None, Some(_), None) => {
            return Err(Stop::plain(
                "--graph needs --catalogue",
                "give the catalogue the export's tools are classified by",
            ))
        }
        (Some(_), Some(_), _) => return Err(Stop::plain(
            "give either an agent.yaml or --graph, not both",
            "`stalwart verify agent.yaml` or `stalwart verify --graph g.json --catalogue c.json`",
        )),
        (None, None, _) => return Err(Stop::plain(
            "nothing to verify",
            "`stalwart verify agent.yaml` or `stalwart verify --graph g.json --catalogue c.json`",
        )),
    };
    let inputs = match loaded {
        Ok(i) => i,
        Err(e) => return Err(Stop::Input(e)),
    };
    if let Some(out) = &a.export_only {
        return match input::write_export(&inputs, out) {
            Ok(()) => {
                eprintln!(
                    "wrote {} and {}",
                    out.display(),
                    input::catalogue_path(out).display()
                );
                Ok(0)
            }
            Err(e) => Err(Stop::Input(e)),
        };
    }
    let base = match &a.base_ref {
        Some(rev) => Some(
            crate::project::base_ref::BaseRef::open(rev, input_path(&a))
                .map_err(|e| Stop::plain(e.message, &e.help))?,
        ),
        None => None,
    };
    let mut config_sources = crate::input::source::SourceMap::default();
    let (config, mut changes) = read_config(&a, base.as_ref(), &mut config_sources)?;
    let declared_steps = inputs.export.session_steps;
    let session_steps = crate::run::verify::session_steps(
        a.session_steps,
        inputs.export.session_steps,
        config.session_steps,
    )
    .map_err(Stop::Input)?;
    let engine = a.engine.or(config.engine.map(|e| match e {
        crate::project::config::Engine::Explicit => EngineChoice::Explicit,
        crate::project::config::Engine::Z3 => EngineChoice::Z3,
        crate::project::config::Engine::Both => EngineChoice::Both,
    }));
    let opts = Options {
        session_steps,
        gate: a.gate.or(config.gate).unwrap_or(GateMode::Ci),
        rulebook: a.rulebook.as_ref().map(|p| p.display().to_string()),
        max_states: a
            .max_states
            .or(config.max_states)
            .unwrap_or(crate::engine::Limits::default().max_states),
        max_run_states: a
            .max_run_states
            .or(config.max_run_states)
            .unwrap_or(crate::engine::Limits::default().max_run_states),
        engine: match engine.unwrap_or(EngineChoice::Both) {
            EngineChoice::Explicit => crate::engine::EngineChoice::Explicit,
            EngineChoice::Z3 => crate::engine::EngineChoice::Z3,
            EngineChoice::Both => crate::engine::EngineChoice::Both,
        },
        z3: crate::engine::bmc::Config {
            query_rlimit: a
                .solver_rlimit
                .or(config.solver_rlimit)
                .unwrap_or(crate::engine::bmc::DEFAULT_QUERY_RLIMIT),
            obligation_rlimit: a
                .solver_obligation_rlimit
                .or(config.solver_obligation_rlimit)
                .unwrap_or(crate::engine::bmc::DEFAULT_OBLIGATION_RLIMIT),
            run_rlimit: a
                .solver_run_rlimit
                .or(config.solver_run_rlimit)
                .unwrap_or(crate::engine::bmc::DEFAULT_RUN_RLIMIT),
            timeout_ms: a.solver_timeout_ms.or(config.solver_timeout_ms),
            max_size: a
                .solver_max_unrolling
                .or(config.solver_max_unrolling)
                .unwrap_or(crate::engine::bmc::Config::default().max_size),
            broken: broken_engine_switch(),
        },
        advisories: a.advisories.clone(),
        traces: a.traces.clone(),
        rulebook_budgets: a.budgets.budgets(),
    };
    let baseline = read_baseline(&a, base.as_ref(), &mut changes)?;
    let progress =
        crate::run::progress::Progress::start(&format!("verifying {}", inputs.input_display));
    let verified = crate::run::verify::verify_with_model(inputs, &opts);
    drop(progress);
    let (mut report, model) = match verified {
        Ok(r) => r,
        Err(crate::run::verify::VerifyError::Input(e)) => return Err(Stop::Input(e)),
        Err(crate::run::verify::VerifyError::Model(e)) => {
            return Err(Stop::plain(e, "fix the input and re-run"))
        }
    };
    // The configuration's files join the report's sources, so their lines can be pointed at.
    let config = adopt_config(&mut report, config_sources, config, &mut changes);
    let strict = a.strict_accepts || config.strict_accepts.unwrap_or(false);
    crate::project::triage::apply(
        &mut report,
        &config,
        crate::project::config::Date::today(),
        strict,
        base.as_ref(),
    );
    // A finding a baseline would hide is still there to replay: --replay reads every finding.
    if let Some(b) = baseline.as_ref().filter(|_| a.replay.is_none()) {
        crate::project::baseline::apply(&mut report, b);
    }
    report.weakened =
        crate::project::weaken::list(&report, &opts, &config, declared_steps, changes);
    let color = match a.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            a.output.is_none()
                && std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none()
        }
    };
    if let Some(spec) = &a.replay {
        let inputs = named_inputs(&a);
        return Ok(replay(
            &report,
            &model,
            spec,
            a.format,
            color,
            a.output.as_deref(),
            &inputs,
        ));
    }
    let root = a.repo_root.clone();
    let text = match a.format {
        Format::Text => output::text::render(&report, color),
        Format::Json => output::json::render(&report),
        Format::Sarif => {
            output::sarif::render_in_category(&report, root.as_deref(), a.sarif_category.as_deref())
        }
        Format::Github => output::github::render(&report, root.as_deref()),
        Format::Concise => output::concise::render(&report),
        Format::Mermaid | Format::Dot => {
            let chosen = match &a.witness {
                Some(spec) => match crate::replay::select(&report, spec) {
                    Ok(i) => report.findings.get(i),
                    Err(e) => return Err(Stop::Plain(e.message, e.help)),
                },
                None => report.findings.iter().find(|f| report.blocks(f)),
            };
            let picture = Picture::of(&model);
            if a.format == Format::Mermaid {
                output::picture::mermaid(&picture, chosen)
            } else {
                output::picture::dot(&picture, chosen)
            }
        }
    };
    let text = if a.statistics && a.format == Format::Json {
        output::concise::statistics_json(&report)
    } else if a.statistics {
        output::concise::statistics(&report)
    } else {
        text
    };
    // No output is written over a file the run read (issue 26).
    let mut inputs = named_inputs(&a);
    inputs.extend(report.sources.files.iter().map(|f| f.path.clone()));
    if let Some(path) = &a.summary {
        let md = output::summary::render(&report, &Picture::of(&model));
        let appended = crate::input::files::write::write_text(
            path,
            &md,
            crate::input::files::write::Mode::Append,
            &inputs,
        );
        if let Err(e) = appended {
            return Err(Stop::plain(
                format!(
                    "cannot write the summary {} (--summary): {e}",
                    path.display()
                ),
                e.help(),
            ));
        }
    }
    if let Some(path) = &a.sarif {
        let sarif = output::sarif::render_in_category(
            &report,
            root.as_deref(),
            a.sarif_category.as_deref(),
        );
        if let Err(code) = write_file(path, &sarif, "--sarif", &inputs) {
            return Ok(code);
        }
    }
    match &a.output {
        Some(path) => {
            if let Err(code) = write_file(path, &text, "--output", &inputs) {
                return Ok(code);
            }
        }
        None => {
            // --quiet silences the human report on a pass; a machine format is always written.
            let human = matches!(a.format, Format::Text | Format::Concise);
            if !(a.quiet && report.passed() && human) {
                return Ok(emit(&text, report.exit_code()));
            }
        }
    }
    Ok(report.exit_code())
}

/// Why `stalwart verify` stopped before a report (exit 2): bad input, located, or a plain reason.
enum Stop {
    /// Bad input, located in its file.
    Input(crate::input::error::InputError),
    /// Anything else: the message and the fix.
    Plain(String, String),
}

impl Stop {
    fn plain(msg: impl std::fmt::Display, help: &str) -> Stop {
        Stop::Plain(msg.to_string(), help.to_string())
    }
}

/// Says why the run stopped, as the format asks: the diagnostic on standard error always; with
/// `--format json` also `{"error": {...}, "exit": 2}` on standard output (or `--output`), with
/// `--format github` also an `::error` workflow command. Returns 2.
fn stopped(
    stop: Stop,
    format: Format,
    output: Option<&std::path::Path>,
    inputs: &[PathBuf],
) -> i32 {
    let (message, help, location) = match stop {
        Stop::Input(e) => {
            let said = (
                e.message().to_string(),
                e.help_text().unwrap_or("").to_string(),
                e.location().map(|(f, l, c)| (f.to_string(), l, c)),
            );
            print_input_error(e);
            said
        }
        Stop::Plain(m, h) => {
            fail(&m, &h);
            (m, h, None)
        }
    };
    let machine = match format {
        Format::Json => Some(output::json::error(&message, &help, location.as_ref())),
        Format::Github => Some(output::github::error(&message, location.as_ref())),
        Format::Text | Format::Sarif | Format::Concise | Format::Mermaid | Format::Dot => None,
    };
    if let Some(text) = machine {
        match output {
            Some(path) => {
                let _ = write_file(path, &text, "--output", inputs);
            }
            None => {
                let _ = emit(&text, 2);
            }
        }
    }
    2
}

/// A flag's parser taking the range of its `stalwart.toml` key ([`config::Limit`], whose bounds
/// are at least 1), so the two never differ.
fn in_range<T>(limit: config::Limit) -> clap::builder::RangedU64ValueParser<T>
where
    T: TryFrom<u64> + Clone + Send + Sync + 'static,
    <T as TryFrom<u64>>::Error: Send + Sync + 'static + std::error::Error + ToString,
{
    let lo = u64::try_from(limit.lo).unwrap_or(1);
    let hi = u64::try_from(limit.hi).unwrap_or(u64::MAX);
    clap::builder::RangedU64ValueParser::<T>::new().range(lo..=hi)
}

/// The files the command line names for the run to read: no output is written over them.
fn named_inputs(a: &VerifyArgs) -> Vec<PathBuf> {
    [
        &a.agent_yaml,
        &a.graph,
        &a.catalogue,
        &a.rulebook,
        &a.advisories,
        &a.traces,
        &a.config,
        &a.baseline,
    ]
    .into_iter()
    .flatten()
    .cloned()
    .collect()
}

/// The input's path (agent.yaml, else the export), for finding the project configuration.
fn input_path(a: &VerifyArgs) -> &std::path::Path {
    a.agent_yaml
        .as_deref()
        .or(a.graph.as_deref())
        .unwrap_or(std::path::Path::new("."))
}

/// The configuration that applies, and the changes a pull request makes to it (`--base-ref`):
/// without a base, the checkout's (`--config FILE`, or the one found upward, or none under
/// `--no-config`); with one, the base's copy of the same file, the checkout's read only to name
/// what it changes (SPEC 8.1). A `--config` outside the repository is not the pull request's and
/// is read as it is. The files read go into `sources`.
fn read_config(
    a: &VerifyArgs,
    base: Option<&crate::project::base_ref::BaseRef>,
    sources: &mut crate::input::source::SourceMap,
) -> Result<
    (
        crate::project::config::Config,
        Vec<crate::report::Weakening>,
    ),
    Stop,
> {
    use crate::project::config::{self, Config};
    if a.no_config {
        return Ok((Config::default(), Vec::new()));
    }
    let path = a.config.clone().or_else(|| config::find(input_path(a)));
    let head = match &path {
        Some(p) => config::read(sources, p).map_err(Stop::Input)?,
        None => Config::default(),
    };
    let Some(b) = base else {
        return Ok((head, Vec::new()));
    };
    let plain = |e: crate::project::base_ref::BaseError| Stop::plain(e.message, &e.help);
    let at_base = match &a.config {
        Some(p) if b.relative(p).is_none() => return Ok((head, Vec::new())),
        Some(p) => b.text(p).map_err(plain)?.map(|t| (p.clone(), t)),
        None => b.find_config(input_path(a)).map_err(plain)?,
    };
    let base_config = match at_base {
        Some((p, text)) => {
            let display = format!("{} (at {})", p.display(), b.short());
            config::parse(sources, display, &p, text).map_err(Stop::Input)?
        }
        None => Config::default(),
    };
    let changes = crate::project::weaken::config_changes(&base_config, &head, b.short());
    Ok((base_config, changes))
}

/// The baseline (`--baseline`), as it is on the base under `--base-ref` when the file lies in the
/// repository: a baseline the pull request adds is not applied, one it changes is read from the
/// base, and either is named in `changes` (SPEC 8.1).
fn read_baseline(
    a: &VerifyArgs,
    base: Option<&crate::project::base_ref::BaseRef>,
    changes: &mut Vec<crate::report::Weakening>,
) -> Result<Option<crate::project::baseline::Baseline>, Stop> {
    let Some(path) = a.baseline.as_deref() else {
        return Ok(None);
    };
    let stop = |e: crate::project::baseline::BaselineError| Stop::plain(e.message, &e.help);
    let head = crate::project::baseline::read(path).map_err(stop)?;
    let Some(b) = base.filter(|b| b.relative(path).is_some()) else {
        return Ok(Some(head));
    };
    let shown = path.display().to_string();
    let said = |message: String| crate::report::Weakening {
        kind: crate::report::WeakKind::PullRequest,
        message,
        at: None,
    };
    let at_base = b.text(path).map_err(|e| Stop::plain(e.message, &e.help))?;
    match at_base {
        None => {
            changes.push(said(format!(
                "this pull request adds the baseline {shown}: not applied (the base {} has none)",
                b.short()
            )));
            Ok(None)
        }
        Some(text) => {
            let old = crate::project::baseline::parse(format!("{shown} (at {})", b.short()), &text)
                .map_err(stop)?;
            if old.fingerprints != head.fingerprints {
                changes.push(said(format!(
                    "this pull request changes the baseline {shown}: not applied (this run uses \
                     the base's copy, at {})",
                    b.short()
                )));
            }
            Ok(Some(old))
        }
    }
}

/// Moves the configuration's files into the report's sources, renumbering the locations of the
/// configuration applied and of the changes named.
fn adopt_config(
    report: &mut crate::report::Report,
    sources: crate::input::source::SourceMap,
    mut config: crate::project::config::Config,
    changes: &mut [crate::report::Weakening],
) -> crate::project::config::Config {
    let offset = report.sources.files.len();
    for f in sources.files {
        report.sources.add(f.display, f.path, f.text);
    }
    let shift = |loc: &mut crate::input::source::Loc| loc.file += offset;
    config.file = config.file.map(|f| f + offset);
    for o in &mut config.off {
        shift(&mut o.loc);
    }
    for a in &mut config.accepts {
        shift(&mut a.loc);
    }
    for loc in config.keys.values_mut() {
        shift(loc);
    }
    if let Some(p) = &mut config.undecided_pass {
        shift(&mut p.loc);
    }
    for c in changes.iter_mut() {
        if let Some(loc) = &mut c.at {
            shift(loc);
        }
    }
    config
}

/// `--replay FINDING`: walks the finding's witness and prints the walkthrough (text) or the
/// script (JSON). Exit 0 when it reproduces, 1 when it does not (QG312), 2 when no finding, or a
/// finding with no route through the graph, is named.
fn replay(
    report: &crate::report::Report,
    model: &crate::model::FlatModel,
    spec: &str,
    format: Format,
    color: bool,
    output: Option<&std::path::Path>,
    inputs: &[PathBuf],
) -> i32 {
    let walk =
        crate::replay::select(report, spec).and_then(|i| crate::replay::walk(model, report, i));
    let w = match walk {
        Ok(w) => w,
        Err(e) => return fail(e.message, &e.help),
    };
    let text = match format {
        Format::Json => output::replay::json(report, &w),
        _ => output::replay::text(report, &w, color),
    };
    let code = if w.reproduces() { 0 } else { 1 };
    match output {
        Some(path) => write_file(path, &text, "--output", inputs).map_or_else(|c| c, |()| code),
        None => emit(&text, code),
    }
}

/// Writes `text` to `path`, which the option `flag` named, never over one of `inputs` nor through
/// a symlink out of the repository ([`crate::input::files::write`]); `Err(2)` after saying why it could
/// not.
fn write_file(
    path: &std::path::Path,
    text: &str,
    flag: &str,
    inputs: &[PathBuf],
) -> Result<(), i32> {
    crate::input::files::write::write_text(
        path,
        text,
        crate::input::files::write::Mode::Replace,
        inputs,
    )
    .map_err(|e| {
        fail(
            format!("cannot write {} ({flag}): {e}", path.display()),
            e.help(),
        )
    })
}

/// Writes `text` to standard output and returns `code`. A reader that went away (`| head`) is
/// not an error of the proof: the exit status stays the verdict's. Any other failure to write
/// (a full disk) is exit 2, since the report was not delivered.
fn emit(text: &str, code: i32) -> i32 {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => code,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => code,
        Err(e) => fail(
            format!("cannot write the report to standard output: {e}"),
            "check where standard output goes (a full disk?)",
        ),
    }
}
