//! The path census (results::census) for people: per class, the instructions per path by
//! exception level, the top functions and the GIC/timer registers touched, as a terminal table
//! and as HTML with a bar per function; and B − A between two runs, the largest changes first.
//! Counts are exact emulation counts: a difference is "changed by N", never an interval.
use std::fmt::Write as _;

use results::census::{diff, verdict, Census, PathCensus};
use results::{ConfigResult, RunResult};

use crate::format::thousands;

/// How many functions a table shows per class.
pub const TOP: usize = 12;

fn per_path(n: u64, p: &PathCensus) -> f64 {
    n as f64 / p.paths.max(1) as f64
}

fn el_line(p: &PathCensus) -> String {
    p.by_el.iter().filter(|(_, n)| **n > 0).map(|(el, n)| format!("{el} {:.1}", per_path(*n, p))).collect::<Vec<_>>().join(", ")
}

/// The census of one configuration as text (None without one).
pub fn census_text(name: &str, c: &ConfigResult, top: usize) -> Option<String> {
    let census = c.census.as_ref()?;
    let mut s = format!("path census of {name} ({})\n", census.method);
    for (class, p) in &census.classes {
        let spread = if p.insns.min == p.insns.max { "every path the same".to_string() } else { format!("min {} max {}", p.insns.min, p.insns.max) };
        let _ = writeln!(s, "  {class}: {} paths, {} instructions per path ({spread}); by level per path: {}", p.paths, p.insns.median, el_line(p));
        for f in p.functions.iter().take(top) {
            let _ = writeln!(s, "    {:>10.1}  {} {}:{}", per_path(f.insns, p), f.el, f.side, f.name);
        }
        let regs: Vec<String> = p.gic.iter().take(top).map(|g| format!("{} {} {:.1}", g.register, g.rw, per_path(g.count, p))).collect();
        if !regs.is_empty() {
            let _ = writeln!(s, "    registers per path: {}", regs.join(", "));
        }
        let exc: Vec<String> = p.exceptions.iter().map(|(k, n)| format!("{k} {:.1}", per_path(*n, p))).collect();
        if !exc.is_empty() {
            let _ = writeln!(s, "    exceptions per path: {}", exc.join(", "));
        }
    }
    for n in &census.notes {
        let _ = writeln!(s, "  note: {n}");
    }
    Some(s)
}

/// Pairs of (label, census A, census B): configurations of the same name, or the only
/// configuration of each run (as `irqlab compare` pairs them).
fn pairs<'a>(a: &'a RunResult, b: &'a RunResult) -> Vec<(String, &'a Census, &'a Census)> {
    let by_name: Vec<_> =
        a.configs.iter().filter_map(|ca| Some((ca.name.clone(), ca.census.as_ref()?, b.configs.iter().find(|cb| cb.name == ca.name)?.census.as_ref()?))).collect();
    match (&a.configs[..], &b.configs[..]) {
        ([ca], [cb]) if by_name.is_empty() => match (&ca.census, &cb.census) {
            (Some(x), Some(y)) => vec![(format!("{} | {}", ca.name, cb.name), x, y)],
            _ => vec![],
        },
        _ => by_name,
    }
}

/// B − A per configuration and class, the `top` largest changes per class (None when neither
/// run has a census of the same configuration).
pub fn census_compare_text(a: &RunResult, b: &RunResult, top: usize) -> Option<String> {
    let p = pairs(a, b);
    if p.is_empty() {
        return None;
    }
    let mut s = String::from("path census, B − A (exact emulation counts; per path):\n");
    for (name, ca, cb) in p {
        let classes: std::collections::BTreeSet<&String> = ca.classes.keys().chain(cb.classes.keys()).collect();
        let d = diff(ca, cb);
        for class in classes {
            let _ = writeln!(s, "  {name}: {class}: {}", verdict(ca, cb, class));
            for x in d.iter().filter(|x| &x.class == class && x.item != "insns/path").take(top) {
                let f = |v: Option<f64>| v.map(|v| format!("{v:.1}")).unwrap_or_else(|| "—".into());
                let _ = writeln!(s, "    {:>+10.1}  {}  ({} → {})", x.change(), x.item, f(x.a), f(x.b));
            }
        }
    }
    Some(s)
}

