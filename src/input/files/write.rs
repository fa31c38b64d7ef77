//! Every file a run writes (`-o`, `--sarif`, `--summary`, `--export-only` and the catalogue beside
//! it, `rules compile --out`, `catalogue from-mcp -o`) goes through [`write_text`] (issue 26): the
//! path is [`resolve`](super::resolve)d under the read rule (no symlink in the repository followed
//! out of it, nothing in `.git`), the file is opened without following a symlink at its last
//! component, and a file the run read as an input is never written over.

use std::fmt;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use super::ReadError;

/// How the file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Created, or emptied and written.
    Replace,
    /// Created, or added to at its end (a job summary).
    Append,
}

/// Why a file was not written. `Display` says it in a few words, without the path: the caller
/// names the file and the option that named it.
#[derive(Debug)]
pub(crate) enum WriteError {
    /// The path was refused or its folder could not be resolved ([`super::resolve`]).
    Path(ReadError),
    /// The path is a folder.
    Directory,
    /// The path is a file the run reads as an input (as resolved: the same device and inode).
    Input(PathBuf),
    /// The operating system's error.
    Io(std::io::Error),
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteError::Path(ReadError::NotFound) => write!(f, "its folder does not exist"),
            WriteError::Path(e) => write!(f, "{e}"),
            WriteError::Directory => write!(f, "it is a folder"),
            WriteError::Input(p) => write!(
                f,
                "it is {}, an input of this run, which is never written over",
                crate::input::visible::visible(&p.display().to_string())
            ),
            WriteError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for WriteError {}

impl WriteError {
    /// The help line: what the user can do about it.
    pub(crate) fn help(&self) -> &'static str {
        match self {
            WriteError::Path(ReadError::NotFound) => "create the folder first",
            WriteError::Path(e) => e.help(),
            WriteError::Directory => "name a file",
            WriteError::Input(_) => "name another file for the output",
            WriteError::Io(_) => "check the folder exists and is writable",
        }
    }
}

/// The identity of the file at `path` (symlinks followed): device and inode on unix, the
/// canonical path elsewhere; `None` when there is no file.
#[cfg(unix)]
fn identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn identity(path: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(path).ok()
}

/// Where `path` would be written: its physical path ([`super::resolve`]), refused when it is a
/// folder or one of `inputs` (the files the run reads). The folder holding it must exist.
///
/// Errors: those of [`super::resolve`], [`WriteError::Directory`], [`WriteError::Input`].
pub(crate) fn target(path: &Path, inputs: &[PathBuf]) -> Result<PathBuf, WriteError> {
    place(path, inputs).map(|(p, _)| p)
}

/// [`target`], and whether the last component is to be followed: only for a path that exists
/// through a link the resolution cannot name (`/dev/stdout`, a `/proc/self/fd` link to a pipe or a
/// terminal), reached through no symlink in a repository (else [`super::resolve`] refused it).
fn place(path: &Path, inputs: &[PathBuf]) -> Result<(PathBuf, bool), WriteError> {
    let (physical, exists) = super::resolve(path).map_err(WriteError::Path)?;
    if !exists {
        if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
            return Ok((path.to_path_buf(), true));
        }
        let folder_exists = physical.parent().is_some_and(Path::is_dir);
        return if folder_exists {
            Ok((physical, false))
        } else {
            Err(WriteError::Path(ReadError::NotFound))
        };
    }
    if physical.is_dir() {
        return Err(WriteError::Directory);
    }
    if let Some(id) = identity(&physical) {
        if let Some(input) = inputs.iter().find(|i| identity(i).as_ref() == Some(&id)) {
            return Err(WriteError::Input(input.clone()));
        }
    }
    Ok((physical, false))
}

/// Writes `text` to `path` ([`Mode`]), held to the rule of [`target`], opened without following a
/// symlink at its last component (a link swapped in after the check is refused, not followed).
/// A device or a pipe the user names outside the repository (`/dev/null`, `/dev/stdout`) is
/// written as before: git cannot commit one, so a pull request cannot put one in the way.
pub(crate) fn write_text(
    path: &Path,
    text: &str,
    mode: Mode,
    inputs: &[PathBuf],
) -> Result<(), WriteError> {
    let (physical, follow) = place(path, inputs)?;
    let mut o = std::fs::OpenOptions::new();
    o.create(true);
    match mode {
        Mode::Replace => o.write(true).truncate(true),
        Mode::Append => o.append(true),
    };
    #[cfg(unix)]
    if !follow {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NOFOLLOW);
    }
    #[cfg(not(unix))]
    let _ = follow;
    let mut f = o.open(&physical).map_err(WriteError::Io)?;
    f.write_all(text.as_bytes()).map_err(WriteError::Io)
}

/// Creates the folder `dir` and those above it, held to the rule of [`super::resolve`] (a folder
/// on the way that is a symlink out of the repository is refused, not followed). Returns the
/// physical folder.
pub(crate) fn create_folder(dir: &Path) -> Result<PathBuf, WriteError> {
    let (physical, _) = super::resolve(dir).map_err(WriteError::Path)?;
    std::fs::create_dir_all(&physical).map_err(WriteError::Io)?;
    Ok(physical)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn writes_refuse_links_out_inputs_and_git() {
        let d = tempfile::tempdir().expect("tempdir");
        let repo = d.path().join("repo");
        std::fs::create_dir_all(repo.join(".git")).expect("mkdir");
        let outside = d.path().join("victim");
        std::fs::write(&outside, "keep").expect("write");
        std::os::unix::fs::symlink(&outside, repo.join("out.sarif")).expect("link");
        let got = write_text(&repo.join("out.sarif"), "x", Mode::Replace, &[]);
        assert!(matches!(
            got,
            Err(WriteError::Path(ReadError::Escapes { .. }))
        ));
        assert_eq!(std::fs::read_to_string(&outside).expect("read"), "keep");
        let input = repo.join("agent.yaml");
        std::fs::write(&input, "a").expect("write");
        let got = write_text(&input, "x", Mode::Replace, std::slice::from_ref(&input));
        assert!(matches!(got, Err(WriteError::Input(_))));
        let got = write_text(&repo.join(".git/hooks/pre-commit"), "x", Mode::Replace, &[]);
        assert!(matches!(got, Err(WriteError::Path(ReadError::GitFolder))));
        write_text(&repo.join("r.txt"), "a", Mode::Replace, &[]).expect("writes");
        write_text(&repo.join("r.txt"), "b", Mode::Append, &[]).expect("appends");
        assert_eq!(
            std::fs::read_to_string(repo.join("r.txt")).expect("read"),
            "ab"
        );
        let got = write_text(&repo.join("none/r.txt"), "a", Mode::Replace, &[]);
        assert!(matches!(got, Err(WriteError::Path(ReadError::NotFound))));
        // A device the user names is written as before.
        write_text(Path::new("/dev/null"), "x", Mode::Replace, &[]).expect("/dev/null");
    }
}
