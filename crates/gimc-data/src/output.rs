//! Writing output files: the one writer behind every file gimc produces (predictions, cluster
//! assignments, constraint files, model files, traces, plots, experiment reports, synthetic
//! data).
//!
//! ```
//! use std::io::Write;
//!
//! use gimc_data::output::{OutputError, OutputFile, write_file};
//!
//! let dir = std::env::temp_dir().join(format!("gimc-output-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! let input = dir.join("data.svm");
//! std::fs::write(&input, "1 1:0.5\n")?;
//!
//! // Whole contents at once, or streamed and then committed.
//! write_file(&dir.join("pred.txt"), b"0\n", &[&input])?;
//! let mut out = OutputFile::create(&dir.join("big.txt"), &[&input])?;
//! writeln!(out, "0")?;
//! out.commit()?;
//! assert_eq!(std::fs::read_to_string(dir.join("big.txt"))?, "0\n");
//!
//! // An output that is one of the inputs, or a directory, is refused before anything is
//! // written.
//! let err = write_file(&input, b"0\n", &[&input]).err().ok_or("expected an error")?;
//! assert!(matches!(err, OutputError::SameAsInput { .. }));
//! assert_eq!(std::fs::read_to_string(&input)?, "1 1:0.5\n");
//! let err = write_file(&dir, b"0\n", &[]).err().ok_or("expected an error")?;
//! assert!(matches!(err, OutputError::IsDirectory { .. }));
//! std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`OutputFile`] writes into a temporary file created exclusively in the target's directory
//! (`create_new`, i.e. `O_CREAT | O_EXCL`: an existing file or symbolic link at that name is
//! never opened, so never followed), named `.<target name>.<pid>-<counter>-<random>.tmp`. On
//! [`OutputFile::commit`] it flushes and fsyncs the file, renames it over the target and fsyncs
//! the directory where the platform allows it, so the target holds either its old contents or
//! all of the new ones, never a cut file, even when the disk fills up mid-write. A writer that
//! fails, or is dropped without being committed, removes its temporary file.
//!
//! Before it creates anything, [`check_output`] refuses a target that is a directory (or a
//! path ending in a separator) and a target that is the same file as one of the caller's
//! inputs: the same device and inode (through symbolic and hard links) where both exist.
//! [`check_outputs`] also refuses two outputs of one command that name the same file, so a
//! command checks all its outputs before a long computation.
//!
//! A symbolic link at the target's path is followed, as a shell's `>` does: the file it points
//! to is replaced (the temporary file is created beside that file) and the link is kept. The new
//! file takes the permissions of the file it replaces. A target that is neither a regular file
//! nor absent — a device such as `/dev/null`, a named pipe, a terminal behind `/dev/stdout` — is
//! written in place, since there is no file to replace (and renaming over a device would
//! remove it).

use std::fs::{File, OpenOptions};
use std::hash::{BuildHasher, Hasher};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// How often [`OutputFile::create`] tries another temporary name when one is taken.
const TEMP_ATTEMPTS: usize = 64;

/// The longest target name (in bytes) copied into a temporary file's name, leaving room for
/// the suffix within the usual 255-byte limit of a file name.
const TEMP_NAME_BYTES: usize = 180;

/// The most symbolic links followed from an output path (Linux's own limit).
const MAX_LINKS: usize = 40;

/// Why an output file was not written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutputError {
    /// The output is the same file as one of the inputs.
    #[error(
        "{}: the output is the same file as the input {}; writing it would replace the input \
         (choose another output path)",
        output.display(),
        input.display()
    )]
    SameAsInput {
        /// The output path.
        output: PathBuf,
        /// The input it names.
        input: PathBuf,
    },
    /// Two outputs of one command name the same file.
    #[error(
        "{} and {} name the same file: each output needs its own path",
        first.display(),
        second.display()
    )]
    SameOutput {
        /// The first output path.
        first: PathBuf,
        /// The second output path.
        second: PathBuf,
    },
    /// The output path names a directory.
    #[error("{}: is a directory, not a file (give the output file's name)", path.display())]
    IsDirectory {
        /// The output path.
        path: PathBuf,
    },
    /// Creating, writing, syncing or renaming the file failed (the target is left as it was).
    #[error("cannot write {}: {source}", path.display())]
    Io {
        /// The output path.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
}

