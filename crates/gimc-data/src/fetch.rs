//! Downloading the manifest's files into the data directory (optional cargo feature `fetch`).
//!
//! Every [`FileEntry`] of the manifest names its `mirror`, a direct URL of the exact copy used.
//! [`fetch_all`] / [`fetch_set`] download each file of a set that is missing from the data
//! directory (or whose sha256 differs from the manifest's) from that URL, or, when
//! [`FetchParams::mirror`] is set (the binaries read it from `$GIMC_DATA_MIRROR`), from
//! `<mirror>/<manifest path>` (see [`source_url`]).
//!
//! Integrity: a file is downloaded through the output writer ([`crate::output`]) into a
//! temporary file in its destination directory, its size and sha256 are checked against the
//! manifest, and only then is it synced and renamed to the path the manifest names. An interrupted, truncated or corrupted download never leaves a file at
//! the final path, and the temporary file is removed on every error. Failed attempts are
//! retried with exponential backoff ([`FetchParams::attempts`], [`FetchParams::backoff`]);
//! client errors such as 404 are not retried. Connections and every read have timeouts
//! ([`FetchParams::connect_timeout`], [`FetchParams::read_timeout`]), so a stalled server
//! ends in an error rather than a hang.
//!
//! Archives: a source whose URL ends in `.gz` while the manifest path does not is unpacked
//! (gzip) into the manifest's file, whose size and sha256 are those of the unpacked file. No
//! manifest entry needs this today (the one gzip file, `covtype/covertype-ramp-test.csv.gz`,
//! is stored compressed), and no entry is a zip archive, so zip is not supported.
//!
//! Files are written only inside the data directory: a manifest path that is absolute or
//! contains `..` is rejected.
//!
//! ```no_run
//! use std::path::Path;
//!
//! use gimc_data::Manifest;
//! use gimc_data::fetch::{FetchParams, fetch_all};
//!
//! let manifest = Manifest::embedded()?;
//! let params = FetchParams::default().check()?;
//! for report in fetch_all(Path::new("datasets"), &manifest, &["yeast".to_string()], &params)? {
//!     print!("{report}");
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::HashSet;
use std::fmt;
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::manifest::{FileEntry, Manifest, SetEntry};
use crate::named::sha256_file;
use crate::{DataError, OutputFile};

gimc_linalg::params! {
    /// How downloads are made. Start from [`FetchParams::default`] and the `with_*` methods;
    /// [`FetchParams::check`] validates them into the [`ValidFetchParams`] that [`fetch_all`],
    /// [`fetch_set`] and [`fetch_file`] take.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct FetchParams => ValidFetchParams {
        /// Base URL replacing every file's manifest `mirror`: a file is fetched from
        /// `<mirror>/<manifest path>` (the binaries take it from `$GIMC_DATA_MIRROR`).
        pub mirror: Option<String> = None => with_mirror,
        /// Attempts per file, at least 1 (default 3).
        pub attempts: u32 = 3 => with_attempts,
        /// Wait before the first retry; it doubles before each further retry (default 1 s, so
        /// 1 s, 2 s, 4 s, …).
        pub backoff: Duration = Duration::from_secs(1) => with_backoff,
        /// Timeout for establishing a connection (default 30 s).
        pub connect_timeout: Duration = Duration::from_secs(30) => with_connect_timeout,
        /// Timeout for each read from the connection: a server that sends nothing for this long
        /// (before or during the response) fails the attempt (default 60 s).
        pub read_timeout: Duration = Duration::from_secs(60) => with_read_timeout,
        /// Show a progress bar per file on standard error (default false; the binaries enable it
        /// only when standard error is a terminal).
        pub progress: bool = false => with_progress,
    }
    /// Checks attempts ≥ 1 and positive connect and read timeouts.
    check |this| -> FetchError {
        if this.attempts == 0 {
            return Err(FetchError::InvalidParameter {
                name: "attempts",
                reason: "must be at least 1".into(),
            });
        }
        if this.connect_timeout.is_zero() || this.read_timeout.is_zero() {
            return Err(FetchError::InvalidParameter {
                name: "timeout",
                reason: "connect and read timeouts must be positive".into(),
            });
        }
    }
}

