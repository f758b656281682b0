//! # report — turning results into something a person reads
//!
//! - [`table`]: the terminal table (one row per configuration and class, with the columns the
//!   source documents use — AVG MIN MAX WARM_MAX — plus p50/p99/p99.9/p99.99), counters and the
//!   where-the-time-went breakdown;
//! - [`compare_table`]: two runs side by side with ratios;
//! - [`svg`]: latency CDFs on a "nines" axis (so the tail is visible) and histograms, as SVG;
//! - [`html`]: one self-contained HTML file with all of the above inline.

pub mod compare_table;
pub mod html;
pub mod svg;
pub mod table;

pub use html::render_html;