impl OutputError {
    /// The [`OutputError::Io`] of an error while writing `path`.
    pub fn io(path: &Path, source: io::Error) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Checks that `path` can be an output next to `inputs`: not a directory (nor a path ending in
/// a separator), and not the same file as any input that exists (same device and inode on
/// Unix, the same canonical path elsewhere). A path that does not exist yet passes.
pub fn check_output(path: &Path, inputs: &[&Path]) -> Result<(), OutputError> {
    if path.as_os_str().is_empty() {
        return Err(OutputError::io(
            path,
            io::Error::new(io::ErrorKind::InvalidInput, "empty output path"),
        ));
    }
    let ends_in_separator = path
        .as_os_str()
        .to_string_lossy()
        .ends_with(std::path::is_separator);
    if ends_in_separator || path.file_name().is_none() || path.is_dir() {
        return Err(OutputError::IsDirectory {
            path: path.to_path_buf(),
        });
    }
    if let Some(input) = inputs.iter().find(|input| same_file(path, input)) {
        return Err(OutputError::SameAsInput {
            output: path.to_path_buf(),
            input: input.to_path_buf(),
        });
    }
    Ok(())
}

/// [`check_output`] for every one of `outputs`, and that no two of them name the same file
/// (the same existing file, or the same name in the same directory).
pub fn check_outputs(outputs: &[&Path], inputs: &[&Path]) -> Result<(), OutputError> {
    for (i, out) in outputs.iter().enumerate() {
        check_output(out, inputs)?;
        if let Some(first) = outputs[..i]
            .iter()
            .find(|o| same_file(o, out) || same_destination(o, out))
        {
            return Err(OutputError::SameOutput {
                first: first.to_path_buf(),
                second: out.to_path_buf(),
            });
        }
    }
    Ok(())
}

/// Writes `bytes` to `path` through an [`OutputFile`] (checked against `inputs` first).
pub fn write_file(path: &Path, bytes: &[u8], inputs: &[&Path]) -> Result<(), OutputError> {
    let mut out = OutputFile::create(path, inputs)?;
    out.write_all(bytes).map_err(|e| OutputError::io(path, e))?;
    out.commit()
}

/// Whether `a` and `b` both exist and are the same file.
fn same_file(a: &Path, b: &Path) -> bool {
    let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b)) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        ma.dev() == mb.dev() && ma.ino() == mb.ino()
    }
    #[cfg(not(unix))]
    {
        let _ = (ma, mb);
        matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(ca), Ok(cb)) if ca == cb
        )
    }
}

/// Whether `a` and `b`, their links followed, name the same entry of the same (existing)
/// directory.
fn same_destination(a: &Path, b: &Path) -> bool {
    let place = |p: &Path| -> Option<PathBuf> {
        let p = follow_links(p).ok()?;
        let dir = std::fs::canonicalize(parent_dir(&p)).ok()?;
        Some(dir.join(p.file_name()?))
    };
    matches!((place(a), place(b)), (Some(x), Some(y)) if x == y)
}

/// The directory holding `path` (`.` for a bare file name).
fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// The temporary names tried for `target`: `.<name>.<pid>-<counter>-<random>.tmp` in its
/// directory, a new counter and random part each time.
fn temp_names(target: &Path) -> impl Iterator<Item = PathBuf> + '_ {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = parent_dir(target);
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut cut = name.len().min(TEMP_NAME_BYTES);
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    let stem = name[..cut].to_string();
    let pid = std::process::id();
    std::iter::repeat_with(move || {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        // std's hasher keys are random per process and change with every instance
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(n);
        dir.join(format!(".{stem}.{pid}-{n}-{:016x}.tmp", h.finish()))
    })
}

