//! QG010's names on NeMo Guardrails' own Colang (issue 20; `../shared/corpus/colang`): each
//! configuration of the corpus, its files compiled together as NeMo reads them, with the actions
//! it defines in Python (`tests/data/colang_corpus_configs.tsv`, written from NeMo's wheel and
//! source distribution by `tests/data/gen_colang_corpus_configs.py`, since the corpus carries
//! only the `.co` files), names nothing that nothing defines, except what is listed below with
//! the reason it is real. Skipped, saying so, where `../shared` is absent.

use std::collections::BTreeMap;
use std::path::PathBuf;

use stalwart::checks::rulebook_names::{unknown_names, Missing};
use stalwart::rulebook::budget::Budgets;
use stalwart::rulebook::compile::{compile, Input};
use stalwart::rulebook::flows::{FileFlows, Version};
use stalwart::rulebook::{colang1, colang2};

/// Actions of the corpus's configurations that Python neither the corpus nor NeMo's published
/// source distribution carries defines (NeMo's own test suite registers most of them, with
/// `register_action`, from tests/*.py the sdist leaves out): `(corpus file, action, where)`.
/// With that Python beside the rulebook they are defined, so they are not findings.
const PYTHON_ELSEWHERE: &[(&str, &str, &str)] = &[
    ("v1/sdist__docs__getting-started__5-output-rails__config__rails__blocked_terms.co", "check_blocked_terms", "the tutorial's config/actions.py, `@action(is_system_action=True) async def check_blocked_terms` (docs/getting-started/5-output-rails)"),
    ("v1/sdist__tests__test_configs__parallel_rails__rails__blocked_terms.co", "check_blocked_input_terms", "the test configuration's Python (tests/test_parallel_rails*.py), not published"),
    ("v1/sdist__tests__test_configs__parallel_rails__rails__blocked_terms.co", "check_blocked_output_terms", "the test configuration's Python (tests/test_parallel_rails*.py), not published"),
    ("v1/sdist__tests__test_configs__simple_actions__sample.co", "fetch_profile", "tests/test_*actions*.py: `llm_rails.runtime.register_action(fetch_profile)`"),
    ("v1/sdist__tests__test_configs__simple_actions__sample.co", "check_access", "tests/test_*actions*.py: `llm_rails.runtime.register_action(check_access)`"),
    ("v1/sdist__tests__test_configs__summarization__summarization.co", "analyze_document", "the summarization test's Python, not published"),
    ("v1/sdist__tests__test_configs__with_custom_action__config.co", "check_service_status", "tests/test_configs/with_custom_action/demo_custom_action.py: `app.register_action(check_service_status)`"),
    ("v2/sdist__tests__test_configs__with_custom_action_v2_x__config.co", "CustomTestAction", "the v2.x custom action test's Python, not published"),
    ("v1/sdist__tests__test_configs__with_custom_init__config.co", "get_user_name", "the configuration's config.py `init(app)`, which registers it, not published"),
    ("v2/sdist__tests__test_configs__with_custom_llm_prompt_action_v2_x__config.co", "CustomLlmRequestAction", "tests/test_configs/with_custom_llm_prompt_action_v2_x/actions.py: `@action(name=\"CustomLlmRequestAction\", ...)`"),
    ("v1/sdist__tests__test_configs__with_langchain_safetool__config.co", "openweather_query", "nemoguardrails/actions/langchain/actions.py makes it (`action(name=\"openweather_query\")(...)`, not a decorated definition) and the configuration's config.py registers it"),
    ("v2/sdist__tests__test_configs__simple_server_2_x__config_2__rails.co", "WolframAlphaAction", "the server test's Python, not published (NeMo's own `wolfram alpha request` normalises to another name)"),
];