/// Why a download failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FetchError {
    /// The server answered with a status other than 200.
    #[error("GET {url}: HTTP status {status}")]
    Status {
        /// The URL requested.
        url: String,
        /// The HTTP status code.
        status: u16,
    },
    /// The request or the transfer failed (connection refused, timeout, connection closed
    /// early, …).
    #[error("GET {url}: {message}")]
    Transfer {
        /// The URL requested.
        url: String,
        /// What went wrong.
        message: String,
    },
    /// The server's name did not resolve (no network, or no DNS): not retried, and the other
    /// files from the same host are not attempted.
    #[error("GET {url}: host `{host}` not found (no network?)")]
    HostNotFound {
        /// The URL requested.
        url: String,
        /// The host name that did not resolve.
        host: String,
    },
    /// The downloaded (and unpacked) file does not have the manifest's size.
    #[error("{url}: expected {expected} bytes, received {actual}")]
    Size {
        /// The URL requested.
        url: String,
        /// Size in the manifest.
        expected: u64,
        /// Bytes received (after unpacking), or more than expected when the transfer was cut.
        actual: u64,
    },
    /// The downloaded (and unpacked) file has the manifest's size but another sha256.
    #[error("{url}: checksum mismatch: expected sha256 {expected}, got {actual}")]
    Checksum {
        /// The URL requested.
        url: String,
        /// sha256 in the manifest.
        expected: String,
        /// sha256 of the bytes received.
        actual: String,
    },
    /// A local file could not be written, renamed or read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The manifest entry cannot be fetched (no source URL, or a path outside the data
    /// directory).
    #[error("{path}: {reason}")]
    Entry {
        /// The manifest path.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// Every attempt failed; the last error is given.
    #[error("{last} (gave up after {attempts} attempts)")]
    GaveUp {
        /// Attempts made.
        attempts: u32,
        /// The last attempt's error.
        #[source]
        last: Box<FetchError>,
    },
    /// An invalid parameter.
    #[error("invalid parameter {name}: {reason}")]
    InvalidParameter {
        /// Parameter name.
        name: &'static str,
        /// Why it is invalid.
        reason: String,
    },
    /// An error from the manifest (unknown set, invalid manifest).
    #[error(transparent)]
    Data(#[from] DataError),
    /// The file could not be put in place (a directory at its path, or an I/O error).
    #[error(transparent)]
    Output(#[from] crate::OutputError),
}

impl FetchError {
    /// Whether another attempt may succeed: transfer errors, size and checksum errors and the
    /// statuses 408, 429 and 5xx are retried; other statuses (404, 403, …) and local errors
    /// are not.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Status { status, .. } => matches!(status, 408 | 429 | 500..=599),
            Self::Transfer { .. } | Self::Size { .. } | Self::Checksum { .. } => true,
            _ => false,
        }
    }
}

/// What was done for one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchStatus {
    /// Downloaded, checked and put in place.
    Fetched {
        /// The URL it came from.
        url: String,
        /// Its size in bytes (after unpacking).
        bytes: u64,
    },
    /// Already in the data directory with the manifest's sha256: nothing downloaded.
    AlreadyPresent,
    /// Not fetched; nothing was left at the file's path (a file that was there before is
    /// untouched).
    Failed {
        /// Why.
        reason: String,
    },
}

impl fmt::Display for FetchStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Fetched { url, bytes } => write!(f, "fetched {bytes} bytes from {url}"),
            Self::AlreadyPresent => write!(f, "already present"),
            Self::Failed { reason } => write!(f, "failed: {reason}"),
        }
    }
}

/// One file's fetch result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileFetch {
    /// Path relative to the data directory.
    pub path: String,
    /// What was done.
    pub status: FetchStatus,
}

/// The fetch result of one named set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetFetch {
    /// The set's name.
    pub set: String,
    /// One result per manifest file, in manifest order.
    pub files: Vec<FileFetch>,
}

impl SetFetch {
    /// Whether no file failed.
    pub fn is_ok(&self) -> bool {
        !self
            .files
            .iter()
            .any(|f| matches!(f.status, FetchStatus::Failed { .. }))
    }

    /// Number of files downloaded.
    pub fn fetched(&self) -> usize {
        self.files
            .iter()
            .filter(|f| matches!(f.status, FetchStatus::Fetched { .. }))
            .count()
    }

    /// A one-word summary: `ok` (something was fetched, nothing failed), `already present`
    /// (nothing to do) or `FAILED`.
    pub fn summary(&self) -> &'static str {
        if !self.is_ok() {
            "FAILED"
        } else if self.fetched() == 0 {
            "already present"
        } else {
            "ok"
        }
    }
}

impl fmt::Display for SetFetch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}: {}", self.set, self.summary())?;
        for r in &self.files {
            writeln!(f, "  {}: {}", r.path, r.status)?;
        }
        Ok(())
    }
}

