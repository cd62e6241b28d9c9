//! `gimc-fuzz`: coverage-guided fuzzing of gimc's readers and model loader on stable Rust.
//! `cargo xtask fuzz` builds it with SanitizerCoverage, runs each target for a time, restarts
//! it after a crash and reports executions and findings.
//!
//! One run of one target: the seeds (`fuzz/seeds/TARGET/`, and for `model` model files fitted
//! at startup) and the corpus kept from earlier runs (`OUT/corpus/`) are run first; then
//! corpus entries are mutated ([`mutate`]) and run until the time is up. An input that reaches
//! new coverage joins the corpus. Findings:
//! - a panic (caught; the input is saved as `OUT/findings/panic-HASH` and the run goes on);
//! - a hang (one input running longer than `--timeout-ms`: the watchdog saves it as
//!   `OUT/findings/hang-HASH` and ends the process with exit code 3);
//! - a single allocation larger than `--max-alloc-mib` (the process aborts), a stack overflow
//!   or any other death: the input being run is always in `OUT/crash-input` (written before
//!   each execution), where `cargo xtask fuzz` finds it.
//!
//! `OUT/stats` holds `execs corpus edges findings` and is rewritten every second.

mod coverage;
mod mutate;
mod targets;

use std::alloc::{GlobalAlloc, Layout, System};
use std::fs::{self, File};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Parser;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::coverage::Coverage;
use crate::targets::{TARGETS, Target};

/// Refuses (aborts on) a single allocation above a limit, so that an input asking for a huge
/// buffer is a finding rather than the machine's memory.
struct Guarded;

static MAX_ALLOC: AtomicUsize = AtomicUsize::new(usize::MAX);

#[allow(unsafe_code)]
// SAFETY: forwards to the system allocator unchanged, except that it aborts instead of
// allocating more than MAX_ALLOC bytes at once.
unsafe impl GlobalAlloc for Guarded {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() > MAX_ALLOC.load(Ordering::Relaxed) {
            too_large();
        }
        // SAFETY: the caller's layout contract is passed through.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.size() > MAX_ALLOC.load(Ordering::Relaxed) {
            too_large();
        }
        // SAFETY: as in `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > MAX_ALLOC.load(Ordering::Relaxed) {
            too_large();
        }
        // SAFETY: as in `alloc`; `ptr` came from this allocator with `layout`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Reports an oversized allocation without allocating, then aborts (the input is already in
/// `crash-input`).
fn too_large() -> ! {
    let _ = std::io::stderr().write_all(b"gimc-fuzz: finding: allocation above --max-alloc-mib\n");
    std::process::abort()
}

#[global_allocator]
static ALLOC: Guarded = Guarded;

#[derive(Parser)]
#[command(
    name = "gimc-fuzz",
    about = "Fuzz one reader or the model loader of gimc"
)]
struct Args {
    /// The target (`--list` names them).
    #[arg(long, required_unless_present = "list")]
    target: Option<String>,
    /// List the targets and exit.
    #[arg(long)]
    list: bool,
    /// How long to run.
    #[arg(long, default_value_t = 60)]
    seconds: u64,
    /// Seed folders (`SEEDS/TARGET/`).
    #[arg(long, default_value = "fuzz/seeds")]
    seeds: PathBuf,
    /// Output folder of this target (corpus/, findings/, crash-input, stats).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Seed of the mutations.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// An input running longer than this is a hang.
    #[arg(long, default_value_t = 5000)]
    timeout_ms: u64,
    /// A single allocation larger than this is a finding.
    #[arg(long, default_value_t = 2048)]
    max_alloc_mib: usize,
    /// Run one input file and exit (to reproduce a finding).
    #[arg(long)]
    replay: Option<PathBuf>,
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            #[allow(clippy::print_stderr)]
            {
                eprintln!("gimc-fuzz: {e:#}");
            }
            ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    if args.list {
        for t in TARGETS {
            writeln!(stdout, "{:<10} {}", t.name, t.about)?;
        }
        return Ok(());
    }
    let name = args.target.as_deref().unwrap_or_default();
    let Some(target) = targets::find(name) else {
        bail!("no target `{name}` (see --list)");
    };
    MAX_ALLOC.store(
        args.max_alloc_mib.saturating_mul(1 << 20),
        Ordering::Relaxed,
    );
    if let Some(file) = &args.replay {
        let input = fs::read(file).with_context(|| format!("reading {}", file.display()))?;
        (target.run)(&input);
        writeln!(stdout, "{}: no panic, hang or abort", file.display())?;
        return Ok(());
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("target/fuzz-out").join(target.name));
    Fuzzer::new(target, &args, &out)?.run(Duration::from_secs(args.seconds))?;
    Ok(())
}

/// A 64-bit FNV-1a hash, for file names of corpus entries and findings.
fn hash(data: &[u8]) -> String {
    let h = data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{h:016x}")
}

/// The message of the last panic, set by the panic hook.
static PANIC: Mutex<Option<String>> = Mutex::new(None);

struct Fuzzer {
    target: &'static Target,
    out: PathBuf,
    corpus: Vec<Vec<u8>>,
    coverage: Coverage,
    rng: ChaCha8Rng,
    seeds: PathBuf,
    crash_input: File,
    execs: u64,
    panics: Vec<String>,
    /// Milliseconds since `epoch` at which the running input started (0: none running).
    started: Arc<AtomicU64>,
    epoch: Instant,
}

