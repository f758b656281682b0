//! # report — turning results into something a person reads
//!
//! - [`answer`] and [`answer_view`]: the answer to a run's questions (baseline → variant per
//!   group, in a sentence and a table), which every output opens with;
//! - [`format`]: numbers for people (one thousands separator, no exponents, µs or ns);
//! - [`table`]: the terminal table (one row per configuration and class, with the columns the
//!   source documents use — AVG MIN MAX WARM_MAX — plus p50/p90/p99/p99.9/p99.99), counters and
//!   the where-the-time-went breakdown;
//! - [`compare_table`]: two runs side by side with ratios, as a table, CSV or JSON;
//! - [`verdict_table`]: the verdicts of `compare` (B/A intervals, one word, the KS test);
//! - [`ticks`] and [`svg`]: axes with readable ticks in one unit; latency CDFs on a "nines" axis
//!   (so the tail is visible), histograms, scatter plots, as responsive SVG;
//! - [`sweep`], [`pivot`] and [`heatmap`]: sweep axes, the summary pivot table and heatmaps of a
//!   statistic over two axes;
//! - [`intervals`]: each statistic's confidence interval with an error bar (HTML);
//! - [`census`]: the lab's path census (instructions per path, by function) and its B − A;
//! - [`references`]: the "vs published" table, computed once and shown by `irqlab sim`, `irqlab
//!   fit` and the HTML report;
//! - [`html`]: one self-contained HTML file with all of the above inline.
#![forbid(unsafe_code)]

pub mod answer;
pub mod answer_view;
pub mod census;
pub mod compare_doc;
pub mod compare_table;
pub mod format;
pub mod heatmap;
pub mod html;
pub mod intervals;
pub mod pivot;
pub mod references;
pub mod sample_paths;
pub mod seed_spread;
pub mod svg;
pub mod sweep;
pub mod table;
pub mod ticks;
pub mod trend;
pub mod verdict_table;

pub use html::{render_html, render_html_with, ReportOptions};
