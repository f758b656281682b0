//! Latency histograms and their summaries.
//!
//! Samples go into an HDR histogram (1 ns lowest discernible value, up to [`HIST_HIGH_NS`],
//! [`HIST_SIGFIG`] significant digits) for percentiles, while count, min, mean, max and warm max
//! are computed exactly. Warm max is the maximum after discarding the first `warmup` samples,
//! as tbm reports it (cold caches and first-touch faults excluded).
use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::error::ResultsError;

/// Highest trackable latency: 100 s (the issue asks for at least 10 s).
pub const HIST_HIGH_NS: u64 = 100_000_000_000;
/// Significant decimal digits kept by the histogram (0.1 % relative precision).
pub const HIST_SIGFIG: u8 = 3;

/// Summary statistics of one latency class, in nanoseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Summary {
    pub count: u64,
    pub min: u64,
    #[serde(with = "crate::float")]
    pub mean: f64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    /// 99.9th percentile; named as in tables and CSV (`p999` is read too, from older files).
    #[serde(rename = "p99.9", alias = "p999")]
    pub p999: u64,
    /// 99.99th percentile (`p9999` is read too).
    #[serde(rename = "p99.99", alias = "p9999")]
    pub p9999: u64,
    pub max: u64,
    /// Max over samples after the first `warmup` ones (0 when there are none).
    pub warm_max: u64,
    /// How many samples were discarded for `warm_max`.
    pub warmup: u64,
    /// Samples below zero that were recorded as 0 (measurement clock skew).
    #[serde(default)]
    pub clamped_low: u64,
    /// Samples above the histogram range, recorded at its top.
    #[serde(default)]
    pub clamped_high: u64,
}

impl Summary {
    /// Why this summary cannot describe any set of samples, if it cannot: its percentiles out of
    /// order or outside [min, max] (a hand-edited or damaged result; irqlab writes them clamped
    /// into that range). `None` for an empty class.
    pub fn inconsistency(&self) -> Option<String> {
        if self.count == 0 {
            return None;
        }
        let seq = [("min", self.min), ("p50", self.p50), ("p90", self.p90), ("p99", self.p99), ("p99.9", self.p999), ("p99.99", self.p9999), ("max", self.max)];
        seq.windows(2).find(|w| w[0].1 > w[1].1).map(|w| format!("{} {} ns above {} {} ns", w[0].0, w[0].1, w[1].0, w[1].1))
    }
}

/// One interrupt class: summary plus the full histogram (base64 of the HDR V2+deflate encoding).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyClass {
    pub unit: String,
    pub summary: Summary,
    pub histogram: String,
}

impl LatencyClass {
    /// Decode the stored histogram. The text comes from a file, so nothing is trusted: the
    /// encoded size, the inflated size and the declared range are bounded before anything is
    /// allocated for them (see [`decode_histogram`]).
    pub fn histogram(&self, class: &str) -> Result<Histogram<u64>, ResultsError> {
        decode_histogram(&self.histogram).map_err(|source| ResultsError::Histogram { class: class.into(), source })
    }
}

/// Largest base64 text accepted for one histogram. irqlab's own histograms (1 ns … 100 s at 3
/// significant digits, every bucket used) encode well under this.
pub const MAX_HISTOGRAM_TEXT: usize = 4 << 20;
/// Largest inflated V2 encoding accepted: the 40-byte header plus at most 9 bytes (one varint) for
/// each of the ~28,700 counts of the widest histogram irqlab writes, with room to spare.
const MAX_V2_BYTES: u64 = 1 << 20;
/// HdrHistogram V2 cookies (`hdrhistogram::serialization`, "V2 encoding" in the HdrHistogram
/// specification): uncompressed and zlib-deflated.
const V2_COOKIE: u32 = 0x1c84_9303 | 0x10;
const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9304 | 0x10;
const V2_HEADER: usize = 40;

