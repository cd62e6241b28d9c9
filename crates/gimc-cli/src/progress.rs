//! Progress display on stderr with [indicatif](https://docs.rs/indicatif): an elapsed-time
//! spinner for indeterminate steps (loading, clustering, completion) and a bar over the outer
//! iterations of `gimc fit`'s model selection and refit. Both draw only when stderr is a
//! terminal and `--quiet` is off, so piped or redirected output never sees them, and nothing is
//! ever written to stdout. The data-parallel fits log each outer iteration instead
//! ([`IterationLog`]).

use std::io::IsTerminal;
use std::time::Duration;

use gimc::labels::SelectionStage;
use gimc::{IterationRecord, Observer, ObserverAction, SelectionObserver};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::globals::Globals;

/// How often a spinner redraws itself while the work runs.
const TICK: Duration = Duration::from_millis(100);

/// Whether progress may be drawn: stderr is a terminal and `--quiet` is off.
fn visible(g: &Globals) -> bool {
    !g.quiet && std::io::stderr().is_terminal()
}

/// A spinner drawing on stderr, or a hidden one (every call a no-op) when progress is off.
fn new_spinner(g: &Globals) -> ProgressBar {
    if visible(g) {
        ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
    } else {
        ProgressBar::hidden()
    }
}

/// A running spinner; [`Spinner::finish`] stops it and clears its line.
pub struct Spinner {
    bar: ProgressBar,
}

/// Starts a spinner labelled `msg` with the elapsed time (hidden when progress is off).
pub fn spinner(g: &Globals, msg: &str) -> Spinner {
    let bar = new_spinner(g);
    if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
        bar.set_style(style);
    }
    bar.set_message(msg.to_string());
    if !bar.is_hidden() {
        bar.enable_steady_tick(TICK);
    }
    Spinner { bar }
}

impl Spinner {
    /// Stops the spinner and clears its line.
    pub fn finish(self) {
        self.bar.finish_and_clear();
    }
}

/// The progress of `gimc fit`'s [`gimc::select_and_fit_observed`]: one bar over every step of
/// every fit, a step being the starting point (iteration 0, the first W-step) or one outer
/// iteration. The selection's length (settings × (max_iter + 1)) is known at the first
/// candidate, when the bar first draws; the refit's (chosen iterations + 1) is added when it
/// starts. The message names the running fit.
pub struct FitProgress {
    bar: ProgressBar,
    /// Whether the bar may draw (it is attached to stderr at the first fit).
    visible: bool,
    /// Steps of every fit begun before the running one.
    done_before: u64,
    /// Steps of the running fit reported so far.
    in_fit: u64,
    /// Steps the running fit was given.
    fit_len: u64,
}

impl FitProgress {
    /// A bar labelled with the method (hidden when progress is off); its length is set when
    /// the first fit starts.
    pub fn new(g: &Globals, method: &str) -> Self {
        // hidden until the first fit gives it a length (no empty 0/0 bar)
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden());
        // the message (the running fit) goes last and is cut to the terminal width
        if let Ok(style) = ProgressStyle::with_template(
            "{spinner} {prefix} [{bar:20}] {pos}/{len} ({elapsed}, eta {eta}) {wide_msg}",
        ) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_prefix(method.to_string());
        Self {
            bar,
            visible: visible(g),
            done_before: 0,
            in_fit: 0,
            fit_len: 0,
        }
    }

    /// Clears the bar.
    pub fn finish(self) {
        self.bar.finish_and_clear();
    }
}

impl SelectionObserver for FitProgress {
    fn fit_started(&mut self, stage: &SelectionStage, max_iter: usize) {
        // a fit that stopped early (converged) still counts all its steps
        self.done_before += self.fit_len;
        self.in_fit = 0;
        self.fit_len = max_iter as u64 + 1;
        match stage {
            SelectionStage::Candidate {
                index,
                total,
                m,
                gamma,
                lambda,
            } => {
                if *index == 0 {
                    self.bar.set_length(*total as u64 * self.fit_len);
                    // first drawn now that the length is known
                    if self.visible && self.bar.is_hidden() {
                        self.bar.set_draw_target(ProgressDrawTarget::stderr());
                        self.bar.enable_steady_tick(TICK);
                    }
                }
                self.bar.set_message(format!(
                    "setting {}/{total}: m={m} γ={gamma} λ={lambda}",
                    index + 1,
                ));
            }
            SelectionStage::Refit { chosen } => {
                self.bar.set_length(self.done_before + self.fit_len);
                self.bar.set_message(format!(
                    "refit: m={} γ={} λ={}",
                    chosen.m, chosen.gamma, chosen.lambda
                ));
            }
        }
        self.bar.set_position(self.done_before);
    }
}

impl Observer for FitProgress {
    fn observe(&mut self, _record: &IterationRecord) -> ObserverAction {
        if self.in_fit < self.fit_len {
            self.in_fit += 1;
            self.bar.set_position(self.done_before + self.in_fit);
        }
        ObserverAction::Continue
    }
}

/// Prints each outer iteration of a fit on stderr (unless `--quiet`) when `shown`: the lead
/// process of a data-parallel fit logs, the others stay silent.
pub struct IterationLog<'g> {
    g: &'g Globals,
    shown: bool,
}

impl<'g> IterationLog<'g> {
    /// A log printing through `g` when `shown`.
    pub fn new(g: &'g Globals, shown: bool) -> Self {
        Self { g, shown }
    }
}

impl Observer for IterationLog<'_> {
    fn observe(&mut self, r: &IterationRecord) -> ObserverAction {
        if self.shown {
            let extras: String = r
                .extras
                .iter()
                .map(|(name, v)| format!(", {name} {v}"))
                .collect();
            self.g.info(&format!(
                "iteration {}: objective {:.6e}, {:.1} s{extras}",
                r.iteration, r.objective, r.elapsed_secs
            ));
        }
        ObserverAction::Continue
    }
}
