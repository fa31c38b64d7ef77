//! Where a path really leads (issue 26): every file a run reads or writes is resolved here, one
//! component at a time, before it is opened, so a symlink the pull request committed cannot take
//! a read or a write out of the repository.
//!
//! The rule. A path is held to its *roots*: the current directory's repository and the path's own
//! (each the nearest folder holding `.git`, found upward from the physical folder). Where the
//! current directory is in no repository, the current directory itself is its root; a path in no
//! repository has no root of its own (so `/dev/stdout`, a link in `/dev`, is the machine's).
//!
//! - A symlink followed on the way that lies inside a repository or a root must lead inside that
//!   repository or a root; else the path is refused ([`ReadError::Escapes`]), naming the link and
//!   where it leads, and nothing of the target is read or written.
//! - A symlink that lies in no repository and no root (`/tmp` on macOS, a runner's `$RUNNER_TEMP`
//!   mounted elsewhere) is the machine's, not the pull request's, and is followed.
//! - A path with a `.git` component, as named or as resolved, is refused
//!   ([`ReadError::GitFolder`]): `.git/config` holds the checkout's token, `.git/hooks` runs code.
//!
//! So a path the user names lexically outside any repository (`$RUNNER_TEMP/stalwart.sarif`,
//! `/tmp/out.json`) is read or written as long as no symlink inside a repository is followed to get
//! there. The path's own root is found only through symlinks that lie in no repository and not in
//! the current directory's root: a committed symlink to another checkout does not make that
//! checkout a root.
//!
//! The resolution is made just before the open, and the open itself refuses a symlink at the final
//! component (`O_NOFOLLOW`), so a link swapped in at the last moment is not followed either. A
//! folder on the way swapped for a link between the two is not caught: that needs a writer racing
//! the run on the same machine, which the pull request is not.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use super::ReadError;

/// Symlinks one resolution may follow (Linux's own limit).
const MAX_LINKS: usize = 40;

/// True when a component of `path` is `.git` (in any case: some file systems ignore it).
pub(crate) fn has_git_component(path: &Path) -> bool {
    path.components().any(|c| match c {
        Component::Normal(n) => n.to_str().is_some_and(|s| s.eq_ignore_ascii_case(".git")),
        _ => false,
    })
}

/// `path` made absolute against the current directory.
fn absolute(path: &Path) -> std::io::Result<PathBuf> {
    if path.is_absolute() {
        Ok(path.to_path_buf())
    } else {
        Ok(std::env::current_dir()?.join(path))
    }
}

/// `path` with `.` dropped and `name/..` removed, as written (no symlink is looked at).
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The nearest folder at or above the physical folder `dir` that holds `.git` (a folder, or the
/// file a worktree or a submodule has).
fn repository_of(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| std::fs::symlink_metadata(d.join(".git")).is_ok())
        .map(Path::to_path_buf)
}

/// Resolves `path` one component at a time, as the operating system does (a `..` after a symlink
/// is taken in the link's target), calling `on_link(where the link lies, where it leads)` for
/// every symlink before following it. Components past the first missing one are taken as written.
/// Returns the physical path and whether it exists.
fn walk(
    path: &Path,
    on_link: &mut dyn FnMut(&Path, &Path) -> Result<(), ReadError>,
) -> Result<(PathBuf, bool), ReadError> {
    let mut todo: Vec<OsString> = absolute(path)?
        .components()
        .rev()
        .map(|c| c.as_os_str().to_owned())
        .collect();
    let mut at = PathBuf::new();
    let mut exists = true;
    let mut hops = 0;
    while let Some(c) = todo.pop() {
        let comp = Path::new(&c).components().next();
        match comp {
            None | Some(Component::CurDir) => {}
            Some(Component::ParentDir) => {
                at.pop();
            }
            // Pushing the root (or a prefix) starts again from it.
            Some(Component::RootDir | Component::Prefix(_)) => at.push(&c),
            Some(Component::Normal(name)) => {
                let next = at.join(name);
                if !exists {
                    at = next;
                    continue;
                }
                match std::fs::symlink_metadata(&next) {
                    Ok(m) if m.file_type().is_symlink() => {
                        hops += 1;
                        if hops > MAX_LINKS {
                            return Err(ReadError::Io(std::io::Error::other(
                                "too many symlinks on the way (a loop?)",
                            )));
                        }
                        let target = std::fs::read_link(&next)?;
                        let leads = std::fs::canonicalize(&next)
                            .unwrap_or_else(|_| lexical(&at.join(&target)));
                        on_link(&next, &leads)?;
                        todo.extend(target.components().rev().map(|c| c.as_os_str().to_owned()));
                    }
                    Ok(_) => at = next,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        exists = false;
                        at = next;
                    }
                    Err(e) => return Err(e.into()),
                }
            }
        }
    }
    Ok((at, exists))
}