impl Fuzzer {
    fn new(target: &'static Target, args: &Args, out: &Path) -> Result<Self> {
        for dir in ["corpus", "findings"] {
            fs::create_dir_all(out.join(dir))
                .with_context(|| format!("creating {}", out.join(dir).display()))?;
        }
        let crash_input = File::create(out.join("crash-input"))?;
        std::panic::set_hook(Box::new(|info| {
            let msg = match info.location() {
                Some(l) => format!(
                    "{} at {}:{}",
                    info.payload_as_str().unwrap_or("panic"),
                    l.file(),
                    l.line()
                ),
                None => info.payload_as_str().unwrap_or("panic").to_string(),
            };
            if let Ok(mut p) = PANIC.lock() {
                *p = Some(msg);
            }
        }));
        let fuzzer = Self {
            target,
            out: out.to_path_buf(),
            corpus: Vec::new(),
            coverage: Coverage::new(),
            rng: ChaCha8Rng::seed_from_u64(args.seed),
            seeds: args.seeds.clone(),
            crash_input,
            execs: 0,
            panics: Vec::new(),
            started: Arc::new(AtomicU64::new(0)),
            epoch: Instant::now(),
        };
        fuzzer.watchdog(Duration::from_millis(args.timeout_ms.max(1)));
        Ok(fuzzer)
    }

    /// Ends the process with exit code 3 when one input runs longer than `timeout`.
    fn watchdog(&self, timeout: Duration) {
        let (started, epoch, out) = (self.started.clone(), self.epoch, self.out.clone());
        std::thread::spawn(move || {
            loop {
                std::thread::sleep(Duration::from_millis(100));
                let s = started.load(Ordering::Relaxed);
                let now = epoch.elapsed().as_millis() as u64;
                if s != 0 && now.saturating_sub(s) > timeout.as_millis() as u64 {
                    if let Ok(input) = fs::read(out.join("crash-input")) {
                        let _ = fs::write(
                            out.join("findings").join(format!("hang-{}", hash(&input))),
                            &input,
                        );
                    }
                    let _ = std::io::stderr().write_all(b"gimc-fuzz: finding: hang\n");
                    std::process::exit(3);
                }
            }
        });
    }

    /// The starting inputs: the seeds, the kept corpus, and the target's generated seeds.
    fn starting_inputs(&self) -> Result<Vec<Vec<u8>>> {
        let mut inputs = Vec::new();
        for dir in [self.seeds.join(self.target.name), self.out.join("corpus")] {
            if let Ok(entries) = fs::read_dir(&dir) {
                let mut paths: Vec<PathBuf> =
                    entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
                paths.sort();
                for p in paths {
                    inputs.push(fs::read(&p).with_context(|| format!("reading {}", p.display()))?);
                }
            }
        }
        if self.target.name == "model" {
            inputs.extend(targets::model_seeds()?);
        }
        if inputs.is_empty() {
            inputs.push(Vec::new());
        }
        Ok(inputs)
    }

    /// Runs one input; true when it reached new coverage.
    fn exec(&mut self, input: &[u8]) -> Result<bool> {
        self.crash_input.set_len(0)?;
        self.crash_input.write_all_at(input, 0)?;
        self.coverage.reset();
        self.started.store(
            self.epoch.elapsed().as_millis().max(1) as u64,
            Ordering::Relaxed,
        );
        let run = self.target.run;
        let result = std::panic::catch_unwind(|| run(input));
        self.started.store(0, Ordering::Relaxed);
        self.execs += 1;
        if result.is_err() {
            let msg = PANIC
                .lock()
                .ok()
                .and_then(|mut p| p.take())
                .unwrap_or_default();
            if !self.panics.contains(&msg) {
                fs::write(
                    self.out
                        .join("findings")
                        .join(format!("panic-{}", hash(input))),
                    input,
                )?;
                fs::write(
                    self.out
                        .join("findings")
                        .join(format!("panic-{}.txt", hash(input))),
                    &msg,
                )?;
                self.panics.push(msg);
            }
        }
        Ok(self.coverage.absorb())
    }

    fn run(mut self, time: Duration) -> Result<()> {
        let start = Instant::now();
        let inputs = self.starting_inputs()?;
        for input in inputs {
            self.exec(&input)?;
            self.corpus.push(input);
        }
        let mut last_stats = Instant::now();
        while start.elapsed() < time {
            let a = self.rng.random_range(0..self.corpus.len());
            let b = self.rng.random_range(0..self.corpus.len());
            let input = mutate::mutate(&self.corpus[a], &self.corpus[b], &mut self.rng);
            if self.exec(&input)? {
                fs::write(self.out.join("corpus").join(hash(&input)), &input)?;
                self.corpus.push(input);
            }
            if last_stats.elapsed() >= Duration::from_secs(1) {
                self.write_stats()?;
                last_stats = Instant::now();
            }
        }
        self.write_stats()?;
        let mut stdout = std::io::stdout().lock();
        writeln!(
            stdout,
            "{}: {} executions in {:.0} s, corpus {}, {} edges of {} instrumented, {} panics",
            self.target.name,
            self.execs,
            start.elapsed().as_secs_f64(),
            self.corpus.len(),
            self.coverage.edges(),
            coverage::instrumented_edges(),
            self.panics.len()
        )?;
        Ok(())
    }

    fn write_stats(&self) -> Result<()> {
        let line = format!(
            "{} {} {} {}\n",
            self.execs,
            self.corpus.len(),
            self.coverage.edges(),
            self.panics.len()
        );
        fs::write(self.out.join("stats"), line)?;
        Ok(())
    }
}