fn be_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn be_u64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_be_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// Decode base64 of an HDR V2 (optionally deflated) histogram defensively. The `hdrhistogram`
/// deserializer allocates whatever the header declares (a 4 GiB payload buffer, or counts for a
/// range up to `u64::MAX`), so the header is checked here first: the payload length must match
/// the bytes present and the range must lie within what irqlab records (lowest ≥ 1, highest ≤
/// [`HIST_HIGH_NS`], at most [`HIST_SIGFIG`] digits). Only then is the inflated V2 form decoded.
pub fn decode_histogram(text: &str) -> Result<Histogram<u64>, HistogramError> {
    use std::io::Read as _;
    if text.len() > MAX_HISTOGRAM_TEXT {
        return Err(HistogramError::TooLong(text.len()));
    }
    let bytes = base64::engine::general_purpose::STANDARD.decode(text)?;
    let truncated = || HistogramError::TruncatedHeader;
    let v2 = match be_u32(&bytes, 0).ok_or_else(truncated)? {
        V2_COOKIE => bytes,
        V2_COMPRESSED_COOKIE => {
            let len = be_u32(&bytes, 4).ok_or_else(truncated)? as usize;
            let deflated = bytes.get(8..).filter(|d| d.len() == len).ok_or_else(|| HistogramError::CompressedLength { declared: len, held: bytes.len().saturating_sub(8) })?;
            let mut out = Vec::new();
            flate2::read::ZlibDecoder::new(deflated).take(MAX_V2_BYTES + 1).read_to_end(&mut out).map_err(HistogramError::Deflate)?;
            if out.len() as u64 > MAX_V2_BYTES {
                return Err(HistogramError::InflatesTooLarge);
            }
            out
        }
        other => return Err(HistogramError::Cookie(other)),
    };
    if be_u32(&v2, 0) != Some(V2_COOKIE) {
        return Err(HistogramError::InflatedNotV2);
    }
    let payload = be_u32(&v2, 4).ok_or_else(truncated)? as usize;
    let digits = be_u32(&v2, 12).ok_or_else(truncated)?;
    let (low, high) = (be_u64(&v2, 16).ok_or_else(truncated)?, be_u64(&v2, 24).ok_or_else(truncated)?);
    if v2.len() < V2_HEADER || payload != v2.len() - V2_HEADER {
        return Err(HistogramError::PayloadLength { declared: payload, held: v2.len().saturating_sub(V2_HEADER) });
    }
    if low < 1 || high > HIST_HIGH_NS || low > high || digits > HIST_SIGFIG as u32 {
        return Err(HistogramError::Range { low, high, digits });
    }
    Deserializer::new().deserialize(&mut &v2[..]).map_err(|e| HistogramError::V2(format!("{e:?}")))
}

/// Why a stored histogram was refused; checked before anything is allocated for it.
#[derive(Debug, thiserror::Error)]
pub enum HistogramError {
    #[error("{0} characters of base64; at most {MAX_HISTOGRAM_TEXT} expected")]
    TooLong(usize),
    #[error("{0}")]
    Base64(#[from] base64::DecodeError),
    #[error("truncated header")]
    TruncatedHeader,
    #[error("declares {declared} compressed bytes, holds {held}")]
    CompressedLength { declared: usize, held: usize },
    #[error("deflate: {0}")]
    Deflate(std::io::Error),
    #[error("inflates to more than {MAX_V2_BYTES} bytes")]
    InflatesTooLarge,
    #[error("not an HdrHistogram V2 encoding (cookie {0:#010x})")]
    Cookie(u32),
    #[error("inflated data is not an HdrHistogram V2 encoding")]
    InflatedNotV2,
    #[error("declares a {declared}-byte payload, holds {held}")]
    PayloadLength { declared: usize, held: usize },
    #[error("range {low}..{high} at {digits} digits; expected within 1..{HIST_HIGH_NS} at most {HIST_SIGFIG} digits")]
    Range { low: u64, high: u64, digits: u32 },
    /// The header was sound; the hdrhistogram deserializer refused the counts (its error's Debug
    /// form, the only description that crate's error gives).
    #[error("{0}")]
    V2(String),
}

/// Collects latency samples of one class.
#[derive(Debug, Clone)]
pub struct LatencyRecorder {
    hist: Histogram<u64>,
    warmup: u64,
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
    warm_max: u64,
    clamped_low: u64,
    clamped_high: u64,
}

impl LatencyRecorder {
    /// `warmup`: number of initial samples excluded from `warm_max`.
    pub fn new(warmup: u64) -> Self {
        let hist = Histogram::new_with_bounds(1, HIST_HIGH_NS, HIST_SIGFIG).expect("constant histogram bounds are valid");
        LatencyRecorder { hist, warmup, count: 0, sum: 0, min: u64::MAX, max: 0, warm_max: 0, clamped_low: 0, clamped_high: 0 }
    }

