//! Every file a run opens goes through this one reader (issue 14): it opens only regular files,
//! never more than [`MAX_FILE_BYTES`] of them, never blocks on a FIFO, and says where a file
//! named by an input may lie.
//!
//! A pull request controls every file the verifier reads in CI, so each read is bounded and each
//! path an *input* names (agent.yaml's `catalogue:`, `python:`, `rulebook:`, a rulebook folder's
//! files and its `config.yml`, an export's `location.file`) is held to the workspace rule
//! ([`in_workspace`]): a regular file under the folder of the file that names it, or under the
//! current directory (the repository a CI job runs in), symlinks resolved first. Paths the command
//! line names (`--graph`, `--baseline`, `--advisories`, ...) are the user's own choice and are not
//! confined to a folder, but they are bounded the same way, and held to the symlink rule below.
//!
//! The checks are made on the opened handle (`fstat`), so a file swapped for a FIFO or a device
//! between the check and the read is still refused; a FIFO is opened without blocking.
//!
//! Every path, the command line's too, is first resolved by [`resolve`] (issue 26): a symlink in
//! the repository that leads out of it is refused, and so is any path into a `.git` folder, before
//! anything is opened. Writes go through [`write`] under the same rule.

mod resolve;
pub(crate) mod write;

pub(crate) use resolve::{has_git_component, resolve};

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The largest file any input may be (64 MiB): far above any real export, catalogue, rulebook,
/// trace file or baseline, and small enough that reading it cannot exhaust memory.
pub(crate) const MAX_FILE_BYTES: u64 = 64 << 20;

/// Why a file could not be read. `Display` says it in a few words (`no such file`, `not a regular
/// file (a FIFO)`, `larger than 64 MiB`, `not UTF-8 text (the first bad byte is at line 3,
/// column 7)`), without the path: the caller's message names the file and where it was named.
#[derive(Debug)]
pub enum ReadError {
    /// Nothing at the path.
    NotFound,
    /// A folder where a file was expected.
    Directory,
    /// A FIFO, a device or a socket: `what` says which.
    NotRegular(&'static str),
    /// Larger than the limit (bytes).
    TooLarge(u64),
    /// Not UTF-8: the 1-based line and column (in characters) of the first bad byte.
    NotUtf8 {
        /// 1-based line.
        line: u32,
        /// 1-based column, in characters.
        column: u32,
    },
    /// A path an input named resolves outside the workspace: where it resolves to.
    Outside(PathBuf),
    /// A symlink in the repository on the way leads out of it ([`resolve`]): the link and where
    /// it leads.
    Escapes {
        /// Where the symlink lies.
        link: PathBuf,
        /// Where it leads.
        to: PathBuf,
    },
    /// The path, as named or resolved, has a `.git` component.
    GitFolder,
    /// Any other failure of the operating system.
    Io(std::io::Error),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::NotFound => write!(f, "no such file"),
            ReadError::Directory => write!(f, "it is a folder, not a file"),
            ReadError::NotRegular(what) => write!(f, "not a regular file ({what})"),
            ReadError::TooLarge(limit) => {
                write!(f, "larger than {} MiB, the largest input read", limit >> 20)
            }
            ReadError::NotUtf8 { line, column } => write!(
                f,
                "it is not UTF-8 text (the first bad byte is at line {line}, column {column})"
            ),
            ReadError::Outside(to) => write!(
                f,
                "it resolves to {}, outside the folder of the file that names it and the current directory",
                crate::input::visible::visible(&to.display().to_string())
            ),
            ReadError::Escapes { link, to } => write!(
                f,
                "it goes through the symlink {}, which leads to {}, outside the repository (nothing of it is read or written)",
                crate::input::visible::visible(&link.display().to_string()),
                crate::input::visible::visible(&to.display().to_string())
            ),
            ReadError::GitFolder => write!(
                f,
                "it lies in a `.git` folder, the repository's own data (its config holds the checkout's token): it is never read or written"
            ),
            ReadError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ReadError {}

impl From<std::io::Error> for ReadError {
    fn from(e: std::io::Error) -> ReadError {
        match e.kind() {
            std::io::ErrorKind::NotFound => ReadError::NotFound,
            _ => ReadError::Io(e),
        }
    }
}

impl ReadError {
    /// The help line for this error: what the user can do about it.
    pub(crate) fn help(&self) -> &'static str {
        match self {
            ReadError::NotFound => "check the path",
            ReadError::Directory => "name a file",
            ReadError::NotRegular(_) => "name a regular file",
            ReadError::TooLarge(_) => "name the file the agent really uses: no real input is this large",
            ReadError::NotUtf8 { .. } => "save the file as UTF-8 text",
            ReadError::Outside(_) => {
                "keep the file in the repository, beside the file that names it or below it (a symlink out of the repository is not followed)"
            }
            ReadError::Escapes { .. } => {
                "name the file itself: a symlink in the repository is followed only to a place in the repository"
            }
            ReadError::GitFolder => "name a file outside `.git`",
            ReadError::Io(_) => "check that the file is readable",
        }
    }
}

/// What a file is, in words, when it is not a regular file.
fn kind_of(ft: std::fs::FileType) -> Option<&'static str> {
    if ft.is_file() {
        return None;
    }
    if ft.is_dir() {
        return Some("a folder");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return Some("a FIFO");
        }
        if ft.is_char_device() {
            return Some("a character device");
        }
        if ft.is_block_device() {
            return Some("a block device");
        }
        if ft.is_socket() {
            return Some("a socket");
        }
    }
    Some("not a file")
}