/// Names the corpus's configurations use that no file, no Python of theirs and no part of NeMo
/// defines: `(corpus file, name, why it is real)`.
const REAL: &[(&str, &str, &str)] = &[
    ("v2/sdist__examples__v2_x__language_reference__flows__undefined_flow__main.co", "bot solve all your problems", "the language reference's example of starting an undefined flow"),
    ("v2/sdist__examples__v2_x__language_reference__internal_events__undefined_flow__hello_world__main.co", "bot solve all your problems", "the language reference's example of the undefined-flow event"),
    ("v2/sdist__tests__colang__parser__v2_x__inputs__test2.co", "c", "a parser test input, never run: `c` is a flow named as a statement that nothing defines"),
    ("v2/sdist__tests__colang__parser__v2_x__inputs__test3.co", "y", "a parser test input, never run"),
    ("v2/sdist__tests__colang__parser__v2_x__inputs__test8.co", "SomeRandomAction", "a parser test input, never run"),
    ("v2/sdist__tests__colang__parser__v2_x__inputs__test9.co", "animation", "a parser test input, never run"),
    ("v1/sdist__examples__configs__rag__fact_checking__rails__factcheck.co", "check_facts", "nothing in the 0.17.0 sdist or the 0.24.1 wheel defines it (NeMo's fact-checking action is `self_check_facts`); the example's own Python is not published, so this may be defined there"),
    ("v2/pkg__library__autoalign__flows.co", "bot provide response", "no file of NeMo 0.24.1 defines this flow: the library leaves it to the importing configuration's `llm continuation`, which is not in the file"),
    ("v2/pkg__library__content_safety__flows.co", "bot", "`bot $refusal_message` is, as NeMo's parser reads it, the flow `bot` with an argument, which nothing in NeMo 0.24.1 defines"),
];

fn corpus() -> Option<PathBuf> {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/corpus/colang"
    ));
    dir.join("MANIFEST.tsv").is_file().then_some(dir)
}

#[test]
fn nemos_own_configurations_name_nothing_undefined() {
    let Some(dir) = corpus() else {
        eprintln!("skipped: the Colang corpus (../shared/corpus/colang) is not beside this crate");
        return;
    };
    let table = include_str!("../data/colang_corpus_configs.tsv");
    // (configuration, version) -> its files and Python actions.
    let mut groups: BTreeMap<(String, String), (Vec<String>, Vec<String>)> = BTreeMap::new();
    for line in table.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        let [file, config, actions] = cols[..] else {
            panic!("a row of three columns: {line}");
        };
        let version = file.split('/').next().unwrap_or("").to_string();
        let g = groups.entry((config.to_string(), version)).or_default();
        g.0.push(file.to_string());
        g.1.extend(
            actions
                .split(',')
                .filter(|a| !a.is_empty())
                .map(str::to_string),
        );
    }
    assert!(groups.len() > 100, "the corpus's configurations are listed");
    let mut found = Vec::new();
    let mut compiled_files = 0;
    for ((config, version), (files, actions)) in &groups {
        let v = if version == "v2" {
            Version::V2
        } else {
            Version::V1
        };
        let mut lowered: Vec<(String, FileFlows)> = Vec::new();
        for f in files {
            let text = std::fs::read_to_string(dir.join(f)).expect("a corpus file");
            let flows = match v {
                Version::V1 => colang1::parse(&text).map(|p| colang1::lower(&p)),
                Version::V2 => colang2::parse(&text).map(|p| colang2::lower(&p)),
            };
            // The one file NeMo itself rejects (a syntax-highlighting sample) is not compiled.
            if let Ok(flows) = flows {
                lowered.push((f.clone(), flows));
            }
        }
        let inputs: Vec<Input<'_>> = lowered
            .iter()
            .map(|(p, f)| Input {
                path: p.clone(),
                version: v,
                flows: f,
            })
            .collect();
        compiled_files += inputs.len();
        let mut c = compile(&inputs, &Budgets::default())
            .unwrap_or_else(|e| panic!("{config}: does not compile: {e:?}"));
        c.defined_actions = actions.clone();
        for (f, a, _) in PYTHON_ELSEWHERE {
            if files.iter().any(|x| x == f) {
                c.defined_actions.push((*a).to_string());
            }
        }
        for u in unknown_names(&c, &[]) {
            let file = &c.files[u.at.file].path;
            let what = match u.what {
                Missing::Action => "action",
                Missing::Flow | Missing::Rail => "flow",
            };
            found.push((file.clone(), u.name.clone(), what, u.at.line));
        }
    }
    assert!(compiled_files > 200, "the corpus's files are compiled");
    let unexplained: Vec<String> = found
        .iter()
        .filter(|(f, n, _, _)| !REAL.iter().any(|(rf, rn, _)| rf == f && rn == n))
        .map(|(f, n, w, l)| format!("{f}:{l}: {w} '{n}'"))
        .collect();
    assert!(
        unexplained.is_empty(),
        "QG010 names on NeMo's own files (false positives unless shown real):\n{}",
        unexplained.join("\n")
    );
    let stale: Vec<_> = REAL
        .iter()
        .filter(|(rf, rn, _)| !found.iter().any(|(f, n, _, _)| rf == f && rn == n))
        .collect();
    assert!(stale.is_empty(), "listed as real but not found: {stale:?}");
}
