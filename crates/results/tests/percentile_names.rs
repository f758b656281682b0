//! One name per percentile: the JSON summary says `p99.9` / `p99.99` as the tables and the CSV do,
//! and files written with the old names (`p999`, `p9999`) still read.
use results::LatencyRecorder;

fn summary_json() -> serde_json::Value {
    let mut r = LatencyRecorder::new(0);
    for ns in 1..=10_000u64 {
        r.record(ns * 10);
    }
    serde_json::to_value(r.summary()).unwrap()
}

#[test]
fn json_summary_uses_the_table_names() {
    let v = summary_json();
    let o = v.as_object().unwrap();
    assert!(o.contains_key("p99.9") && o.contains_key("p99.99"), "{o:?}");
    assert!(!o.contains_key("p999") && !o.contains_key("p9999"));
    assert!(o["p99.9"].as_u64().unwrap() > o["p99"].as_u64().unwrap());
}

#[test]
fn old_names_still_read() {
    let mut v = summary_json();
    let o = v.as_object_mut().unwrap();
    let (a, b) = (o.remove("p99.9").unwrap(), o.remove("p99.99").unwrap());
    o.insert("p999".into(), a.clone());
    o.insert("p9999".into(), b.clone());
    let s: results::Summary = serde_json::from_value(v).unwrap();
    assert_eq!(s.p999, a.as_u64().unwrap());
    assert_eq!(s.p9999, b.as_u64().unwrap());
}
