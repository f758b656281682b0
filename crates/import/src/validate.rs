//! # validate — the one check every importer's numbers pass (issue 36)
//!
//! Each format's reader only finds the numbers; whether they can describe a set of samples is
//! decided here, once, for every format: values finite and within [`MAX_NS`], counts within
//! [`MAX_COUNT`] and summing to the stated count, min ≤ max, the mean within [min, max], no
//! histogram bucket outside the stated range, no key, column or header given twice, and JSON
//! read strictly (a repeated key or a second document is refused, never "last wins" or dropped;
//! fio's option objects excepted, where fio itself applies the later of a repeated option).
//!
//! A histogram that holds none of the samples (cyclictest `--json` without `-h`; every sample
//! above `-h N`) cannot carry a percentile: the class is then not written at all — its exact
//! count, min, mean and max become figures and a note says the percentiles were not measured,
//! why, and which flag of the tool fixes it. Before, every percentile was set to the minimum and
//! compared with full confidence.
use serde::de::{DeserializeSeed, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::{bad_at, count_sum, ImportError, MAX_NS};
use results::ConfigResult;
use results::{LatencyClass, LatencyRecorder};

/// What a tool prints exactly beside its buckets.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Exact {
    pub min: Option<u64>,
    pub max: Option<u64>,
    pub mean: Option<f64>,
    /// Samples above the tool's histogram (recorded at its top; their true values are unknown).
    pub overflow: u64,
    /// The resolution of the printed values in ns (1 µs for cyclictest's µs output): how far a
    /// printed mean or a bucket's value may lie from the exact range by rounding alone.
    pub resolution: u64,
    /// A bucket's width as a fraction of its value (fio's bins, 1/64), on top of `resolution`.
    pub relative_width: f64,
}

impl Exact {
    fn slack(&self, v: u64) -> u64 {
        self.resolution.max(1).saturating_add((v as f64 * self.relative_width) as u64)
    }
}

/// A class as read: percentiles from a histogram, or none (with the reason and the fix).
pub(crate) enum Checked {
    Class(LatencyClass),
    /// The summary holds; the histogram holds none of the samples.
    NoPercentiles {
        count: u64,
        min: u64,
        max: u64,
        mean: Option<f64>,
    },
}

/// A latency class from (value in ns, count) buckets — the last `exact.overflow` samples of which
/// are the tool's overflow, recorded at the histogram's top — checked against what the tool
/// states (`at` names the class in errors). Percentiles come from the buckets, clamped into
/// [min, max] only by the resolution the file rounds to; a file that contradicts itself is refused.
pub(crate) fn check_class(file: &str, at: &str, buckets: &[(u64, u64)], exact: Exact) -> Result<Checked, ImportError> {
    let count = count_sum(file, at, buckets.iter().map(|b| b.1))?;
    if let Some((v, _)) = buckets.iter().find(|b| b.0 > MAX_NS) {
        return Err(bad_at(file, at, "latencies below 13 days", format!("{v} ns")));
    }
    for (what, v) in [("min", exact.min), ("max", exact.max)] {
        if let Some(v) = v.filter(|v| *v > MAX_NS) {
            return Err(bad_at(file, &format!("{at} {what}"), "a latency below 13 days", format!("{v} ns")));
        }
    }
    if let (Some(lo), Some(hi)) = (exact.min, exact.max) {
        if lo > hi {
            return Err(bad_at(file, at, "min ≤ max", format!("min {lo} ns > max {hi} ns")));
        }
    }
    if let Some(m) = exact.mean {
        if !m.is_finite() || m < 0.0 {
            return Err(bad_at(file, &format!("{at} mean"), "a finite mean ≥ 0", format!("{m}")));
        }
        let r = exact.resolution as f64;
        if exact.min.is_some_and(|lo| m + r < lo as f64) || exact.max.is_some_and(|hi| m > hi as f64 + r) {
            let range = format!("[{}, {}] ns", exact.min.map_or("?".into(), |v| v.to_string()), exact.max.map_or("?".into(), |v| v.to_string()));
            return Err(bad_at(file, &format!("{at} mean"), format!("a mean within min and max {range}"), format!("{m} ns")));
        }
    }
    if count > 0 && exact.overflow > count {
        return Err(bad_at(file, at, format!("at most {count} samples above the histogram"), exact.overflow.to_string()));
    }
    let in_hist = count - exact.overflow;
    let measured = &buckets[..buckets.len() - usize::from(exact.overflow > 0).min(buckets.len())];
    for &(v, n) in measured.iter().filter(|b| b.1 > 0) {
        let w = exact.slack(v);
        if exact.max.is_some_and(|hi| v > hi.saturating_add(w)) {
            return Err(bad_at(file, at, format!("histogram buckets within the stated max {} ns", exact.max.unwrap_or(0)), format!("{n} sample(s) at {v} ns")));
        }
        if exact.min.is_some_and(|lo| v.saturating_add(w) < lo) {
            return Err(bad_at(file, at, format!("histogram buckets within the stated min {} ns", exact.min.unwrap_or(0)), format!("{n} sample(s) at {v} ns")));
        }
    }
    if count > 0 && in_hist == 0 {
        let (min, max) = (exact.min.unwrap_or(0), exact.max.unwrap_or(0));
        return Ok(Checked::NoPercentiles { count, min, max, mean: exact.mean });
    }
    let mut rec = LatencyRecorder::new(0);
    for &(v, n) in buckets {
        rec.record_n(v, n);
    }
    let mut class = rec.finish();
    let s = &mut class.summary;
    if let Some(v) = exact.min {
        s.min = v;
    }
    if let Some(v) = exact.max {
        s.max = v;
        // imported samples have no warm-up: warm max is the max
        s.warm_max = v;
    }
    if let Some(v) = exact.mean {
        s.mean = v;
    }
    if s.count > 0 && s.min > s.max {
        // One of min/max was stated and the buckets lie wholly on the wrong side of it.
        return Err(bad_at(file, at, "buckets within the stated min and max", format!("samples at {} ns with max {} ns", s.min, s.max)));
    }
    let (lo, hi) = (s.min, s.max);
    for p in [&mut s.p50, &mut s.p90, &mut s.p99, &mut s.p999, &mut s.p9999] {
        *p = (*p).clamp(lo, hi);
    }
    s.clamped_high += exact.overflow;
    Ok(Checked::Class(class))
}