/// The same as JSON: per configuration, per class, the verdict and every changed item.
pub fn census_compare_json(a: &RunResult, b: &RunResult) -> Option<serde_json::Value> {
    let p = pairs(a, b);
    if p.is_empty() {
        return None;
    }
    let v: Vec<serde_json::Value> = p
        .into_iter()
        .map(|(name, ca, cb)| {
            let classes: std::collections::BTreeSet<&String> = ca.classes.keys().chain(cb.classes.keys()).collect();
            let verdicts: serde_json::Map<String, serde_json::Value> = classes.into_iter().map(|c| (c.clone(), serde_json::Value::String(verdict(ca, cb, c)))).collect();
            serde_json::json!({"config": name, "verdicts": verdicts, "changes": diff(ca, cb)})
        })
        .collect();
    Some(serde_json::Value::Array(v))
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// HTML: per configuration with a census, per class, a bar per top function (hypervisor and
/// guest sides told apart by colour), then the registers. None when no configuration has one.
pub fn census_html(r: &RunResult, top: usize) -> Option<(String, String)> {
    let mut h = String::new();
    for c in &r.configs {
        let Some(census) = &c.census else { continue };
        let _ = write!(h, "<h4>{}</h4><p class=\"caption\">{}</p>", esc(&c.name), esc(&census.method));
        for (class, p) in &census.classes {
            let _ = write!(h, "<h5>{} — {} paths, {} instructions per path ({})</h5>", esc(class), p.paths, thousands(p.insns.median as u64), esc(&el_line(p)));
            let max = p.functions.first().map(|f| per_path(f.insns, p)).unwrap_or(1.0).max(1.0);
            h.push_str("<table><tr><th>function</th><th>side</th><th>instructions per path</th><th></th></tr>");
            for f in p.functions.iter().take(top) {
                let v = per_path(f.insns, p);
                let colour = if f.side == "guest" { "#c77" } else { "#58a" };
                let _ = write!(
                    h,
                    "<tr><td><code>{}</code></td><td>{} {}</td><td class=\"num\">{v:.1}</td><td><svg width=\"{w}\" height=\"10\" role=\"img\"><rect width=\"{w}\" height=\"10\" fill=\"{colour}\"/></svg></td></tr>",
                    esc(&f.name),
                    esc(&f.side),
                    esc(&f.el),
                    w = (v / max * 300.0).round().max(1.0)
                );
            }
            h.push_str("</table>");
            if !p.gic.is_empty() {
                let regs: Vec<String> = p.gic.iter().take(top).map(|g| format!("<code>{}</code> {} {:.1}", esc(&g.register), g.rw, per_path(g.count, p))).collect();
                let _ = write!(h, "<p>GIC and timer registers per path: {}</p>", regs.join(", "));
            }
        }
        for n in &census.notes {
            let _ = write!(h, "<p class=\"caption\">{}</p>", esc(n));
        }
    }
    (!h.is_empty()).then(|| ("path census (emulation instruction counts)".to_string(), h))
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::census::{FunctionCount, Spread};

    fn run(per: u64, extra: u64) -> RunResult {
        let p = PathCensus {
            paths: 2,
            insns: Spread { median: per as f64, min: per, max: per },
            by_el: [("EL2".to_string(), 2 * per)].into(),
            functions: vec![
                FunctionCount { side: "hyp".into(), name: "csched2_schedule".into(), el: "EL2".into(), insns: 2 * (per - 10 - extra) },
                FunctionCount { side: "hyp".into(), name: "vgic_inject_irq".into(), el: "EL2".into(), insns: 2 * (10 + extra) },
            ],
            ..Default::default()
        };
        let mut c = ConfigResult::new("vwfi=trap");
        c.census = Some(Census { method: "test".into(), classes: [("timer".to_string(), p)].into(), ..Default::default() });
        let mut r = RunResult::new(results::RunMeta::named("t", "s", 1, results::ResultKind::Measured));
        r.configs = vec![c];
        r
    }

    #[test]
    fn text_and_html_show_functions_per_path() {
        let r = run(100, 0);
        let t = census_text("vwfi=trap", &r.configs[0], TOP).unwrap();
        assert!(t.contains("timer: 2 paths, 100 instructions per path (every path the same); by level per path: EL2 100.0"), "{t}");
        assert!(t.contains("90.0  EL2 hyp:csched2_schedule"), "{t}");
        let (_, h) = census_html(&r, TOP).unwrap();
        assert!(h.contains("<code>csched2_schedule</code>") && h.contains("width=\"300\""), "the top function has the full bar: {h}");
        assert!(census_html(&RunResult::new(results::RunMeta::named("t", "s", 1, results::ResultKind::Measured)), TOP).is_none());
    }

    #[test]
    fn compare_names_where_b_differs() {
        let t = census_compare_text(&run(100, 0), &run(112, 12), TOP).unwrap();
        assert!(t.contains("vwfi=trap: timer: changed by +12 instructions per path (100 → 112)"), "{t}");
        assert!(t.contains("+12.0  fn hyp:vgic_inject_irq  (10.0 → 22.0)"), "{t}");
        assert!(!t.contains("csched2_schedule"), "an unchanged function is not listed: {t}");
        let same = census_compare_text(&run(100, 0), &run(100, 0), TOP).unwrap();
        assert!(same.contains("timer: identical"), "{same}");
        let j = census_compare_json(&run(100, 0), &run(112, 12)).unwrap();
        assert_eq!(j[0]["verdicts"]["timer"], "changed by +12 instructions per path (100 → 112)");
    }
}