/// The folders a path is held to (see the module's rule).
struct Roots(Vec<PathBuf>);

impl Roots {
    /// The current directory's root and `path`'s own.
    fn of(path: &Path) -> Roots {
        let mut roots = Vec::new();
        if let Some(cwd) = std::env::current_dir()
            .ok()
            .and_then(|c| std::fs::canonicalize(c).ok())
        {
            roots.push(repository_of(&cwd).unwrap_or(cwd));
        }
        if let Some(own) = own_root(path, &roots) {
            roots.push(own);
        }
        Roots(roots)
    }

    fn hold(&self, p: &Path) -> bool {
        self.0.iter().any(|r| p.starts_with(r))
    }
}

/// The root of `path`'s own folder: its repository, found only through symlinks that lie in no
/// repository and no root already `known`; `None` otherwise, or where there is no repository.
fn own_root(path: &Path, known: &[PathBuf]) -> Option<PathBuf> {
    let abs = lexical(&absolute(path).ok()?);
    let folder = abs.parent()?;
    let mut trusted = true;
    let (phys, _) = walk(folder, &mut |link, _| {
        let inside = link
            .parent()
            .is_some_and(|p| repository_of(p).is_some() || known.iter().any(|r| p.starts_with(r)));
        trusted &= !inside;
        Ok(())
    })
    .ok()?;
    trusted.then(|| repository_of(&phys)).flatten()
}

/// Where `path` really leads, held to the rule of the module: the physical path and whether it
/// exists. Errors: [`ReadError::GitFolder`], [`ReadError::Escapes`], or the operating system's.
pub(crate) fn resolve(path: &Path) -> Result<(PathBuf, bool), ReadError> {
    if has_git_component(path) {
        return Err(ReadError::GitFolder);
    }
    let roots = Roots::of(path);
    let (phys, exists) = walk(path, &mut |link, leads| {
        let parent = link.parent().unwrap_or(link);
        let home = repository_of(parent);
        if home.is_none() && !roots.hold(parent) {
            return Ok(()); // the machine's link, not the repository's
        }
        if roots.hold(leads) || home.as_deref().is_some_and(|h| leads.starts_with(h)) {
            Ok(())
        } else {
            Err(ReadError::Escapes {
                link: link.to_path_buf(),
                to: leads.to_path_buf(),
            })
        }
    })?;
    if has_git_component(&phys) {
        return Err(ReadError::GitFolder);
    }
    Ok((phys, exists))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn links_in_a_repository_stay_in_it() {
        let d = tempfile::tempdir().expect("tempdir");
        let repo = d.path().join("repo");
        std::fs::create_dir_all(repo.join(".git")).expect("mkdir");
        std::fs::create_dir_all(repo.join("a")).expect("mkdir");
        std::fs::write(repo.join("a/f"), "x").expect("write");
        let outside = d.path().join("outside");
        std::fs::write(&outside, "secret").expect("write");
        symlink(&outside, repo.join("out")).expect("link");
        symlink("a/f", repo.join("in")).expect("link");
        symlink(d.path(), repo.join("up")).expect("link");
        assert!(matches!(
            resolve(&repo.join("out")),
            Err(ReadError::Escapes { .. })
        ));
        assert!(matches!(
            resolve(&repo.join("up/outside")),
            Err(ReadError::Escapes { .. })
        ));
        let (p, exists) = resolve(&repo.join("in")).expect("inside");
        assert!(exists && p.ends_with("repo/a/f"), "{p:?}");
        // Outside any repository and any root, a path is the user's own.
        let (p, exists) = resolve(&outside).expect("outside, named");
        assert!(exists && p.ends_with("outside"));
        let (_, exists) = resolve(&repo.join("a/new")).expect("new file");
        assert!(!exists);
        assert!(matches!(
            resolve(&repo.join(".git/config")),
            Err(ReadError::GitFolder)
        ));
        symlink(".git", repo.join("g")).expect("link");
        assert!(matches!(
            resolve(&repo.join("g/config")),
            Err(ReadError::GitFolder)
        ));
    }
}
