//! The set of files a generation produces, and how they reach the disk.
//!
//! `Generated` files are rewritten whenever their bytes change; `Scaffold` files belong to
//! the user once written and are only created when absent; a `Migration` is created once
//! and never changed, and their `Record` is rewritten like a generated file but synced to
//! disk as they are. Writing is all or nothing:
//! every changed file is staged beside its target first ([`Output::stage`]), and only when
//! all are staged are they renamed into place ([`Staged::persist`]), so a failed run leaves
//! the directory as it was.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// Owned by restgen, starts with an `@generated` header, rewritten when stale.
    Generated,
    /// Owned by the user once written; never overwritten.
    Scaffold,
    /// A migration: written once, never changed after, since databases that applied it
    /// check it has not changed. Writing different bytes over one is an error.
    Migration,
    /// The migration record: rewritten when stale, like a generated file, but it is the
    /// history the next generation plans from.
    Record,
}

impl FileKind {
    /// Whether the file must be on the disk before it replaces its target. Generated files
    /// are derived from the schema: one a crash leaves empty is mended by the next run, so
    /// they skip the `fsync`, most of a generation's files and much of its time.
    /// Migrations and their record are history, and a scaffold file is never rewritten once
    /// it exists: an empty one would stay.
    fn durable(self) -> bool {
        !matches!(self, FileKind::Generated)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputFile {
    pub kind: FileKind,
    pub contents: String,
}

/// Files by path relative to the output directory, in a stable order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Output {
    pub files: BTreeMap<PathBuf, OutputFile>,
}

/// What a write did to each file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    Created,
    Updated,
    Unchanged,
    /// A scaffold file that exists already and is left alone.
    Kept,
}

/// A file `--check` finds out of date.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stale {
    pub path: PathBuf,
    pub missing: bool,
}

impl Output {
    pub fn add(&mut self, path: impl Into<PathBuf>, kind: FileKind, contents: String) {
        self.files.insert(path.into(), OutputFile { kind, contents });
    }

    /// Adds every file of `other` (one there replaces one here of the same path).
    pub fn merge(&mut self, other: Output) {
        self.files.extend(other.files);
    }

    /// What writing into `dir` would do, without writing.
    pub fn plan(&self, dir: &Path) -> io::Result<Vec<(PathBuf, Action)>> {
        self.files
            .iter()
            .map(|(rel, file)| {
                let target = dir.join(rel);
                let action = match fs::read(&target) {
                    Err(e) if e.kind() == io::ErrorKind::NotFound => Action::Created,
                    Err(e) => return Err(io::Error::new(e.kind(), format!("{}: {e}", target.display()))),
                    Ok(_) if file.kind == FileKind::Scaffold => Action::Kept,
                    Ok(bytes) if bytes == file.contents.as_bytes() => Action::Unchanged,
                    Ok(_) if file.kind == FileKind::Migration => {
                        return Err(io::Error::other(format!(
                            "{} exists and differs from the migration this generation writes; a migration is never rewritten: restore migrations/ as the last generation left it (storage.json with it)",
                            target.display()
                        )));
                    }
                    Ok(_) => Action::Updated,
                };
                Ok((rel.clone(), action))
            })
            .collect()
    }

    /// Stages every created or updated file beside its target, synced where it must be
    /// durable; nothing is in place until [`Staged::persist`].
    pub fn stage(&self, dir: &Path) -> io::Result<Staged> {
        let plan = self.plan(dir)?;
        let mut files: Vec<(tempfile::NamedTempFile, PathBuf)> = Vec::new();
        for (rel, action) in &plan {
            if !matches!(action, Action::Created | Action::Updated) {
                continue;
            }
            let target = dir.join(rel);
            let parent = target.parent().unwrap_or(dir);
            fs::create_dir_all(parent).map_err(|e| with_path(e, parent))?;
            // Staged in the target's own directory so the final rename never crosses a
            // filesystem; dropped (and so deleted) if anything below fails.
            let mut builder = tempfile::Builder::new();
            builder.prefix(".restgen-");
            // A new file gets what `fs::write` gives it (read and write for all less the
            // umask: 0644 under the usual 022), not the owner-only 0600 a temporary file is
            // made with, which a web server, a container's user or a colleague sharing the
            // checkout could not read.
            #[cfg(unix)]
            builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
            let mut tmp = builder.tempfile_in(parent).map_err(|e| with_path(e, parent))?;
            if *action == Action::Updated {
                // The rename puts a new file in the old one's place: it keeps the old
                // one's mode, as an editor saving it would.
                let mode = fs::metadata(&target).map_err(|e| with_path(e, &target))?.permissions();
                tmp.as_file().set_permissions(mode).map_err(|e| with_path(e, &target))?;
            }
            let file = &self.files[rel];
            tmp.write_all(file.contents.as_bytes()).map_err(|e| with_path(e, &target))?;
            if file.kind.durable() {
                tmp.as_file().sync_all().map_err(|e| with_path(e, &target))?;
            }
            files.push((tmp, target));
        }
        Ok(Staged { plan: plan.into_iter().map(|(rel, action)| (dir.join(rel), action)).collect(), files })
    }

    /// The generated files whose bytes on disk differ from these, and missing files.
    pub fn stale(&self, dir: &Path) -> io::Result<Vec<Stale>> {
        Ok(self
            .plan(dir)?
            .into_iter()
            .filter_map(|(path, action)| match action {
                Action::Created => Some(Stale { path, missing: true }),
                Action::Updated => Some(Stale { path, missing: false }),
                Action::Unchanged | Action::Kept => None,
            })
            .collect())
    }
}

fn with_path(e: io::Error, path: &Path) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

/// Files written beside their targets and not yet in place. Dropped, they are deleted and
/// the directories are as they were; the sets staged by the pieces of a generation, made
/// on several threads, are put in place together once every one was staged.
#[derive(Debug)]
pub struct Staged {
    /// Every file's target (its directory joined) and what persisting does to it.
    plan: Vec<(PathBuf, Action)>,
    files: Vec<(tempfile::NamedTempFile, PathBuf)>,
}

impl Staged {
    /// Adds `other`'s files; the plan stays in path order.
    pub fn merge(&mut self, other: Staged) {
        self.plan.extend(other.plan);
        self.plan.sort_by(|a, b| a.0.cmp(&b.0));
        self.files.extend(other.files);
    }

    /// Renames every staged file over its target: what each file's target had done to it.
    pub fn persist(self) -> io::Result<Vec<(PathBuf, Action)>> {
        for (tmp, target) in self.files {
            tmp.persist(&target).map_err(|e| with_path(e.error, &target))?;
        }
        Ok(self.plan)
    }
}
