//! The pull request's base (`--base-ref REV`, SPEC 8.1): the project configuration, the baseline
//! and the source lines that carry accept comments, as they are at a git revision.
//!
//! A pull request controls every file of its checkout, `stalwart.toml` and the baseline
//! included, so a gate that read them from the checkout could be turned green by the pull request
//! it judges. Under `--base-ref`, the verifier applies the base's configuration and baseline, and
//! names every change the pull request makes to them, and every accept comment it adds, as a
//! weakening (none of them applied).
//!
//! Files are read with `git cat-file blob REV:PATH` (the stored bytes: no textconv, no filter
//! driver runs), bounded as every input is ([`crate::input::files::MAX_FILE_BYTES`]), in the repository
//! that holds the input. A path outside that repository (a baseline downloaded to
//! `$RUNNER_TEMP`) is not the pull request's, and is read from disk as it is.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A git revision of the input's repository, to read files as they are there.
#[derive(Debug, Clone)]
pub(crate) struct BaseRef {
    /// The revision as given (a commit id, a branch).
    pub(crate) rev: String,
    /// The repository's top folder, resolved.
    root: PathBuf,
}

/// Why the base could not be read: the message and the fix (exit 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BaseError {
    /// What went wrong.
    pub(crate) message: String,
    /// What to do.
    pub(crate) help: String,
}

fn error(message: String, help: &str) -> BaseError {
    BaseError {
        message,
        help: help.to_string(),
    }
}

/// True when `rev` can be handed to git as a revision: no leading `-` (an option), no white
/// space or control character, at most 200 characters.
fn plausible(rev: &str) -> bool {
    !rev.is_empty()
        && rev.len() <= 200
        && !rev.starts_with('-')
        && rev
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._/^~@{}-".contains(c))
}

impl BaseRef {
    /// The revision `rev` of the repository that holds `near` (the input).
    ///
    /// # Errors
    /// `rev` is not a plausible revision; git is missing; `near` is in no repository; the
    /// revision is not in the clone (a shallow checkout: fetch it).
    pub(crate) fn open(rev: &str, near: &Path) -> Result<BaseRef, BaseError> {
        if !plausible(rev) {
            return Err(error(
                format!(
                    "--base-ref '{}' is not a git revision",
                    crate::input::visible::visible(rev)
                ),
                "give the pull request's base commit (its 40 hex digits), or a branch name",
            ));
        }
        let dir = std::fs::canonicalize(near)
            .ok()
            .and_then(|p| {
                if p.is_dir() {
                    Some(p)
                } else {
                    p.parent().map(Path::to_path_buf)
                }
            })
            .ok_or_else(|| {
                error(
                    format!("--base-ref: cannot resolve {}", near.display()),
                    "give an input that exists",
                )
            })?;
        let top = git(&dir, &["rev-parse", "--show-toplevel"]).map_err(|e| {
            error(
                format!(
                    "--base-ref: {} is in no git repository ({e})",
                    dir.display()
                ),
                "run in the repository's checkout, or leave --base-ref out",
            )
        })?;
        let root = std::fs::canonicalize(String::from_utf8_lossy(&top).trim())
            .unwrap_or_else(|_| dir.clone());
        let commit = format!("{rev}^{{commit}}");
        if git(&root, &["cat-file", "-e", &commit]).is_err() {
            return Err(error(
                format!("--base-ref: the revision {rev} is not in this clone"),
                "fetch it first (`git fetch --no-tags --depth=1 origin REV`, or check out with `fetch-depth: 0`)",
            ));
        }
        Ok(BaseRef {
            rev: rev.to_string(),
            root,
        })
    }

    /// `path` relative to the repository's top folder, when it lies inside it: as it is named
    /// (lexically, from the resolved working folder), so a folder or file the pull request made
    /// a symlink does not send the base's copy looked for elsewhere (the base's
    /// `agents/shop/stalwart.toml` is the one for `agents/shop/agent.yaml`, wherever the pull
    /// request's `agents/shop` leads). A path named outside the repository is judged resolved.
    pub(crate) fn relative(&self, path: &Path) -> Option<PathBuf> {
        if let Some(rel) = self.named(path) {
            return Some(rel);
        }
        let abs = std::fs::canonicalize(path).ok().or_else(|| {
            // A file the pull request deleted: resolve its folder.
            let parent = std::fs::canonicalize(path.parent()?).ok()?;
            Some(parent.join(path.file_name()?))
        })?;
        abs.strip_prefix(&self.root).ok().map(Path::to_path_buf)
    }