    /// Record one latency in nanoseconds.
    pub fn record(&mut self, ns: u64) {
        let v = if ns > HIST_HIGH_NS {
            self.clamped_high += 1;
            HIST_HIGH_NS
        } else {
            ns
        };
        self.hist.saturating_record(v);
        if self.count >= self.warmup {
            self.warm_max = self.warm_max.max(v);
        }
        self.count += 1;
        self.sum += v as u128;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    /// Record `n` samples of one value (imported histograms: a bucket's value and its count).
    /// Warm max treats them as arriving after the warm-up.
    pub fn record_n(&mut self, ns: u64, n: u64) {
        if n == 0 {
            return;
        }
        let v = if ns > HIST_HIGH_NS {
            self.clamped_high += n;
            HIST_HIGH_NS
        } else {
            ns
        };
        self.hist.saturating_record_n(v, n);
        if self.count + n > self.warmup {
            self.warm_max = self.warm_max.max(v);
        }
        self.count += n;
        self.sum += v as u128 * n as u128;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    /// Record a signed latency (measurements can see arrival slightly before the deadline when
    /// clocks disagree); negative values are recorded as 0 and counted in `clamped_low`.
    pub fn record_signed(&mut self, ns: i64) {
        if ns < 0 {
            self.clamped_low += 1;
            self.record(0);
        } else {
            self.record(ns as u64);
        }
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// The summary computed so far.
    pub fn summary(&self) -> Summary {
        if self.count == 0 {
            return Summary { warmup: self.warmup, ..Default::default() };
        }
        let q = |p: f64| self.hist.value_at_quantile(p).clamp(self.min, self.max);
        Summary {
            count: self.count,
            min: self.min,
            mean: self.sum as f64 / self.count as f64,
            p50: q(0.50),
            p90: q(0.90),
            p99: q(0.99),
            p999: q(0.999),
            p9999: q(0.9999),
            max: self.max,
            warm_max: self.warm_max,
            warmup: self.warmup,
            clamped_low: self.clamped_low,
            clamped_high: self.clamped_high,
        }
    }

    /// Merge another recorder of the same class (e.g. per-vCPU recorders) into this one.
    /// Warm max is the larger of the two warm maxima.
    pub fn merge(&mut self, other: &LatencyRecorder) {
        self.hist.add(&other.hist).expect("same bounds");
        self.count += other.count;
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.warm_max = self.warm_max.max(other.warm_max);
        self.clamped_low += other.clamped_low;
        self.clamped_high += other.clamped_high;
    }

    /// Freeze into the serialisable form.
    pub fn finish(&self) -> LatencyClass {
        let mut buf = Vec::new();
        V2DeflateSerializer::new().serialize(&self.hist, &mut buf).expect("serialising into a Vec cannot fail");
        LatencyClass { unit: "ns".into(), summary: self.summary(), histogram: base64::engine::general_purpose::STANDARD.encode(buf) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_stats_and_warm_max() {
        let mut r = LatencyRecorder::new(2);
        for v in [7000, 6000, 100, 200, 300, 400] {
            r.record(v);
        }
        let s = r.summary();
        assert_eq!(s.count, 6);
        assert_eq!(s.min, 100);
        assert_eq!(s.max, 7000);
        assert_eq!(s.warm_max, 400, "first two samples are warm-up");
        assert!((s.mean - 14000.0 / 6.0).abs() < 1e-9);
    }

    #[test]
    fn percentiles_follow_distribution() {
        let mut r = LatencyRecorder::new(0);
        for v in 1..=10_000u64 {
            r.record(v);
        }
        let s = r.summary();
        // 0.1 % relative precision
        assert!((s.p50 as f64 - 5000.0).abs() <= 5.0, "p50 {}", s.p50);
        assert!((s.p99 as f64 - 9900.0).abs() <= 10.0, "p99 {}", s.p99);
        assert!(s.p9999 <= 10_000 && s.p9999 >= 9990);
    }

    #[test]
    fn ten_seconds_fits_and_huge_is_clamped() {
        let mut r = LatencyRecorder::new(0);
        r.record(10_000_000_000);
        r.record(u64::MAX);
        let s = r.summary();
        assert_eq!(s.clamped_high, 1);
        assert_eq!(s.max, HIST_HIGH_NS);
        assert_eq!(s.min, 10_000_000_000);
    }

    #[test]
    fn negative_is_clamped_and_counted() {
        let mut r = LatencyRecorder::new(0);
        r.record_signed(-5);
        r.record_signed(5);
        let s = r.summary();
        assert_eq!(s.clamped_low, 1);
        assert_eq!(s.min, 0);
    }

    #[test]
    fn histogram_round_trips() {
        let mut r = LatencyRecorder::new(0);
        for v in [1u64, 10, 100, 1000, 1_000_000] {
            r.record(v);
        }
        let class = r.finish();
        let h = class.histogram("timer").unwrap();
        assert_eq!(h.len(), 5);
        assert_eq!(h.max(), h.highest_equivalent(1_000_000));
    }

    #[test]
    fn merge_adds_counts() {
        let mut a = LatencyRecorder::new(1);
        let mut b = LatencyRecorder::new(1);
        a.record(10);
        a.record(20);
        b.record(5);
        b.record(50);
        a.merge(&b);
        let s = a.summary();
        assert_eq!((s.count, s.min, s.max, s.warm_max), (4, 5, 50, 50));
    }

    #[test]
    fn empty_summary_is_zero() {
        let r = LatencyRecorder::new(3);
        assert_eq!(r.summary().count, 0);
        assert_eq!(r.summary().warmup, 3);
    }
}