/// Creates the first of `names` that does not exist, exclusively (never opening or following
/// an existing file or link), trying at most [`TEMP_ATTEMPTS`] names.
fn create_temp(
    target: &Path,
    names: impl Iterator<Item = PathBuf>,
) -> Result<(PathBuf, File), OutputError> {
    for path in names.take(TEMP_ATTEMPTS) {
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(f) => return Ok((path, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(OutputError::io(target, e)),
        }
    }
    Err(OutputError::io(
        target,
        io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("no free temporary file name after {TEMP_ATTEMPTS} attempts"),
        ),
    ))
}

/// An output file being written: bytes go to a temporary file beside the target, which
/// [`OutputFile::commit`] syncs and renames over the target. Dropped without a commit (an
/// error, a panic, an early return), it removes the temporary file and leaves the target as it
/// was. See the [module documentation](self).
#[derive(Debug)]
pub struct OutputFile {
    /// The path as the caller gave it (in messages).
    path: PathBuf,
    /// The file the temporary file replaces: `path` with its symbolic links followed.
    dest: PathBuf,
    /// The temporary file; `None` when the target is written in place (a device or a pipe),
    /// and once renamed.
    temp: Option<PathBuf>,
    /// `None` once committed.
    writer: Option<BufWriter<File>>,
}

impl OutputFile {
    /// Checks `path` against `inputs` ([`check_output`]) and creates its temporary file (or,
    /// for a device or a pipe, opens it for writing in place).
    pub fn create(path: &Path, inputs: &[&Path]) -> Result<Self, OutputError> {
        check_output(path, inputs)?;
        match std::fs::metadata(path) {
            Ok(m) if !m.is_file() => Self::in_place(path),
            _ => {
                let dest = follow_links(path).map_err(|e| OutputError::io(path, e))?;
                Self::create_with(path, &dest, temp_names(&dest))
            }
        }
    }

    /// An output written in place: a device, a named pipe, a terminal (no file to replace).
    fn in_place(path: &Path) -> Result<Self, OutputError> {
        let file = OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| OutputError::io(path, e))?;
        Ok(Self {
            path: path.to_path_buf(),
            dest: path.to_path_buf(),
            temp: None,
            writer: Some(BufWriter::with_capacity(1 << 16, file)),
        })
    }

    /// An output of `path` replacing `dest` (`path` with its links followed) by a temporary
    /// file, the first of `names` that is free; no checks.
    fn create_with(
        path: &Path,
        dest: &Path,
        names: impl Iterator<Item = PathBuf>,
    ) -> Result<Self, OutputError> {
        let (temp, file) = create_temp(path, names)?;
        // the replacement keeps the permissions of the file it replaces
        if let Ok(old) = std::fs::symlink_metadata(dest)
            && old.is_file()
        {
            let _ = file.set_permissions(old.permissions());
        }
        Ok(Self {
            path: path.to_path_buf(),
            dest: dest.to_path_buf(),
            temp: Some(temp),
            writer: Some(BufWriter::with_capacity(1 << 16, file)),
        })
    }

    /// The target path, as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The [`OutputError::Io`] of `source` on this file's target, for errors of its `Write`.
    pub fn error(&self, source: io::Error) -> OutputError {
        OutputError::io(&self.path, source)
    }

    /// Flushes and fsyncs the temporary file, renames it over the target and fsyncs the
    /// directory (where the platform allows it). On an error the temporary file is removed
    /// and the target left as it was. A target written in place is flushed.
    pub fn commit(mut self) -> Result<(), OutputError> {
        let writer = self
            .writer
            .take()
            .ok_or_else(|| self.error(io::Error::other("already committed")))?;
        let file = writer
            .into_inner()
            .map_err(|e| self.error(e.into_error()))?;
        let Some(temp) = self.temp.clone() else {
            return Ok(());
        };
        file.sync_all().map_err(|e| self.error(e))?;
        drop(file);
        std::fs::rename(&temp, &self.dest).map_err(|e| self.error(e))?;
        // renamed: nothing left to remove
        self.temp = None;
        sync_dir(parent_dir(&self.dest));
        Ok(())
    }
}