/// Opens the physical `path` ([`resolve`]d) for reading without blocking on a FIFO and without
/// following a symlink swapped in at its last component.
fn open(path: &Path) -> std::io::Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW);
    }
    o.open(path)
}

/// Reads at most `limit` bytes of the regular file at `path`.
///
/// Errors: [`ReadError::Escapes`] and [`ReadError::GitFolder`] ([`resolve`], before anything is
/// opened), [`ReadError::NotFound`], [`ReadError::Directory`], [`ReadError::NotRegular`] (checked
/// on the opened handle), [`ReadError::TooLarge`] (the size the handle reports, and the bytes
/// actually read: `/proc` files report 0), or the operating system's error.
pub(crate) fn read_bytes(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let (physical, exists) = resolve(path)?;
    if !exists {
        return Err(ReadError::NotFound);
    }
    let path = physical.as_path();
    // A FIFO is refused before it is opened where possible; the handle is checked again.
    if let Ok(meta) = std::fs::metadata(path) {
        if meta.is_dir() {
            return Err(ReadError::Directory);
        }
        if let Some(what) = kind_of(meta.file_type()) {
            return Err(ReadError::NotRegular(what));
        }
    }
    let file = open(path)?;
    let meta = file.metadata()?;
    if meta.is_dir() {
        return Err(ReadError::Directory);
    }
    if let Some(what) = kind_of(meta.file_type()) {
        return Err(ReadError::NotRegular(what));
    }
    if meta.len() > limit {
        return Err(ReadError::TooLarge(limit));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge(limit));
    }
    Ok(bytes)
}

/// Reads the regular file at `path` as UTF-8 text of at most `limit` bytes, with a leading
/// byte-order mark dropped (editors hide it; columns on line 1 then match).
///
/// Errors: those of [`read_bytes`], and [`ReadError::NotUtf8`] at the first bad byte.
pub fn read_text_limited(path: &Path, limit: u64) -> Result<String, ReadError> {
    let bytes = read_bytes(path, limit)?;
    let mut text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let good = e.utf8_error().valid_up_to();
            let bytes = e.into_bytes();
            let before = String::from_utf8_lossy(&bytes[..good]);
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            return Err(ReadError::NotUtf8 {
                line: u32::try_from(line).unwrap_or(u32::MAX),
                column: u32::try_from(column).unwrap_or(u32::MAX),
            });
        }
    };
    if text.starts_with('\u{feff}') {
        text.drain(..'\u{feff}'.len_utf8());
    }
    Ok(text)
}

