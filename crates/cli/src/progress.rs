//! A progress bar that appears only when a run takes longer than about a second, and only on a
//! terminal (indicatif hides itself when stderr is not one).
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Progress {
    bar: ProgressBar,
    start: Instant,
    shown: AtomicBool,
}

impl Progress {
    pub fn new(what: &str) -> Self {
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden());
        bar.set_style(ProgressStyle::with_template("{msg} [{elapsed_precise}] {wide_bar} {pos}/{len} ({eta} left)").expect("constant template"));
        bar.set_message(what.to_string());
        Progress { bar, start: Instant::now(), shown: AtomicBool::new(false) }
    }

    pub fn set_total(&self, n: u64) {
        self.bar.set_length(n);
    }

    pub fn inc(&self, n: u64) {
        self.bar.inc(n);
        if !self.shown.load(Ordering::Relaxed) && self.start.elapsed() > Duration::from_secs(1) && !self.shown.swap(true, Ordering::Relaxed) {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
        }
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
