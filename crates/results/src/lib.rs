//! # results — the one result format of irqlab
//!
//! Model predictions (`irqlab sim`) and real measurements (`irqlab run`) both produce a
//! [`RunResult`]: run metadata (tool version, scenario, seed, platform profile or host, every
//! knob, and whether the numbers are predicted, calibrated or measured), then one
//! [`ConfigResult`] per configuration (sweep point) holding, per interrupt class, an HDR latency
//! histogram with its summary ([`LatencyClass`]), counters, scalar figures (throughput, totals),
//! and a per-segment time breakdown (where the time went).
//!
//! Because both sides share this schema, `irqlab compare` and `irqlab report` put a model and a
//! measurement of the same scenario side by side. JSON is versioned ([`SCHEMA_VERSION`]); reading
//! another version is an error, not a silent misread.
//!
//! [`stats`] says whether a difference is real (intervals, verdicts, sample sizes, KS);
//! [`Repetitions`] keeps each run of a repeated configuration. Reading other tools' outputs into
//! this format is the `import` crate's; parsing the arm64 guest's console is `armguest::console`.
#![forbid(unsafe_code)]

mod breakdown;
pub mod census;
mod compare;
mod csv;
mod error;
mod float;
mod io;
mod latency;
pub mod owned;
mod provenance;
mod question;
mod reference;
mod repetitions;
mod run;
mod sample_trace;
mod seed_spread;
pub mod shard;
pub mod vocab;

pub use breakdown::{BreakdownBuilder, SegmentStat};
pub use compare::{compare, compare_mapped, summary_stat, CompareRow, Comparison, Pair, PairedBy, COMPARED_STATS};
pub use csv::{escape_control, to_csv, to_csv_in, LatencyUnit};
pub use error::ResultsError;
pub use io::{from_json_str, read_bytes_capped, read_json, read_text_capped, sync_dir, to_json_string, write_atomic, write_json, MAX_RESULT_BYTES};
pub use latency::{decode_histogram, HistogramError, LatencyClass, LatencyRecorder, Summary, HIST_HIGH_NS, HIST_SIGFIG};
pub use question::Question;
pub use repetitions::{Repetition, Repetitions, RepetitionsError};
pub use run::{ConfigResult, Figure, Provenance, ReferenceOutcome, ReferenceRole, ReferenceStatus, ResultKind, RunMeta, RunResult, SCHEMA_VERSION};
pub use sample_trace::{SampleTrace, TraceChoice};
pub use seed_spread::{SeedSpread, Spread};
pub mod stats;
