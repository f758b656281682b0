//! The kept sample paths of a run (`irqlab sim --trace N --trace-at WHICH`) in the HTML report:
//! per configuration, each interrupt's segments in path order with when each started, how long
//! it took and a bar of its share, so a reader sees where *that* interrupt's time went (the
//! breakdown shows it on average).
use std::fmt::Write as _;

use results::{LatencyUnit, RunResult};

use crate::format::group;
use crate::svg::esc;

/// A segment's time: to the nanosecond (segments are often tens of ns).
fn fine(ns: f64, unit: LatencyUnit) -> String {
    let decimals = if unit.from_ns(1.0) < 1.0 { 3 } else { 0 };
    group(unit.from_ns(ns), decimals)
}

/// "Sample paths" HTML for a run, or `None` when it kept none.
pub fn sample_paths_html(r: &RunResult, unit: LatencyUnit) -> Option<(String, String)> {
    let with: Vec<_> = r.configs.iter().filter(|c| !c.traces.is_empty()).collect();
    if with.is_empty() {
        return None;
    }
    let how = with[0].trace_choice.as_ref().map(|c| format!("{}, {} per class", c.how, c.per_class)).unwrap_or_else(|| "first".into());
    let mut h = String::new();
    let u = unit.symbol();
    for c in with {
        let _ = write!(h, "<h3>{}</h3>", esc(&c.name));
        for t in &c.traces {
            let _ = write!(
                h,
                "<table class=\"path\"><caption>{} — total {} {u}</caption><tr><th>segment</th><th>starts at ({u})</th><th>takes ({u})</th><th>share</th></tr>",
                esc(&t.label),
                fine(t.total_ns, unit)
            );
            let mut at = 0.0;
            for (name, d) in &t.segments {
                let share = if t.total_ns > 0.0 { d / t.total_ns * 100.0 } else { 0.0 };
                let _ = write!(
                    h,
                    "<tr><td>{}</td><td class=\"num\">+{}</td><td class=\"num\">{}</td><td class=\"share\"><span class=\"barbox\"><span class=\"bar\" style=\"width:{:.1}%\"></span></span> {:.0}%</td></tr>",
                    esc(name),
                    fine(at, unit),
                    fine(*d, unit),
                    share,
                    share
                );
                at += d;
            }
            h.push_str("</table>");
        }
    }
    Some((format!("sample paths ({how})"), h))
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::{ConfigResult, ResultKind, RunMeta, SampleTrace, TraceChoice};

    #[test]
    fn each_kept_path_is_a_table_with_offsets_and_shares() {
        let mut r = RunResult::new(RunMeta::named("t", "s", 1, ResultKind::Predicted));
        assert!(sample_paths_html(&r, LatencyUnit::Us).is_none(), "nothing kept, no section");
        let mut c = ConfigResult::new("vwfi=<trap>");
        c.traces.push(SampleTrace { label: "timer #7".into(), start_ns: 100.0, total_ns: 4000.0, segments: vec![("exit".into(), 1000.0), ("schedule".into(), 3000.0)] });
        c.trace_choice = Some(TraceChoice { how: "slowest".into(), per_class: 1 });
        r.configs.push(c);
        let (title, h) = sample_paths_html(&r, LatencyUnit::Us).unwrap();
        assert_eq!(title, "sample paths (slowest, 1 per class)");
        assert!(h.contains("vwfi=&lt;trap&gt;"), "escaped");
        assert!(h.contains("timer #7 — total 4.000 µs"), "{h}");
        // schedule starts after exit (1 µs in) and is 75% of the path.
        assert!(h.contains("<td>schedule</td><td class=\"num\">+1.000</td><td class=\"num\">3.000</td>"), "{h}");
        assert!(h.contains("width:75.0%"), "{h}");
    }
}
