//! `gimc_data::fetch` against a tiny HTTP/1.1 server started on 127.0.0.1 by each test (no
//! network needed): success, corrupted and truncated bodies, 404, stalling servers, gzip
//! unpacking, the mirror URL.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gimc_data::fetch::{
    FetchError, FetchParams, FetchStatus, ValidFetchParams, fetch_file, fetch_set, needs_gunzip,
    source_url,
};
use gimc_data::{FileEntry, SetEntry};
use sha2::{Digest, Sha256};

use crate::temp_dir;

/// What the test server does for a path.
#[derive(Clone)]
enum Behaviour {
    /// 200 with this body.
    Ok(Vec<u8>),
    /// 200 announcing `len` bytes (more than the body), sends the body and closes.
    Truncated { body: Vec<u8>, len: usize },
    /// Accepts the request and sends nothing for this long, then closes.
    Silent(Duration),
    /// Sends the headers and half the body, then stalls for this long and closes.
    StallAfterHeaders { body: Vec<u8>, stall: Duration },
}

/// A server on 127.0.0.1:0 answering each path with its behaviour (404 otherwise) and counting
/// the requests per path.
struct Server {
    base: String,
    hits: Arc<Mutex<HashMap<String, usize>>>,
}

impl Server {
    fn start(routes: Vec<(&str, Behaviour)>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let routes: Arc<HashMap<String, Behaviour>> = Arc::new(
            routes
                .into_iter()
                .map(|(p, b)| (p.to_string(), b))
                .collect(),
        );
        let hits = Arc::new(Mutex::new(HashMap::new()));
        let h = Arc::clone(&hits);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let routes = Arc::clone(&routes);
                let hits = Arc::clone(&h);
                std::thread::spawn(move || serve(stream, &routes, &hits));
            }
        });
        Self { base, hits }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn hits(&self, path: &str) -> usize {
        self.hits.lock().unwrap().get(path).copied().unwrap_or(0)
    }
}

fn serve(
    stream: TcpStream,
    routes: &HashMap<String, Behaviour>,
    hits: &Mutex<HashMap<String, usize>>,
) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) if line == "\r\n" || line == "\n" => break,
            Ok(_) => {}
        }
    }
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("/")
        .to_string();
    *hits.lock().unwrap().entry(path.clone()).or_default() += 1;
    let mut s = stream;
    let header = |status: &str, len: usize| {
        format!("HTTP/1.1 {status}\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n")
    };
    let _ = match routes.get(&path) {
        None => s
            .write_all(header("404 Not Found", 9).as_bytes())
            .and_then(|()| s.write_all(b"not found")),
        Some(Behaviour::Ok(body)) => s
            .write_all(header("200 OK", body.len()).as_bytes())
            .and_then(|()| s.write_all(body)),
        Some(Behaviour::Truncated { body, len }) => s
            .write_all(header("200 OK", *len).as_bytes())
            .and_then(|()| s.write_all(body)),
        Some(Behaviour::Silent(d)) => {
            std::thread::sleep(*d);
            Ok(())
        }
        Some(Behaviour::StallAfterHeaders { body, stall }) => s
            .write_all(header("200 OK", body.len()).as_bytes())
            .and_then(|()| s.write_all(&body[..body.len() / 2]))
            .and_then(|()| s.flush())
            .map(|()| std::thread::sleep(*stall)),
    };
    let _ = s.flush();
}

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn entry(path: &str, content: &[u8], mirror: Option<String>) -> FileEntry {
    FileEntry {
        path: path.to_string(),
        bytes: content.len() as u64,
        sha256: sha256(content),
        mirror,
    }
}

/// A set named `set` of `files`.
fn set_of(files: Vec<FileEntry>) -> SetEntry {
    SetEntry {
        name: "set".into(),
        description: String::new(),
        task: "binary".into(),
        source: String::new(),
        citation: None,
        preprocessing: String::new(),
        notes: None,
        bins: None,
        files,
        parts: vec![],
    }
}

/// Tiny delays and timeouts so failing cases finish quickly.
fn raw_params() -> FetchParams {
    FetchParams::default()
        .with_attempts(3)
        .with_backoff(Duration::from_millis(10))
        .with_connect_timeout(Duration::from_secs(1))
        .with_read_timeout(Duration::from_secs(1))
}

/// [`raw_params`], checked.
fn params() -> ValidFetchParams {
    raw_params().check().unwrap()
}

#[test]
fn check_refuses_each_bad_field() {
    let name = |p: FetchParams| match p.check() {
        Err(FetchError::InvalidParameter { name, .. }) => name,
        other => panic!("expected a parameter error, got {other:?}"),
    };
    assert!(FetchParams::default().check().is_ok());
    assert_eq!(name(raw_params().with_attempts(0)), "attempts");
    assert_eq!(
        name(raw_params().with_connect_timeout(Duration::ZERO)),
        "timeout"
    );
    assert_eq!(
        name(raw_params().with_read_timeout(Duration::ZERO)),
        "timeout"
    );
    // no backoff and a mirror are fine; the mirror URL is checked per file (`source_url`)
    let p = raw_params()
        .with_backoff(Duration::ZERO)
        .with_mirror(Some("http://example.invalid".into()))
        .with_progress(true)
        .check()
        .unwrap();
    assert_eq!((p.backoff, p.progress), (Duration::ZERO, true));
}