    /// `path` relative to the repository's top folder, its `.` and `..` taken lexically, when
    /// it is named inside it.
    fn named(&self, path: &Path) -> Option<PathBuf> {
        use std::path::Component;
        let abs = if path.is_absolute() {
            path.to_path_buf()
        } else {
            std::fs::canonicalize(std::env::current_dir().ok()?)
                .ok()?
                .join(path)
        };
        let mut out = PathBuf::new();
        for c in abs.components() {
            match c {
                Component::ParentDir => {
                    out.pop();
                }
                Component::CurDir => {}
                other => out.push(other),
            }
        }
        let rel = out.strip_prefix(&self.root).ok()?;
        (!rel.as_os_str().is_empty()).then(|| rel.to_path_buf())
    }

    /// The text of `path` at the revision: `Ok(None)` when it does not exist there (or is not
    /// in the repository).
    ///
    /// # Errors
    /// It is larger than the largest input, or not UTF-8 text.
    pub(crate) fn text(&self, path: &Path) -> Result<Option<String>, BaseError> {
        let Some(rel) = self.relative(path) else {
            return Ok(None);
        };
        self.text_rel(&rel)
    }

    /// The text of the repository-relative `rel` at the revision (`None`: not there).
    fn text_rel(&self, rel: &Path) -> Result<Option<String>, BaseError> {
        let spec = format!("{}:{}", self.rev, rel.to_string_lossy().replace('\\', "/"));
        let Ok(size) = git(&self.root, &["cat-file", "-s", &spec]) else {
            return Ok(None);
        };
        let size: u64 = String::from_utf8_lossy(&size)
            .trim()
            .parse()
            .unwrap_or(u64::MAX);
        if size > crate::input::files::MAX_FILE_BYTES {
            return Err(error(
                format!("{spec} is larger than the largest input read"),
                "keep the configuration and the baseline small",
            ));
        }
        let kind = git(&self.root, &["cat-file", "-t", &spec]).unwrap_or_default();
        if String::from_utf8_lossy(&kind).trim() != "blob" {
            return Ok(None);
        }
        let bytes = git(&self.root, &["cat-file", "blob", &spec]).map_err(|e| {
            error(
                format!("cannot read {spec}: {e}"),
                "check the revision and the path",
            )
        })?;
        String::from_utf8(bytes).map(Some).map_err(|_| {
            error(
                format!("{spec} is not UTF-8 text"),
                "keep the configuration and the baseline as UTF-8 text",
            )
        })
    }

    /// The project configuration that applies to `input` at the revision, as
    /// [`crate::project::config::find`] looks for it in the checkout: the first `stalwart.toml`, or
    /// `pyproject.toml` with `[tool.stalwart]`, from the input's folder up to the repository's
    /// top. The path returned is the checkout's path of that file.
    ///
    /// # Errors
    /// A file found is too large or not text.
    pub(crate) fn find_config(&self, input: &Path) -> Result<Option<(PathBuf, String)>, BaseError> {
        let Some(rel) = self.relative(input) else {
            return Ok(None);
        };
        let mut dir = rel.parent().map(Path::to_path_buf);
        while let Some(d) = dir {
            let toml = d.join(crate::project::config::FILE_NAME);
            if let Some(text) = self.text_rel(&toml)? {
                return Ok(Some((self.root.join(toml), text)));
            }
            let py = d.join("pyproject.toml");
            if let Some(text) = self.text_rel(&py)? {
                if text.contains("[tool.stalwart]") {
                    return Ok(Some((self.root.join(py), text)));
                }
            }
            dir = d.parent().map(Path::to_path_buf);
        }
        Ok(None)
    }

    /// A short name of the revision for messages: its first 12 characters.
    pub(crate) fn short(&self) -> &str {
        let end = self
            .rev
            .char_indices()
            .nth(12)
            .map_or(self.rev.len(), |(i, _)| i);
        &self.rev[..end]
    }
}

/// Runs `git -C dir ARGS` with no configuration from the environment that could run code, and
/// no bare repository found by looking (`safe.bareRepository=explicit`), and returns its
/// standard output.
fn git(dir: &Path, args: &[&str]) -> Result<Vec<u8>, String> {
    // A folder that looks like a bare repository (committable files) is never taken for one:
    // its config is the pull request's.
    let out = Command::new("git")
        .args(["-c", "safe.bareRepository=explicit"])
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if out.status.success() {
        Ok(out.stdout)
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::plausible;

    #[test]
    fn revisions_that_are_options_or_carry_spaces_are_refused() {
        assert!(plausible("4c39844"));
        assert!(plausible("origin/main"));
        assert!(plausible("HEAD~1"));
        assert!(!plausible("--output=/tmp/x"));
        assert!(!plausible("-p"));
        assert!(!plausible("main stalwart.toml"));
        assert!(!plausible("a\nb"));
        assert!(!plausible(""));
    }
}