/// The URL a file is fetched from: `<mirror>/<manifest path>` when a mirror base URL is given
/// (trailing slashes of the base are ignored), else the manifest's `mirror` URL.
pub fn source_url(file: &FileEntry, mirror: Option<&str>) -> Result<String, FetchError> {
    match mirror {
        Some(base) => {
            let base = base.trim_end_matches('/');
            if base.is_empty() {
                return Err(FetchError::InvalidParameter {
                    name: "mirror",
                    reason: "empty base URL".into(),
                });
            }
            Ok(format!("{base}/{}", file.path.trim_start_matches('/')))
        }
        None => file.mirror.clone().ok_or_else(|| FetchError::Entry {
            path: file.path.clone(),
            reason: "the manifest gives no mirror URL for this file".into(),
        }),
    }
}

/// Whether the source at `url` is gzip-compressed and must be unpacked into the file at
/// `path`: the URL (without query or fragment) ends in `.gz` and the manifest path does not.
pub fn needs_gunzip(url: &str, path: &str) -> bool {
    let url_path = url.split(['?', '#']).next().unwrap_or(url);
    url_path.ends_with(".gz") && !path.ends_with(".gz")
}

/// The file's destination in `data_dir`, rejecting absolute paths and `..`.
fn destination(data_dir: &Path, file: &FileEntry) -> Result<PathBuf, FetchError> {
    let rel = Path::new(&file.path);
    let ok = !file.path.is_empty()
        && rel
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if !ok {
        return Err(FetchError::Entry {
            path: file.path.clone(),
            reason: "not a relative path inside the data directory".into(),
        });
    }
    Ok(data_dir.join(rel))
}

/// Downloads every file of each named set in `only` (all sets of `manifest` when `only` is
/// empty) that is missing from `data_dir` or differs from the manifest. Unknown or
/// not-obtained names are an error before anything is downloaded; download failures are
/// reported per file in the result.
pub fn fetch_all(
    data_dir: &Path,
    manifest: &Manifest,
    only: &[String],
    params: &ValidFetchParams,
) -> Result<Vec<SetFetch>, FetchError> {
    let entries: Vec<&SetEntry> = if only.is_empty() {
        manifest.sets.iter().collect()
    } else {
        only.iter()
            .map(|n| manifest.require(n))
            .collect::<Result<_, _>>()?
    };
    let agent = agent(params);
    let mut unresolved = HashSet::new();
    Ok(entries
        .into_iter()
        .map(|e| fetch_set_with(&agent, data_dir, e, params, &mut unresolved))
        .collect())
}

/// Whether `e` is a failure to resolve the host name: ureq's own `HostNotFound` (the name
/// resolved to no address), or the system resolver's error (`getaddrinfo`, reported as an I/O
/// error that names the lookup).
fn is_name_resolution(e: &ureq::Error) -> bool {
    match e {
        ureq::Error::HostNotFound => true,
        ureq::Error::Io(io) => {
            let msg = io.to_string().to_lowercase();
            msg.contains("lookup address") || msg.contains("name resolution")
        }
        _ => false,
    }
}

/// The host of `url` (`scheme://host[:port]/…`), or the whole string when it has no scheme.
fn url_host(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    match host_port.rsplit_once(':') {
        Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h,
        _ => host_port,
    }
}

/// Downloads every file of `entry` that is missing from `data_dir` or differs from the
/// manifest; see the [module documentation](self).
pub fn fetch_set(data_dir: &Path, entry: &SetEntry, params: &ValidFetchParams) -> SetFetch {
    fetch_set_with(&agent(params), data_dir, entry, params, &mut HashSet::new())
}

/// Downloads one file into `data_dir` unless it is already there with the manifest's sha256.
pub fn fetch_file(
    data_dir: &Path,
    file: &FileEntry,
    params: &ValidFetchParams,
) -> Result<FetchStatus, FetchError> {
    fetch_file_with(&agent(params), data_dir, file, params)
}

fn agent(params: &FetchParams) -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_connect(Some(params.connect_timeout))
        .timeout_per_read(Some(params.read_timeout))
        .build()
        .into()
}

/// Fetches the files of `entry`; a file whose host is in `unresolved` (a host that did not
/// resolve earlier in this call) is not attempted, and a host that does not resolve is added.
fn fetch_set_with(
    agent: &ureq::Agent,
    data_dir: &Path,
    entry: &SetEntry,
    params: &FetchParams,
    unresolved: &mut HashSet<String>,
) -> SetFetch {
    let mut one = |f: &FileEntry| {
        let host = source_url(f, params.mirror.as_deref())
            .map(|u| url_host(&u).to_string())
            .unwrap_or_default();
        if unresolved.contains(&host) {
            return FetchStatus::Failed {
                reason: format!("not attempted: host `{host}` not found earlier"),
            };
        }
        fetch_file_with(agent, data_dir, f, params).unwrap_or_else(|e| {
            if let FetchError::HostNotFound { host, .. } = &e {
                unresolved.insert(host.clone());
            }
            FetchStatus::Failed {
                reason: e.to_string(),
            }
        })
    };
    let files = entry
        .files
        .iter()
        .map(|f| FileFetch {
            path: f.path.clone(),
            status: one(f),
        })
        .collect();
    SetFetch {
        set: entry.name.clone(),
        files,
    }
}