/// [`check_class`] for callers that need a class (raw samples always carry percentiles).
pub(crate) fn class_from_buckets(file: &str, at: &str, buckets: &[(u64, u64)], exact: Exact) -> Result<LatencyClass, ImportError> {
    match check_class(file, at, buckets, exact)? {
        Checked::Class(c) => Ok(c),
        Checked::NoPercentiles { .. } => Err(bad_at(file, at, "samples in the histogram", "none")),
    }
}

/// Checks a class and puts it into `c` as `name`: the class, or — when the histogram holds none
/// of the samples — its summary as figures `NAME.count/min/mean/max` and a note saying the
/// percentiles were not measured, `why`, and `fix` (the tool's flag that records them).
#[allow(clippy::too_many_arguments)]
pub(crate) fn insert_class(c: &mut ConfigResult, file: &str, at: &str, name: &str, buckets: &[(u64, u64)], exact: Exact, why: &str, fix: &str) -> Result<(), ImportError> {
    match check_class(file, at, buckets, exact)? {
        Checked::Class(class) => {
            c.classes.insert(name.to_string(), class);
        }
        Checked::NoPercentiles { count, min, max, mean } => {
            c.set_figure(&format!("{name}.count"), count as f64, "samples");
            c.set_figure(&format!("{name}.min"), min as f64, "ns");
            if let Some(m) = mean {
                c.set_figure(&format!("{name}.mean"), m, "ns");
            }
            c.set_figure(&format!("{name}.max"), max as f64, "ns");
            c.notes.push(format!("class `{name}`: percentiles not measured — {why}; {fix}. Count, min, mean and max are the tool's, as figures `{name}.*`"));
        }
    }
    Ok(())
}

/// A float the tool printed: finite (NaN, ±inf and 1e400 are refused), ≥ 0 unless `signed`.
pub(crate) fn finite(file: &str, at: &str, v: f64, signed: bool) -> Result<f64, ImportError> {
    if v.is_finite() && (signed || v >= 0.0) {
        Ok(v)
    } else {
        Err(bad_at(file, at, if signed { "a finite number" } else { "a finite number ≥ 0" }, format!("{v}")))
    }
}