/// `path` with the symbolic links at its end followed, as far as they go: the file a write
/// through `path` reaches (which need not exist yet).
fn follow_links(path: &Path) -> io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = std::fs::read_link(&p)?;
                p = if link.is_absolute() {
                    link
                } else {
                    parent_dir(&p).join(link)
                };
            }
            _ => return Ok(p),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("more than {MAX_LINKS} symbolic links"),
    ))
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.writer {
            Some(w) => w.write(buf),
            None => Err(io::Error::other("output file already committed")),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.writer {
            Some(w) => w.flush(),
            None => Ok(()),
        }
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        if let Some(w) = self.writer.take() {
            // the buffer is discarded, not flushed into a file about to be removed
            let _ = w.into_parts();
        }
        if let Some(temp) = &self.temp {
            let _ = std::fs::remove_file(temp);
        }
    }
}

/// Fsyncs a directory so that a rename in it is durable (best effort: not every platform or
/// file system can open or sync a directory).
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// A fresh empty directory for one test.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("gimc-output-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// The names in `dir`, sorted.
    fn entries(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn writes_new_and_replaces_old_files_leaving_no_temporary_file() {
        let dir = scratch("replace");
        let out = dir.join("pred.txt");
        write_file(&out, b"first\n", &[]).unwrap();
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "first\n");
        write_file(&out, b"second\n", &[]).unwrap();
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "second\n");
        assert_eq!(entries(&dir), ["pred.txt"]);
        // a bare relative name goes to the working directory's entry, checked the same way
        assert!(matches!(
            check_output(Path::new("some-file-that-does-not-exist.txt"), &[]),
            Ok(())
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_symlink_at_a_temporary_name_is_not_followed() {
        let dir = scratch("symlink");
        let victim = dir.join("victim.txt");
        std::fs::write(&victim, "keep me\n").unwrap();
        let out = dir.join("out.gimc");
        let taken = dir.join("taken.tmp");
        let dangling = dir.join("dangling.tmp");
        let free = dir.join("free.tmp");
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&victim, &taken).unwrap();
            std::os::unix::fs::symlink(dir.join("nowhere"), &dangling).unwrap();
        }
        #[cfg(not(unix))]
        {
            std::fs::write(&taken, "").unwrap();
            std::fs::write(&dangling, "").unwrap();
        }
        let names = [taken.clone(), dangling.clone(), free.clone()];
        let mut f = OutputFile::create_with(&out, &out, names.into_iter()).unwrap();
        assert_eq!(f.temp.as_ref(), Some(&free));
        f.write_all(b"model bytes").unwrap();
        f.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "model bytes");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me\n");
        assert!(!dir.join("nowhere").exists());
        assert!(!free.exists());
        // every name taken: an error, and nothing created or followed
        let err =
            OutputFile::create_with(&out, &out, [taken.clone(), dangling.clone()].into_iter())
                .unwrap_err();
        assert!(matches!(err, OutputError::Io { .. }), "{err}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me\n");
        assert!(!dir.join("nowhere").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_temporary_file_sits_beside_the_target_and_is_hidden() {
        let dir = scratch("names");
        let out = dir.join("model.gimc");
        let names: Vec<PathBuf> = temp_names(&out).take(3).collect();
        for n in &names {
            assert_eq!(n.parent(), Some(dir.as_path()));
            let s = n.file_name().unwrap().to_string_lossy().into_owned();
            assert!(s.starts_with(".model.gimc.") && s.ends_with(".tmp"), "{s}");
        }
        assert!(names[0] != names[1] && names[1] != names[2]);
        // a very long target name is cut to leave room for the suffix
        let long = dir.join("é".repeat(120));
        let n = temp_names(&long).next().unwrap();
        assert!(n.file_name().unwrap().len() < 255);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failing_writer_leaves_the_old_file_and_no_temporary_file() {
        let dir = scratch("fail");
        let out = dir.join("pred.txt");
        std::fs::write(&out, "old contents\n").unwrap();
        // an error mid-write (as ENOSPC would be): the writer is dropped uncommitted
        let result = (|| -> io::Result<()> {
            let mut f = OutputFile::create(&out, &[]).map_err(io::Error::other)?;
            f.write_all(&vec![b'x'; 200_000])?;
            Err(io::Error::new(
                io::ErrorKind::StorageFull,
                "no space left on device",
            ))
        })();
        assert_eq!(result.unwrap_err().kind(), io::ErrorKind::StorageFull);
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "old contents\n");
        assert_eq!(entries(&dir), ["pred.txt"]);
        // a rename that fails (the target became a non-empty directory): error, no temporary
        let blocked = dir.join("blocked");
        let f = OutputFile::create(&blocked, &[]).unwrap();
        std::fs::create_dir(&blocked).unwrap();
        std::fs::write(blocked.join("inside"), "x").unwrap();
        let err = f.commit().unwrap_err();
        assert!(matches!(err, OutputError::Io { .. }), "{err}");
        assert_eq!(entries(&dir), ["blocked", "pred.txt"]);
        // a directory that does not exist: an error naming the target, nothing created
        let missing = dir.join("no-such-dir").join("x.txt");
        let err = write_file(&missing, b"x", &[]).unwrap_err();
        assert!(err.to_string().contains("no-such-dir"), "{err}");
        assert_eq!(entries(&dir), ["blocked", "pred.txt"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_output_that_is_an_input_is_refused_naming_both() {
        let dir = scratch("same");
        let input = dir.join("data.svm");
        std::fs::write(&input, "1 1:0.5\n").unwrap();
        let other = dir.join("other.svm");
        std::fs::write(&other, "1 1:0.5\n").unwrap();
        let err = write_file(&input, b"0\n", &[&other, &input]).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, OutputError::SameAsInput { .. }));
        assert_eq!(msg.matches("data.svm").count(), 2, "{msg}");
        assert_eq!(std::fs::read_to_string(&input).unwrap(), "1 1:0.5\n");
        // the same file under another name: `dir/./data.svm`, a symbolic link, a hard link
        let dotted = dir.join(".").join("data.svm");
        assert!(matches!(
            check_output(&dotted, &[&input]),
            Err(OutputError::SameAsInput { .. })
        ));
        #[cfg(unix)]
        {
            let link = dir.join("link.svm");
            std::os::unix::fs::symlink(&input, &link).unwrap();
            assert!(matches!(
                check_output(&link, &[&input]),
                Err(OutputError::SameAsInput { .. })
            ));
            assert!(matches!(
                check_output(&input, &[&link]),
                Err(OutputError::SameAsInput { .. })
            ));
        }
        let hard = dir.join("hard.svm");
        std::fs::hard_link(&input, &hard).unwrap();
        assert!(matches!(
            check_output(&hard, &[&input]),
            Err(OutputError::SameAsInput { .. })
        ));
        // a different file with the same contents, and an input that does not exist, pass
        assert!(check_output(&other, &[&input, &dir.join("nope")]).is_ok());
        assert_eq!(std::fs::read_to_string(&input).unwrap(), "1 1:0.5\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_directory_is_refused_as_an_output() {
        let dir = scratch("dir");
        for bad in [dir.clone(), dir.join("."), dir.join("sub/")] {
            if bad.ends_with("sub") {
                std::fs::create_dir_all(&bad).unwrap();
            }
            let err = write_file(&bad, b"x", &[]).unwrap_err();
            assert!(matches!(err, OutputError::IsDirectory { .. }), "{err}");
            assert!(err.to_string().contains("is a directory"), "{err}");
        }
        // a path ending in a separator names a directory even when none exists
        let trailing = PathBuf::from(format!("{}/new-dir/", dir.display()));
        assert!(matches!(
            check_output(&trailing, &[]),
            Err(OutputError::IsDirectory { .. })
        ));
        assert!(matches!(
            check_output(Path::new(""), &[]),
            Err(OutputError::Io { .. })
        ));
        assert_eq!(entries(&dir), ["sub"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn two_outputs_naming_one_file_are_refused() {
        let dir = scratch("two");
        let a = dir.join("a.txt");
        let same = dir.join(".").join("a.txt");
        let b = dir.join("b.txt");
        assert!(check_outputs(&[&a, &b], &[]).is_ok());
        let err = check_outputs(&[&a, &b, &same], &[]).unwrap_err();
        assert!(matches!(err, OutputError::SameOutput { .. }), "{err}");
        std::fs::write(&a, "x").unwrap();
        let hard = dir.join("hard.txt");
        std::fs::hard_link(&a, &hard).unwrap();
        assert!(matches!(
            check_outputs(&[&a, &hard], &[]),
            Err(OutputError::SameOutput { .. })
        ));
        // a link to a file not written yet, and that file
        #[cfg(unix)]
        {
            let link = dir.join("link.txt");
            std::os::unix::fs::symlink("later.txt", &link).unwrap();
            assert!(matches!(
                check_outputs(&[&link, &dir.join("later.txt")], &[]),
                Err(OutputError::SameOutput { .. })
            ));
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn the_replacement_keeps_the_permissions_and_a_link_at_the_target_is_followed() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch("perms");
        let out = dir.join("script.txt");
        std::fs::write(&out, "old").unwrap();
        std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_file(&out, b"new", &[]).unwrap();
        let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        // a link at the target (relative, through another link, into another directory): the
        // file it reaches is replaced, with its temporary file beside it, and the links stay
        let sub = dir.join("sub");
        std::fs::create_dir(&sub).unwrap();
        let pointed = sub.join("pointed.txt");
        std::fs::write(&pointed, "old").unwrap();
        let hop = dir.join("hop.txt");
        std::os::unix::fs::symlink("sub/pointed.txt", &hop).unwrap();
        let link = dir.join("link.txt");
        std::os::unix::fs::symlink(&hop, &link).unwrap();
        let f = OutputFile::create(&link, &[]).unwrap();
        assert_eq!(
            f.temp.as_ref().and_then(|t| t.parent()),
            Some(sub.as_path())
        );
        assert_eq!(f.path(), link.as_path());
        drop(f);
        write_file(&link, b"written", &[]).unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
        assert!(std::fs::symlink_metadata(&hop).unwrap().is_symlink());
        assert_eq!(std::fs::read_to_string(&pointed).unwrap(), "written");
        // a dangling link: the file it names is created
        let dangling = dir.join("dangling.txt");
        std::os::unix::fs::symlink("sub/new.txt", &dangling).unwrap();
        write_file(&dangling, b"created", &[]).unwrap();
        assert_eq!(
            std::fs::read_to_string(sub.join("new.txt")).unwrap(),
            "created"
        );
        assert!(std::fs::symlink_metadata(&dangling).unwrap().is_symlink());
        // a loop of links is an error, not a hang
        std::os::unix::fs::symlink(dir.join("loop-b"), dir.join("loop-a")).unwrap();
        std::os::unix::fs::symlink(dir.join("loop-a"), dir.join("loop-b")).unwrap();
        assert!(matches!(
            write_file(&dir.join("loop-a"), b"x", &[]),
            Err(OutputError::Io { .. })
        ));
        assert_eq!(entries(&sub), ["new.txt", "pointed.txt"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_named_pipe_is_written_in_place_not_replaced() {
        let dir = scratch("fifo");
        let fifo = dir.join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            // no mkfifo on this system: nothing to check
            std::fs::remove_dir_all(&dir).unwrap();
            return;
        }
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
        };
        write_file(&fifo, b"through the pipe\n", &[]).unwrap();
        assert_eq!(reader.join().unwrap(), "through the pipe\n");
        use std::os::unix::fs::FileTypeExt;
        assert!(
            std::fs::symlink_metadata(&fifo)
                .unwrap()
                .file_type()
                .is_fifo()
        );
        assert_eq!(entries(&dir), ["pipe"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