fn content() -> Vec<u8> {
    (0..50_000u32)
        .flat_map(|i| (i % 251).to_le_bytes())
        .collect()
}

/// Every file left in `dir` (recursively), as paths relative to it.
fn files_in(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    out.sort();
    out
}

#[test]
fn fetch_success_puts_the_checked_file_in_place() {
    let body = content();
    let server = Server::start(vec![("/data/a.bin", Behaviour::Ok(body.clone()))]);
    let dir = temp_dir("fetch-ok");
    let f = entry("set/a.bin", &body, Some(server.url("/data/a.bin")));
    let status = fetch_file(&dir, &f, &params()).unwrap();
    assert_eq!(
        status,
        FetchStatus::Fetched {
            url: server.url("/data/a.bin"),
            bytes: body.len() as u64
        }
    );
    assert_eq!(std::fs::read(dir.join("set/a.bin")).unwrap(), body);
    assert_eq!(files_in(&dir), vec!["set/a.bin".to_string()]);
    // a second run finds it in place and downloads nothing
    assert_eq!(
        fetch_file(&dir, &f, &params()).unwrap(),
        FetchStatus::AlreadyPresent
    );
    assert_eq!(server.hits("/data/a.bin"), 1);
}

#[test]
fn fetch_corrupted_body_fails_and_leaves_nothing() {
    let body = content();
    let mut bad = body.clone();
    bad[1234] ^= 0xff;
    let server = Server::start(vec![("/a.bin", Behaviour::Ok(bad))]);
    let dir = temp_dir("fetch-corrupt");
    let f = entry("set/a.bin", &body, Some(server.url("/a.bin")));
    let e = fetch_file(&dir, &f, &params()).unwrap_err();
    assert!(e.to_string().contains("checksum mismatch"), "{e}");
    assert!(matches!(
        &e,
        FetchError::GaveUp { last, .. } if matches!(**last, FetchError::Checksum { .. })
    ));
    assert!(files_in(&dir).is_empty(), "{:?}", files_in(&dir));
}

#[test]
fn fetch_truncated_transfer_is_retried_and_leaves_nothing() {
    let body = content();
    let server = Server::start(vec![(
        "/a.bin",
        Behaviour::Truncated {
            body: body[..body.len() / 3].to_vec(),
            len: body.len(),
        },
    )]);
    let dir = temp_dir("fetch-trunc");
    let f = entry("set/a.bin", &body, Some(server.url("/a.bin")));
    let e = fetch_file(&dir, &f, &params()).unwrap_err();
    assert!(matches!(&e, FetchError::GaveUp { attempts: 3, .. }), "{e}");
    assert_eq!(server.hits("/a.bin"), 3);
    assert!(files_in(&dir).is_empty(), "{:?}", files_in(&dir));
    // a set report names the failure
    let set = set_of(vec![f]);
    let report = fetch_set(&dir, &set, &params());
    assert!(!report.is_ok());
    assert!(
        report
            .to_string()
            .starts_with("set: FAILED\n  set/a.bin: failed:"),
        "{report}"
    );
}

#[test]
fn fetch_404_names_url_and_status_without_retrying() {
    let server = Server::start(vec![]);
    let dir = temp_dir("fetch-404");
    let url = server.url("/nope.bin");
    let f = entry("set/a.bin", b"abc", Some(url.clone()));
    let e = fetch_file(&dir, &f, &params()).unwrap_err();
    assert!(matches!(e, FetchError::Status { status: 404, .. }), "{e}");
    let msg = e.to_string();
    assert!(msg.contains(&url) && msg.contains("404"), "{msg}");
    assert_eq!(server.hits("/nope.bin"), 1);
    assert!(files_in(&dir).is_empty());
}

#[test]
fn fetch_silent_server_times_out() {
    let server = Server::start(vec![("/a.bin", Behaviour::Silent(Duration::from_secs(20)))]);
    let dir = temp_dir("fetch-silent");
    let f = entry("set/a.bin", b"abc", Some(server.url("/a.bin")));
    let p = raw_params().with_attempts(1).check().unwrap();
    let t = Instant::now();
    let e = fetch_file(&dir, &f, &p).unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    assert!(matches!(e, FetchError::Transfer { .. }), "{e}");
    assert!(e.to_string().to_lowercase().contains("time"), "{e}");
    assert!(files_in(&dir).is_empty());
}

#[test]
fn fetch_stall_after_headers_times_out_and_leaves_nothing() {
    let body = content();
    let server = Server::start(vec![(
        "/a.bin",
        Behaviour::StallAfterHeaders {
            body: body.clone(),
            stall: Duration::from_secs(20),
        },
    )]);
    let dir = temp_dir("fetch-stall");
    let f = entry("set/a.bin", &body, Some(server.url("/a.bin")));
    let p = raw_params().with_attempts(2).check().unwrap();
    let t = Instant::now();
    let e = fetch_file(&dir, &f, &p).unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(8), "{:?}", t.elapsed());
    assert!(e.to_string().to_lowercase().contains("time"), "{e}");
    assert_eq!(server.hits("/a.bin"), 2);
    assert!(files_in(&dir).is_empty(), "{:?}", files_in(&dir));
}