/// Refuses a name given twice among `names` (columns, keys, rows), naming the second.
pub(crate) fn unique<'a>(file: &str, at: &str, what: &str, names: impl IntoIterator<Item = &'a str>) -> Result<(), ImportError> {
    let mut seen = std::collections::BTreeSet::new();
    for n in names {
        if !seen.insert(n) {
            return Err(bad_at(file, at, format!("each {what} once"), format!("`{n}` twice")));
        }
    }
    Ok(())
}

/// One JSON document, read strictly: a key repeated in one object and anything but whitespace
/// after the document are refused with their line (serde_json keeps the last value of a repeated
/// key, and `from_str` of a stream would drop the rest silently).
pub(crate) fn strict_json(text: &str, file: &str, what: &str) -> Result<Value, ImportError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let v = StrictValue.deserialize(&mut de).map_err(|e| ImportError::line(file, e.line().max(1), format!("{what} (each key once)"), e.to_string()))?;
    if let Err(e) = de.end() {
        return Err(ImportError::line(file, e.line().max(1), format!("one {what} document and nothing after it"), "a second document or trailing text"));
    }
    Ok(v)
}

struct StrictValue;

impl<'de> DeserializeSeed<'de> for StrictValue {
    type Value = Value;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StrictValue {
    type Value = Value;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        serde_json::Number::from_f64(v).map(Value::Number).ok_or_else(|| E::custom(format!("a finite number, found {v}")))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Value, A::Error> {
        let mut v = Vec::new();
        while let Some(x) = a.next_element_seed(StrictValue)? {
            v.push(x);
        }
        Ok(Value::Array(v))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Value, A::Error> {
        let mut m = Map::new();
        while let Some(k) = a.next_key::<String>()? {
            if m.contains_key(&k) {
                return Err(A::Error::custom(format!("key `{}` given twice in one object", results::escape_control(&k))));
            }
            let v = if OPTION_OBJECTS.contains(&k.as_str()) { a.next_value_seed(OptionsValue)? } else { a.next_value_seed(StrictValue)? };
            m.insert(k, v);
        }
        Ok(Value::Object(m))
    }
}

/// fio's `job options` and `global options`: an option given twice on fio's command line or in
/// its job file appears twice, and fio applies options in order, so the later one is in effect
/// (issue 45: genuine fio JSON was refused as a repeated key). Only there does the later value win.
const OPTION_OBJECTS: [&str; 2] = ["job options", "global options"];

struct OptionsValue;

impl<'de> DeserializeSeed<'de> for OptionsValue {
    type Value = Value;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for OptionsValue {
    type Value = Value;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an object of options")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Value, A::Error> {
        let mut m = Map::new();
        while let Some(k) = a.next_key::<String>()? {
            let v = a.next_value_seed(StrictValue)?;
            m.insert(k, v);
        }
        Ok(Value::Object(m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_json_refuses_repeated_keys_and_second_documents() {
        let e = strict_json("{\"a\": 1,\n \"a\": 2}", "f", "x").unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("`a` given twice"), "{e}");
        let e = strict_json("{\"a\": 1}\n{\"b\": 2}\n", "f", "x").unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("one x document"), "{e}");
        assert_eq!(strict_json("{\"a\": [1, {\"b\": 2}]}\n\n", "f", "x").unwrap()["a"][1]["b"], 2);
    }

    #[test]
    fn a_mean_outside_min_max_and_a_bucket_beyond_max_are_refused() {
        let e = |exact| check_class("f", "c", &[(1000, 10)], exact).err().map(|e| e.to_string());
        let ok = Exact { min: Some(1000), max: Some(2000), mean: Some(1500.0), resolution: 1, ..Default::default() };
        assert!(e(ok).is_none());
        assert!(e(Exact { mean: Some(5000.0), ..ok }).unwrap().contains("within min and max"));
        let beyond = check_class("f", "c", &[(1000, 10), (9000, 1)], ok).err().unwrap().to_string();
        assert!(beyond.contains("within the stated max"), "{beyond}");
    }

    #[test]
    fn a_histogram_holding_no_sample_gives_no_percentile() {
        let exact = Exact { min: Some(3000), max: Some(90_000), mean: Some(5000.0), overflow: 100, resolution: 1000, ..Default::default() };
        match check_class("f", "c", &[(90_000, 100)], exact).unwrap() {
            Checked::NoPercentiles { count, min, max, .. } => assert_eq!((count, min, max), (100, 3000, 90_000)),
            Checked::Class(c) => panic!("percentiles made up: {:?}", c.summary),
        }
    }
}