fn fetch_file_with(
    agent: &ureq::Agent,
    data_dir: &Path,
    file: &FileEntry,
    params: &FetchParams,
) -> Result<FetchStatus, FetchError> {
    let dest = destination(data_dir, file)?;
    if dest.is_file() && sha256_file(&dest).is_ok_and(|s| s == file.sha256) {
        return Ok(FetchStatus::AlreadyPresent);
    }
    let url = source_url(file, params.mirror.as_deref())?;
    let dir = dest.parent().unwrap_or(data_dir);
    std::fs::create_dir_all(dir).map_err(|source| FetchError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut wait = params.backoff;
    let mut attempt = 1;
    loop {
        match attempt_download(agent, &url, &dest, file, params) {
            Ok(bytes) => return Ok(FetchStatus::Fetched { url, bytes }),
            Err(e) if !e.is_retryable() => return Err(e),
            Err(e) if attempt >= params.attempts => {
                return Err(if params.attempts == 1 {
                    e
                } else {
                    FetchError::GaveUp {
                        attempts: attempt,
                        last: Box::new(e),
                    }
                });
            }
            Err(_) => {
                std::thread::sleep(wait);
                wait = wait.saturating_mul(2);
                attempt += 1;
            }
        }
    }
}

/// One attempt: GET, stream (unpacking if needed) into a temporary file while hashing, check
/// size and sha256, rename into place. Returns the size written.
fn attempt_download(
    agent: &ureq::Agent,
    url: &str,
    dest: &Path,
    file: &FileEntry,
    params: &FetchParams,
) -> Result<u64, FetchError> {
    let transfer = |e: &dyn fmt::Display| FetchError::Transfer {
        url: url.to_string(),
        message: e.to_string(),
    };
    let resp = agent.get(url).call().map_err(|e| {
        if is_name_resolution(&e) {
            FetchError::HostNotFound {
                url: url.to_string(),
                host: url_host(url).to_string(),
            }
        } else {
            transfer(&e)
        }
    })?;
    let status = resp.status().as_u16();
    if status != 200 {
        return Err(FetchError::Status {
            url: url.to_string(),
            status,
        });
    }
    let content_length = resp
        .headers()
        .get("content-length")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let gunzip = needs_gunzip(url, &file.path);
    let bar = params.progress.then(|| {
        let len = if gunzip {
            content_length
        } else {
            Some(file.bytes)
        };
        progress_bar(len, &file.path)
    });
    let body = resp.into_body().into_reader();
    let counted = Counted {
        inner: body,
        bar: bar.clone(),
    };
    let mut reader: Box<dyn Read> = if gunzip {
        Box::new(flate2::read::MultiGzDecoder::new(counted))
    } else {
        Box::new(counted)
    };

    // removed by the writer on every early return below
    let mut out = OutputFile::create(dest, &[])?;
    let mut hasher = Sha256::new();
    let mut written = 0u64;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = match reader.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(transfer(&e)),
        };
        if n == 0 {
            break;
        }
        written += n as u64;
        if written > file.bytes {
            // never write more than the manifest's size
            return Err(FetchError::Size {
                url: url.to_string(),
                expected: file.bytes,
                actual: written,
            });
        }
        hasher.update(&buf[..n]);
        out.write_all(&buf[..n]).map_err(|e| out.error(e))?;
    }
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    if written != file.bytes {
        return Err(FetchError::Size {
            url: url.to_string(),
            expected: file.bytes,
            actual: written,
        });
    }
    let actual: String = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    if actual != file.sha256 {
        return Err(FetchError::Checksum {
            url: url.to_string(),
            expected: file.sha256.clone(),
            actual,
        });
    }
    out.commit()?;
    Ok(written)
}

/// A reader that advances a progress bar by the bytes read.
struct Counted<R> {
    inner: R,
    bar: Option<indicatif::ProgressBar>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(b) = &self.bar {
            b.inc(n as u64);
        }
        Ok(n)
    }
}

fn progress_bar(len: Option<u64>, name: &str) -> indicatif::ProgressBar {
    let bar =
        indicatif::ProgressBar::with_draw_target(len, indicatif::ProgressDrawTarget::stderr());
    let template = if len.is_some() {
        "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec}"
    } else {
        "{msg} {bytes} {bytes_per_sec}"
    };
    if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(name.to_string());
    bar
}
