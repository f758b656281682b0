//! Two runs side by side with ratios (B / A).
use results::{compare, RunResult};

use crate::table::{format_value, render_grid};

pub fn compare_table(a: &RunResult, b: &RunResult, a_name: &str, b_name: &str) -> String {
    let rows = compare(a, b);
    let mut out = format!(
        "A = {a_name}: {} [{}]\nB = {b_name}: {} [{}]\n",
        a.meta.scenario,
        a.meta.kind.as_str(),
        b.meta.scenario,
        b.meta.kind.as_str()
    );
    if rows.is_empty() {
        out.push_str("no configuration appears in both runs (configurations are matched by name)\n");
        return out;
    }
    let grid: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.config.clone(),
                r.class.clone(),
                r.stat.to_string(),
                format_value(r.a),
                format_value(r.b),
                r.ratio().map(|x| format!("{x:.3}")).unwrap_or_else(|| "-".into()),
            ]
        })
        .collect();
    out.push_str(&render_grid(
        &["CONFIG".into(), "CLASS".into(), "STAT".into(), "A".into(), "B".into(), "B/A".into()],
        &grid,
        3,
    ));
    out
}