#[test]
fn fetch_gz_source_is_unpacked_into_the_manifest_file() {
    use flate2::write::GzEncoder;
    let body = content();
    let mut enc = GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(&body).unwrap();
    let gz = enc.finish().unwrap();
    let server = Server::start(vec![
        ("/a.csv.gz", Behaviour::Ok(gz.clone())),
        ("/b.csv.gz", Behaviour::Ok(gz.clone())),
    ]);
    let dir = temp_dir("fetch-gz");
    // URL .gz, path not: unpacked, checked against the unpacked size and sha256
    let f = entry("set/a.csv", &body, Some(server.url("/a.csv.gz")));
    assert!(matches!(
        fetch_file(&dir, &f, &params()).unwrap(),
        FetchStatus::Fetched { .. }
    ));
    assert_eq!(std::fs::read(dir.join("set/a.csv")).unwrap(), body);
    // both .gz: stored as is
    let g = entry("set/b.csv.gz", &gz, Some(server.url("/b.csv.gz")));
    fetch_file(&dir, &g, &params()).unwrap();
    assert_eq!(std::fs::read(dir.join("set/b.csv.gz")).unwrap(), gz);
    assert_eq!(files_in(&dir), vec!["set/a.csv", "set/b.csv.gz"]);
}

#[test]
fn fetch_uses_the_mirror_base_url() {
    let body = content();
    let server = Server::start(vec![("/root/set/a.bin", Behaviour::Ok(body.clone()))]);
    let dir = temp_dir("fetch-mirror");
    // the manifest URL is unreachable (port 9 on localhost); the mirror is used instead
    let f = entry("set/a.bin", &body, Some("http://127.0.0.1:9/a.bin".into()));
    let p = raw_params()
        .with_mirror(Some(server.url("/root/")))
        .check()
        .unwrap();
    fetch_file(&dir, &f, &p).unwrap();
    assert_eq!(std::fs::read(dir.join("set/a.bin")).unwrap(), body);
}

#[test]
fn source_url_and_gunzip_rule() {
    let f = entry(
        "bibtex/bibtex.xml",
        b"x",
        Some("https://example.org/b.xml".into()),
    );
    assert_eq!(source_url(&f, None).unwrap(), "https://example.org/b.xml");
    for base in ["http://127.0.0.1:8000", "http://127.0.0.1:8000/"] {
        assert_eq!(
            source_url(&f, Some(base)).unwrap(),
            "http://127.0.0.1:8000/bibtex/bibtex.xml"
        );
    }
    assert_eq!(
        source_url(&f, Some("https://m.example/data/")).unwrap(),
        "https://m.example/data/bibtex/bibtex.xml"
    );
    assert!(source_url(&f, Some("")).is_err());
    let none = entry("x/y", b"x", None);
    assert!(source_url(&none, None).is_err());
    assert!(needs_gunzip("https://h/t.csv.gz", "c/t.csv"));
    assert!(needs_gunzip("https://h/t.csv.gz?raw=1", "c/t.csv"));
    assert!(!needs_gunzip("https://h/t.csv.gz", "c/t.csv.gz"));
    assert!(!needs_gunzip("https://h/t.csv", "c/t.csv"));
}

#[test]
fn fetch_rejects_paths_outside_the_data_directory() {
    let dir = temp_dir("fetch-escape");
    for path in ["../evil.bin", "/tmp/evil.bin", "a/../../evil.bin"] {
        let f = entry(path, b"x", Some("http://127.0.0.1:9/x".into()));
        let e = fetch_file(&dir, &f, &params()).unwrap_err();
        assert!(matches!(e, FetchError::Entry { .. }), "{path}: {e}");
    }
}

#[test]
fn fetch_fails_fast_when_the_host_does_not_resolve() {
    // `.invalid` never resolves (RFC 6761): the first file fails without retrying, and the
    // other files from the same host are not attempted
    let dir = temp_dir("fetch-no-dns");
    let files: Vec<FileEntry> = (0..3)
        .map(|i| {
            let url = format!("http://gimc-test.invalid:8080/f{i}.bin");
            entry(&format!("set/f{i}.bin"), b"abc", Some(url))
        })
        .collect();
    let e = fetch_file(&dir, &files[0], &params()).unwrap_err();
    assert!(
        matches!(&e, FetchError::HostNotFound { host, .. } if host == "gimc-test.invalid"),
        "{e}"
    );
    let set = set_of(files);
    let reasons: Vec<String> = fetch_set(&dir, &set, &params())
        .files
        .iter()
        .map(|f| f.status.to_string())
        .collect();
    assert!(reasons[0].contains("not found"), "{reasons:?}");
    assert!(
        reasons[1..].iter().all(|r| r.contains("not attempted")),
        "{reasons:?}"
    );
    assert!(files_in(&dir).is_empty());
}