/// [`read_text_limited`] with the input limit, [`MAX_FILE_BYTES`].
pub(crate) fn read_text(path: &Path) -> Result<String, ReadError> {
    read_text_limited(path, MAX_FILE_BYTES)
}

/// Checks that `path`, named by the file at `named_by`, lies in the workspace ([`in_workspace`]).
/// A path that does not exist is [`ReadError::NotFound`].
pub fn confine(path: &Path, named_by: &Path) -> Result<(), ReadError> {
    confine_to(path, &folder_of(named_by))
}

/// Checks that `path` (symlinks resolved) lies under the folder `dir` or under the current
/// directory. A path that does not exist is [`ReadError::NotFound`].
pub(crate) fn confine_to(path: &Path, dir: &Path) -> Result<(), ReadError> {
    let canon = std::fs::canonicalize(path)?;
    if under(&canon, dir) {
        Ok(())
    } else {
        Err(ReadError::Outside(canon))
    }
}

/// The folder of the file at `path` (`.` for a bare file name).
pub(crate) fn folder_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// True when `path` (symlinks resolved) lies under the folder of `base` (the file that names it)
/// or under the current directory (the repository a CI job runs in). Files a run reads on an
/// input's say-so must: an input must not make the report print, say, `/proc/self/environ` into
/// a CI log.
pub(crate) fn in_workspace(path: &Path, base: &Path) -> bool {
    confine(path, base).is_ok()
}

/// [`in_workspace`], or under the git repository holding the folder of `base` (its nearest
/// ancestor with a `.git`, a folder or the file a worktree or submodule has): where a source
/// location may point (SPEC 12.4: an export in `build/` names the sources in `../app/`).
pub(crate) fn in_repository(path: &Path, base: &Path) -> bool {
    if in_workspace(path, base) {
        return true;
    }
    let (Ok(canon), Ok(dir)) = (
        std::fs::canonicalize(path),
        std::fs::canonicalize(folder_of(base)),
    ) else {
        return false;
    };
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .is_some_and(|root| canon.starts_with(root))
}

/// True when the canonical `canon` lies under `dir` or the current directory.
fn under(canon: &Path, dir: &Path) -> bool {
    [Some(dir.to_path_buf()), std::env::current_dir().ok()]
        .into_iter()
        .flatten()
        .filter_map(|d| std::fs::canonicalize(d).ok())
        .any(|d| canon.starts_with(d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_and_fifos_are_refused_without_blocking() {
        assert!(matches!(
            read_text(Path::new("/dev/zero")),
            Err(ReadError::NotRegular("a character device"))
        ));
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("f");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            assert!(matches!(
                read_text(&fifo),
                Err(ReadError::NotRegular("a FIFO"))
            ));
        }
        assert!(matches!(read_text(dir.path()), Err(ReadError::Directory)));
        assert!(matches!(
            read_text(&dir.path().join("none")),
            Err(ReadError::NotFound)
        ));
    }

    #[test]
    fn proc_files_are_capped_by_what_is_read() {
        // /proc files report a size of 0: the cap holds on the bytes read.
        if Path::new("/proc/self/status").exists() {
            assert!(matches!(
                read_text_limited(Path::new("/proc/self/status"), 8),
                Err(ReadError::TooLarge(8))
            ));
        }
    }

    #[test]
    fn utf8_errors_name_the_line_and_bom_is_dropped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("t");
        std::fs::write(&p, b"ab\ncd\xffe").expect("write");
        assert!(matches!(
            read_text(&p),
            Err(ReadError::NotUtf8 { line: 2, column: 3 })
        ));
        std::fs::write(&p, "\u{feff}x: 1").expect("write");
        assert_eq!(read_text(&p).expect("reads"), "x: 1");
        std::fs::write(&p, "0123456789").expect("write");
        assert!(matches!(
            read_text_limited(&p, 9),
            Err(ReadError::TooLarge(9))
        ));
        assert_eq!(read_text_limited(&p, 10).expect("fits"), "0123456789");
    }
}
