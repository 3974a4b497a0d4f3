//! The set of files a generation produces, and how they reach the disk.
//!
//! `Generated` files are rewritten whenever their bytes change; `Scaffold` files belong to
//! the user once written and are only created when absent; a `Migration` is created once
//! and never changed, and their `Record` is rewritten like a generated file but synced to
//! disk as they are. Writing is all or nothing:
//! every changed file is staged beside its target first, and only when all are staged are
//! they renamed into place, so a failed run leaves the directory as it was.

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
    /// they skip the `fsync` (two thirds of the files, a tenth of a generation's time).
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

    /// Writes every created or updated file, all or nothing.
    pub fn write(&self, dir: &Path) -> io::Result<Vec<(PathBuf, Action)>> {
        let plan = self.plan(dir)?;
        let mut staged: Vec<(tempfile::NamedTempFile, PathBuf)> = Vec::new();
        for (rel, action) in &plan {
            if !matches!(action, Action::Created | Action::Updated) {
                continue;
            }
            let target = dir.join(rel);
            let parent = target.parent().unwrap_or(dir);
            fs::create_dir_all(parent).map_err(|e| with_path(e, parent))?;
            // Staged in the target's own directory so the final rename never crosses a
            // filesystem; dropped (and so deleted) if anything below fails.
            let mut tmp =
                tempfile::Builder::new().prefix(".restgen-").tempfile_in(parent).map_err(|e| with_path(e, parent))?;
            let file = &self.files[rel];
            tmp.write_all(file.contents.as_bytes()).map_err(|e| with_path(e, &target))?;
            if file.kind.durable() {
                tmp.as_file().sync_all().map_err(|e| with_path(e, &target))?;
            }
            staged.push((tmp, target));
        }
        for (tmp, target) in staged {
            tmp.persist(&target).map_err(|e| with_path(e.error, &target))?;
        }
        Ok(plan)
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
